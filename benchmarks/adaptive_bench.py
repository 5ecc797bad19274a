"""Adaptive evaluation (`run --adaptive`) on the real solve matrices, whole model families held out.

1. Offline, every family held out in turn (../shared/realdata/irt_matrices: 10 families each,
   checkpoints and seeds of one configuration together): the bank calibrated on the other 9 as
   `analyze calibrate` does (its likelihood weights and interval scales chosen by leaving each of
   those 9 out in turn; the held-out family plays no part), each held-out model tested with its
   own row as its answers. MAE of the estimated full-set accuracy
   as a ratio to random 100-item subsets (exact expectation per model) beside random K, the fixed
   `tiny` subset (`analyze subset` + `analyze estimate`, 100 items) and the adaptive run at
   K = 25, 50, 100, 200; 90% interval coverage; the most items any model was asked. Beside it
   (`--ceiling`) what the estimator could reach at K = 100 if item parameters carried over
   perfectly: the 2PL fitted on every model, the held-out family's own answers included, and the
   likelihood weight picked with hindsight.
2. Live through the runner (`run_adaptive`: sender, cache, logs) against a local server answering
   as held-out models' rows, on one matrix (`--live-models` models, two of each family in turn,
   each family's bank calibrated without it, K = 100): the same figures from what the runner logged.
3. Latency: `--latency-models` models × K = 100 against a server with 100 ms per request, batch
   b = 1 and b = 5: wall time against the floor (100 / b round trips × 0.1 s), median of `--repeats`.

    PYTHONPATH=. python benchmarks/adaptive_bench.py [--matrices arc-challenge,commonsenseqa,quail] [--live-models 20]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from filtering.irt.adaptive import AdaptiveTest, simulate
from filtering.irt.bank import calibrate, random_subset_mae
from filtering.irt.families import family_folds, model_families
from filtering.irt.responses import Responses, read_matrix_file
from filtering.irt.subset import estimate, make_subset, subset_answers
from filtering.irt.twopl import fit_2pl

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "irt_matrices"
KS = (25, 50, 100, 200)
ANCHORS = "issue's anchors (random 100 = 1): tinyBenchmarks anchor points 1.12×, plain 2PL 0.77–0.79×, target ≤ 0.65×"


@contextmanager
def _server_process(delay: float) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "tests.fault_server", "--port", str(port), "--latency",
                                str(delay)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait()


def _import(ws, records: list[dict]) -> None:  # noqa: ANN001
    from curation.importers import import_file

    path = ws.root / "pool.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    import_file(path, ws.store, blobs=ws.blobs)


def offline(responses: Responses) -> dict:
    """Each family held out in turn: the bank calibrated on the other nine as `analyze calibrate`
    does (its likelihood weight and interval scale chosen by its own leave-one-family-out over those
    nine), each held-out model tested with its own row as its answers."""
    y = responses.correct
    truth = np.nanmean(y, axis=1)
    n_models = len(responses.models)
    adaptive = {k: np.zeros(n_models) for k in KS}
    covered = {k: np.zeros(n_models, dtype=bool) for k in KS}
    asked = np.zeros(n_models, dtype=int)
    tiny, tiny_cov = np.zeros(n_models), np.zeros(n_models, dtype=bool)
    chosen = []
    for fold in family_folds(responses.models):
        train = responses.take(models=np.setdiff1d(np.arange(n_models), fold))
        bank = calibrate(train, validate_k=100)
        chosen.append(bank.schedule)
        found = simulate(bank.test(list(responses.items)), y[fold], max(KS), [responses.models[r] for r in fold],
                         checkpoints=KS)
        for row, estimates in zip(fold, found, strict=True):
            for k in KS:
                adaptive[k][row] = estimates[k].accuracy
                covered[k][row] = estimates[k].low <= truth[row] <= estimates[k].high
            asked[row] = estimates[max(KS)].asked
        spec = make_subset(train, 100, seed=0)
        rows = estimate(spec, subset_answers(spec, responses.take(models=np.array(fold)))[0])
        for row, found_row in zip(fold, rows, strict=True):
            tiny[row], tiny_cov[row] = found_row.accuracy, found_row.low <= truth[row] <= found_row.high
    random = {k: np.array([random_subset_mae(y[m][~np.isnan(y[m])], k) for m in range(n_models)]) for k in KS}
    return {"truth": truth, "adaptive": adaptive, "covered": covered, "asked": asked, "tiny": tiny,
            "tiny_covered": tiny_cov, "random": random, "chosen": chosen}


CEILING_WEIGHTS = (0.04, 0.07, 0.1, 0.15, 0.25, 0.4)
CEILING_REPEATS = 4


def errors_by_weight(responses: Responses, make_test: Callable[[np.ndarray], AdaptiveTest],
                     weights: Sequence[float] = CEILING_WEIGHTS, repeats: int = CEILING_REPEATS,
                     k: int = 100) -> dict[float, np.ndarray]:
    """Per likelihood weight, each model's mean |error| over `repeats` adaptive tests of k items
    (different draws), its family held out: `make_test(train rows)` makes the test."""
    y = responses.correct
    truth = np.nanmean(y, axis=1)
    errors = {w: np.zeros(len(y)) for w in weights}
    for fold in family_folds(responses.models):
        test = make_test(np.setdiff1d(np.arange(len(y)), fold))
        rows = np.repeat(fold, len(weights) * repeats)
        row_weights = np.tile(weights, len(fold) * repeats)
        seeds = [f"{responses.models[row]}#{n}" for n, row in enumerate(rows)]
        found = simulate(test, y[rows], k, seeds, weights=row_weights)
        for row, weight, estimates in zip(rows, row_weights, found, strict=True):
            errors[weight][row] += abs(estimates[k].accuracy - truth[row]) / repeats
    return errors


def random100_mae(responses: Responses) -> float:
    y = responses.correct
    return float(np.mean([random_subset_mae(row[~np.isnan(row)], 100) for row in y]))


def ceiling(responses: Responses) -> dict[float, float]:
    """Per likelihood weight: MAE at K = 100 as a ratio to random 100 when the bank is fitted on
    every model (held-out family included, its abilities left out of the prior)."""
    y = responses.correct
    fit = fit_2pl(np.nan_to_num(y), (~np.isnan(y)).astype(float))
    errors = errors_by_weight(responses, lambda train: AdaptiveTest(responses.items, fit.a, fit.b, fit.theta[train]))
    random100 = random100_mae(responses)
    return {w: float(e.mean() / random100) for w, e in errors.items()}


def table(name: str, found: dict) -> list[float]:
    truth, random100 = found["truth"], found["random"][100].mean()
    print(f"\n{name}: {len(truth)} models, 10 families each held out in turn; MAE ratio to random 100 items "
          f"(MAE {random100:.4f})")
    print("| method | K | MAE | ratio to random 100 | ratio to random K | 90% coverage |")
    print("|---|---:|---:|---:|---:|---:|")
    for k in KS:
        mae = found["random"][k].mean()
        print(f"| random | {k} | {mae:.4f} | {mae / random100:.2f} | 1.00 | — |")
    tiny_mae = np.abs(found["tiny"] - truth).mean()
    print(f"| fixed tiny (stratified, `analyze estimate`) | 100 | {tiny_mae:.4f} | {tiny_mae / random100:.2f} | "
          f"{tiny_mae / random100:.2f} | {found['tiny_covered'].mean():.2f} |")
    ratios = []
    for k in KS:
        mae = np.abs(found["adaptive"][k] - truth).mean()
        ratios.append(mae / random100)
        print(f"| adaptive (b = 1) | {k} | {mae:.4f} | {mae / random100:.2f} | {mae / found['random'][k].mean():.2f} | "
              f"{found['covered'][k].mean():.2f} |")
    print(f"most items asked of any model at K = {max(KS)}: {found['asked'].max()}")
    print("likelihood weight / interval scale each fold's calibration chose (K ≤ 25, 50, 100, 200): "
          + "; ".join(" ".join(f"{s.likelihood_weight:g}/{s.interval_scale:.2f}" for s in schedule)
                      for schedule in found["chosen"]))
    return ratios


def live(responses: Responses, n_models: int, k: int = 100) -> None:
    """Held-out models through the runner against a server answering their rows (first families in turn)."""
    from curation.core.workspace import init_workspace
    from evaluation.adaptive_run import PLAN_MAKERS, AdaptiveSettings, run_adaptive
    from evaluation.models import resolve_model
    from evaluation.runner import RunRequest
    from filtering.irt.adaptive_plan import open_plan
    from filtering.irt.bank import calibrate, write_bank
    from tests.fault_server import ServerConfig, ServerThread

    if not PLAN_MAKERS:
        PLAN_MAKERS.append(open_plan)
    families = model_families(responses.models)
    folds = family_folds(responses.models)
    chosen = [row for fold in folds for row in fold[:2]][:n_models]  # two models of each family, families in turn
    truth = np.nanmean(responses.correct, axis=1)
    errors, covered, asked = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        ws = init_workspace(Path(folder) / "ws")
        records = [{"id": item, "source": {"exam": "matrix", "session": "1", "subject": "s", "number": j + 1},
                    "stem": f"Question {item}: which option?", "options": [{"text": f"{o} of {item}"} for o in range(4)],
                    "answer": j % 4 + 1} for j, item in enumerate(responses.items)]
        _import(ws, records)
        keys = {r["id"]: r["answer"] for r in records}
        hashes = ws.store.hashes()
        rows = {m: dict(zip(responses.items, responses.correct[i], strict=True)) for i, m in enumerate(responses.models)}

        def respond(prompt: str, body: dict) -> str:
            item = prompt.split("Question ", 1)[1].split(":", 1)[0]
            right = rows[body["model"]][item] == 1
            return json.dumps({"정답": keys[item] if right else keys[item] % 4 + 1})

        with ServerThread(ServerConfig(responder=respond)) as server:
            for family in dict.fromkeys(families[row] for row in chosen):
                train = responses.take(models=np.flatnonzero([f != family for f in families]))
                train.hashes = {i: hashes[i] for i in train.items}
                bank_path = write_bank(calibrate(train, validate_k=k), Path(folder) / f"{family}.json")
                rows_here = [row for row in chosen if families[row] == family]
                requests = [RunRequest(resolve_model(f"openai-compatible:{responses.models[row]}@{server.url}/v1"))
                            for row in rows_here]
                results, failed = run_adaptive(ws, requests, AdaptiveSettings(k, bank_path))
                assert not failed, failed
                for row, result in zip(rows_here, results, strict=True):
                    errors.append(abs(result.estimate["accuracy"] - truth[row]))
                    covered.append(result.estimate["low"] <= truth[row] <= result.estimate["high"])
                    asked.append(result.asked)
    random100 = np.mean([random_subset_mae(responses.correct[row], 100) for row in chosen])
    print(f"live through the runner, {len(chosen)} held-out models × K = {k}: MAE {np.mean(errors):.4f} "
          f"({np.mean(errors) / random100:.2f}× random 100 on these models), 90% coverage {np.mean(covered):.2f}, "
          f"most asked {max(asked)}")


def latency(n_models: int, repeats: int, batch: int, k: int = 100, delay: float = 0.1) -> None:
    """n models × k items of a generated bank against a server with `delay` s per request."""
    from curation.core.workspace import init_workspace
    from evaluation.adaptive_run import PLAN_MAKERS, AdaptiveSettings, run_adaptive
    from evaluation.models import resolve_model
    from evaluation.runner import RunRequest
    from filtering.irt.adaptive_plan import open_plan
    from filtering.irt.bank import calibrate, write_bank
    from filtering.irt.twopl import probability

    if not PLAN_MAKERS:
        PLAN_MAKERS.append(open_plan)
    rng = np.random.default_rng(0)
    items = 400
    theta, a, b = rng.normal(0, 1, 30), rng.uniform(0.5, 2, items), rng.normal(0, 1, items)
    y = (rng.random((30, items)) < probability(theta, a, b)).astype(float)
    ids = [f"i{j:04d}" for j in range(items)]
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as folder:
            ws = init_workspace(Path(folder) / "ws")
            _import(ws, [{"id": i, "source": {"exam": "gen", "session": "1", "subject": "s", "number": j + 1},
                                 "stem": f"Question {i}: which?", "options": [{"text": f"{o}"} for o in range(4)],
                                 "answer": 1} for j, i in enumerate(ids)])
            responses = Responses(ids, [f"c{m}" for m in range(30)], y, hashes=ws.store.hashes())
            bank = write_bank(calibrate(responses, validate_k=0), Path(folder) / "bank.json")
            with _server_process(delay) as url:  # its own process: the server's work does not hold this one's GIL
                requests = [RunRequest(resolve_model(f"openai-compatible:m{m}@{url}/v1"), use_cache=False)
                            for m in range(n_models)]
                start = time.perf_counter()
                results, failed = run_adaptive(ws, requests, AdaptiveSettings(k, bank, batch=batch))
                times.append(time.perf_counter() - start)
                assert not failed and all(r.asked == k for r in results)
    floor = -(-k // batch) * delay
    median = statistics.median(times)
    print(f"latency: {n_models} models × {k} items, batch b = {batch}, {delay * 1000:.0f} ms per request: median "
          f"{median:.2f} s of {repeats} runs, floor {floor:.1f} s ({k // batch} round trips), ratio {median / floor:.2f} "
          f"(target ≤ 1.3)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matrices", default="arc-challenge,commonsenseqa,quail")
    parser.add_argument("--live-models", type=int, default=20, help="0: skip the live run")
    parser.add_argument("--live-matrix", default="commonsenseqa")
    parser.add_argument("--latency-models", type=int, default=20, help="0: skip the latency run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ceiling", action="store_true", help="also the K = 100 ceiling with in-sample item parameters")
    args = parser.parse_args()
    if not REALDATA.is_dir():
        print("../shared/realdata/irt_matrices not present: the matrix parts are skipped")
    else:
        every = []
        for name in args.matrices.split(","):
            responses = read_matrix_file(REALDATA / f"{name}.csv")
            every.append(table(name, offline(responses)))
            if args.ceiling:
                by_weight = ceiling(responses)
                best = min(by_weight, key=by_weight.__getitem__)
                print(f"ceiling at K = 100 (2PL fitted with the held-out family's answers, weight with hindsight): "
                      f"{by_weight[best]:.2f}× random 100 at weight {best:g} ("
                      + ", ".join(f"{w:g}: {r:.2f}" for w, r in by_weight.items()) + ")")
        print("\nadaptive MAE ratio to random 100, mean of the matrices: "
              + ", ".join(f"K={k} {np.mean([r[i] for r in every]):.2f}" for i, k in enumerate(KS)) + f"; {ANCHORS}")
        if args.live_models:
            live(read_matrix_file(REALDATA / f"{args.live_matrix}.csv"), args.live_models)
    if args.latency_models:
        for batch in (1, 5):
            latency(args.latency_models, args.repeats, batch)


if __name__ == "__main__":
    main()
