"""Adaptive evaluation: model families, recovery on generated 2PL data, and `benchsmith run
--adaptive` live through the runner against a local server that answers as a held-out model's row
of a real solve matrix (the bank calibrated without that model's family), with kill and resume, a
model answering everything right or wrong, and bank items edited after calibration. Every figure
asserted is computed here from the data the test generated or read."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from filtering.irt.adaptive import AdaptiveTest, Setting, simulate
from filtering.irt.bank import random_subset_mae
from filtering.irt.families import family_folds, model_families
from filtering.irt.tuning import conformal_scale
from filtering.irt.twopl import fit_2pl, probability
from tests.conftest import run_cli


def test_seeds_and_checkpoints_of_one_configuration_are_one_family():
    models = ["roberta-base-10M-1_50", "roberta-base-10M-2_best", "roberta-base-10M-3_1", "roberta-base_1",
              "openai-compatible:roberta-base_best", "albert-xxlarge-v2_10", "gpt-4", "gpt-3", "lone-model-2"]
    assert model_families(models) == ["roberta-base-10M"] * 3 + ["roberta-base"] * 2 + [
        "albert-xxlarge-v2", "gpt-4", "gpt-3", "lone-model-2"]
    assert family_folds(models) == [[0, 1, 2], [3, 4], [5], [6], [7], [8]]


@pytest.mark.realdata
def test_real_matrices_have_ten_families_of_whole_configurations(realdata):
    from filtering.irt.responses import read_matrix_file

    for name in ("arc-challenge", "commonsenseqa", "quail"):
        models = read_matrix_file(realdata / "irt_matrices" / f"{name}.csv").models
        families = model_families(models)
        assert len(set(families)) == 10
        # no model's sibling seed is in another family
        for model, family in zip(models, families, strict=True):
            run = model.rsplit("_", 1)[0]
            assert run == family or (run.startswith(family + "-") and run[len(family) + 1:].isdigit())


def test_recovery_on_generated_2pl_error_falls_with_k_and_beats_random():
    rng = np.random.default_rng(3)
    models, items = 70, 800
    theta, a, b = rng.normal(0, 1, models), rng.uniform(0.5, 2.5, items), rng.normal(0, 1, items)
    y = (rng.random((models, items)) < probability(theta, a, b)).astype(float)
    train, held = np.arange(50), np.arange(50, models)
    fit = fit_2pl(y[train], np.ones_like(y[train]))
    test = AdaptiveTest([f"q{j}" for j in range(items)], fit.a, fit.b, fit.theta)
    ks = (25, 50, 100, 200)
    errors = {k: [] for k in ks}
    covered = []
    for m, found in zip(held, simulate(test, y[held], max(ks), [f"m{m}" for m in held], checkpoints=ks), strict=True):
        truth = y[m].mean()
        for k in ks:
            errors[k].append(abs(found[k].accuracy - truth))
            assert found[k].asked == k
        covered.append(found[100].low <= truth <= found[100].high)
    ours = [float(np.mean(errors[k])) for k in ks]
    random = [float(np.mean([random_subset_mae(y[m], k) for m in held])) for k in ks]
    assert ours == sorted(ours, reverse=True), ours
    assert all(o < r for o, r in zip(ours, random, strict=True)), (ours, random)
    assert np.mean(covered) >= 0.8, covered


def test_simulation_draws_what_a_live_run_would_draw():
    """`simulate` (models side by side, as the bank's cross-validation and the benchmark use it) asks
    each model what `next_items` asks it one step at a time, and ends at the same estimate."""
    rng = np.random.default_rng(5)
    items = 150
    a, b = rng.uniform(0.5, 2, items), rng.normal(0, 1, items)
    rows = (rng.random((3, items)) < probability(np.array([-1.0, 0.2, 1.5]), a, b)).astype(float)
    rows[1, :10] = np.nan  # asked, no determined answer
    facets = ["physics", "chemistry", "biology"] * (items // 3)
    schedule = [Setting(10, 0.5, 1.0), Setting(20, 0.3, 0.8)]  # the weight changes on the way
    test = AdaptiveTest([f"q{j}" for j in range(items)], a, b, rng.normal(0, 1, 30), facets, schedule)
    seeds = ["m0", "m1", "m2"]
    for batch in (1, 4):
        found = simulate(test, rows, 30, seeds, batch)
        for row, seed, estimates in zip(rows, seeds, found, strict=True):
            answers: list[tuple[int, float | None]] = []
            while len(answers) < 30:
                picked = test.next_items(answers, min(batch, 30 - len(answers)), seed)
                answers += [(j, None if np.isnan(row[j]) else float(row[j])) for j in picked]
            assert test.estimate(answers) == estimates[30]


def test_a_draw_by_blocks_is_the_inverse_of_the_whole_running_sum():
    """The draw searches block sums, then one block: the item it finds is the one the whole running
    sum finds, with asked items (q = 0) anywhere, a whole block of them included."""
    from filtering.irt.adaptive import DRAW_BLOCK, _inverse_running_sum

    rng = np.random.default_rng(11)
    for size in (7, DRAW_BLOCK, 3 * DRAW_BLOCK + 5):
        q = rng.random(size) ** 4
        q[rng.random(size) < 0.3] = 0.0
        q[DRAW_BLOCK:2 * DRAW_BLOCK] = 0.0
        running = np.cumsum(q)
        for u in rng.random(200):
            expected = min(int((running <= u * running[-1]).sum()), size - 1)
            found = _inverse_running_sum(q, float(u))
            assert found == expected and q[found] > 0


def test_a_large_bank_is_tuned_on_a_sample_of_its_items_that_does_not_depend_on_their_order(monkeypatch):
    from filtering.irt import bank as bank_module
    from filtering.irt.responses import Responses

    rng = np.random.default_rng(3)
    models = [f"fam{f}-base-{s}" for f in "abc" for s in (1, 2)]
    items = [f"q{j}" for j in range(240)]
    theta, a, b = rng.normal(0, 1, len(models)), rng.uniform(0.5, 2, len(items)), rng.normal(0, 1, len(items))
    y = (rng.random((len(models), len(items))) < probability(theta, a, b)).astype(float)
    monkeypatch.setattr(bank_module, "TUNING_ITEMS", 90)
    tuned: list[list[str]] = []
    real_leave_families_out = bank_module.leave_families_out
    monkeypatch.setattr(bank_module, "leave_families_out",
                        lambda responses, *args, **kw: tuned.append(responses.items) or
                        real_leave_families_out(responses, *args, **kw))
    bank = bank_module.calibrate(Responses(items, models, y), validate_k=20)
    assert len(bank.items) == 240 and bank.validation is not None and bank.validation.items == 90
    backwards = Responses(items[::-1], models, y[:, ::-1])
    assert bank_module.calibrate(backwards, validate_k=20).validation.items == 90
    assert len(tuned[0]) == 90 and set(tuned[0]) == set(tuned[1])
    whole = bank_module.calibrate(Responses(items[:80], models, y[:, :80]), validate_k=20)
    assert whole.validation is not None and whole.validation.items is None  # under the cap: every item


def test_the_interval_scale_holds_its_level_on_the_errors_it_was_set_on():
    rng = np.random.default_rng(2)
    se = rng.uniform(0.01, 0.05, 200)
    errors = rng.standard_t(3, 200) * se * 0.6
    scale = conformal_scale(np.abs(errors), se)
    held = np.abs(errors) <= norm.ppf(0.95) * scale * se
    assert 0.9 <= held.mean() <= 0.92 and scale < 1  # errors narrower than the standard errors: a narrower interval


def test_the_interval_scale_is_set_on_errors_the_weight_was_not_chosen_on():
    """Each weight is lucky on one half of the families: a scale set on the errors that chose the
    weight is too narrow, the cross-fitted one is set on the other half's errors at that weight."""
    from filtering.irt.tuning import cross_fitted_scale

    rng = np.random.default_rng(4)
    se = np.full(80, 0.02)
    half = np.repeat([0, 1], 40)
    small, large = rng.normal(0, 0.01, 80), rng.normal(0, 0.04, 80)
    errors = {0.2: np.where(half == 0, small, large), 0.5: np.where(half == 1, small, large)}
    scale = cross_fitted_scale(errors, {0.2: se, 0.5: se}, half)
    assert scale == conformal_scale(np.abs(np.concatenate([large[half == 1], large[half == 0]])), np.full(80, 0.02))
    best = min(errors, key=lambda w: float(np.abs(errors[w]).mean()))
    assert scale > 1.5 * conformal_scale(np.abs(errors[best][half == (0 if best == 0.2 else 1)]), se[:40])


def test_calibration_chooses_the_likelihood_weight_and_interval_scale_by_leaving_families_out():
    from filtering.irt.bank import calibrate
    from filtering.irt.responses import Responses
    from filtering.irt.tuning import WEIGHTS

    rng = np.random.default_rng(7)
    models = [f"fam{f}-base-{s}_{c}" for f in "abcd" for s in (1, 2) for c in (1, 10, 50)]
    items = 300
    theta, a, b = rng.normal(0, 1, len(models)), rng.uniform(0.5, 2, items), rng.normal(0, 1, items)
    y = (rng.random((len(models), items)) < probability(theta, a, b)).astype(float)
    bank = calibrate(Responses([f"q{j}" for j in range(items)], models, y), validate_k=40)
    validation = bank.validation
    assert validation is not None and validation.families == 4 and validation.models == len(models)
    tried = {float(w): mae for w, mae in validation.mae_by_weight.items()}
    assert set(tried) == set(WEIGHTS) and [s.k for s in bank.schedule] == [10, 20, 40, 80]
    at_k = bank.schedule[2]
    assert at_k.likelihood_weight == min(tried, key=tried.__getitem__) and at_k.interval_scale > 0
    assert validation.coverage >= 0.75  # the scale aims at 90%; on 24 models that is 0.9 ± 0.06
    test = bank.test()
    assert test.setting(40) == (40, at_k.likelihood_weight, at_k.interval_scale)
    assert test.setting(41) == test.setting(80) and test.setting(500) == test.setting(80)


# --- live, through the runner, against a local server answering as a matrix row ------------------

HELD_OUT = "bert-base-cased"


def _records(items: list[str]) -> list[dict]:
    subjects = ("physics", "chemistry")
    return [{"id": item_id, "source": {"exam": "matrix", "session": "2024-1", "subject": subjects[j % 2],
                                        "number": j + 1},
             "stem": f"Question {item_id}: which option is the right one?",
             "options": [{"text": f"option {o} of {item_id}"} for o in range(1, 5)], "answer": j % 4 + 1}
            for j, item_id in enumerate(items)]


def _responder(rows: dict[str, dict[str, float]], keys: dict[str, int]):
    """Each model answers its matrix row: the key where the row says 1, another option where it says 0."""
    def respond(prompt: str, body: dict) -> str:
        item_id = prompt.split("Question ", 1)[1].split(":", 1)[0]
        row = rows[body["model"]]
        option = keys[item_id] if row[item_id] == 1 else keys[item_id] % 4 + 1
        return json.dumps({"정답": option})
    return respond


@pytest.fixture
def matrix_workspace(realdata, tmp_path):
    """A workspace holding commonsenseqa's items, and a bank calibrated without the held-out family."""
    source = (realdata / "irt_matrices" / "commonsenseqa.csv").read_text(encoding="utf-8").splitlines()
    header, lines = source[0].split(","), source[1:]
    items = header[1:]
    matrix = {line.split(",", 1)[0]: dict(zip(items, map(float, line.split(",")[1:]), strict=True)) for line in lines}
    families = dict(zip(matrix, model_families(list(matrix)), strict=True))
    train = [line for line in lines if families[line.split(",", 1)[0]] != HELD_OUT]
    (tmp_path / "train.csv").write_text("\n".join([",".join(header), *train]) + "\n", encoding="utf-8")
    records = _records(items)
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    done = run_cli("items", "import", str(pool), "-w", str(ws))
    assert done.returncode == 0, done.stderr
    done = run_cli("analyze", "calibrate", "--matrix", str(tmp_path / "train.csv"), "-w", str(ws), "--validate-k",
                   "60", "--out", str(tmp_path / "bank.json"))
    assert done.returncode == 0, done.stderr
    keys = {r["id"]: r["answer"] for r in records}
    return ws, tmp_path / "bank.json", matrix, keys, [m for m in matrix if families[m] == HELD_OUT]


def _logged(ws: Path, run_id: str) -> list[dict]:
    lines = (ws / "runs" / run_id / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.realdata
def test_adaptive_run_live_on_a_real_matrix(matrix_workspace):
    from tests.fault_server import ServerConfig, ServerThread

    ws, bank, matrix, keys, held = matrix_workspace
    bank_data = json.loads(bank.read_text(encoding="utf-8"))
    assert {m["family"] for m in bank_data["models"]}.isdisjoint({HELD_OUT})
    assert all(item["content_hash"] and item["facet"] in ("physics", "chemistry") for item in bank_data["items"])
    chosen = held[:4]
    with ServerThread(ServerConfig(responder=_responder(matrix, keys))) as server:
        specs = [x for m in chosen for x in ("-m", f"openai-compatible:{m}@{server.url}/v1")]
        done = run_cli("run", "-w", str(ws), "--adaptive", "60", "--bank", str(bank), *specs, "--json",
                       "--no-progress")
        assert done.returncode == 0, done.stderr
        requests = server.stats.requests
    result = json.loads(done.stdout)
    assert result["batch"] == 1 and len(result["models"]) == len(chosen)
    assert requests == 60 * len(chosen)
    errors = []
    for row in result["models"]:
        model = row["model"].split(":", 1)[1]
        truth = float(np.mean(list(matrix[model].values())))
        logged = _logged(ws, row["run_id"])
        assert row["asked"] == len(logged) == 60 and len({r["item_id"] for r in logged}) == 60
        for record in logged:  # the runner scored what the server said, and the server said the row
            assert record["outcome"] == ("correct" if matrix[model][record["item_id"]] == 1 else "wrong")
        assert 0 <= row["low"] <= row["accuracy"] <= row["high"] <= 1 and row["items"] == len(keys)
        assert row["low"] <= truth <= row["high"], (row, truth)
        errors.append(abs(row["accuracy"] - truth))
        subjects = [int(r["item_id"].rsplit("_", 1)[1]) % 2 for r in logged]
        assert 0.35 <= np.mean(subjects) <= 0.65  # content balancing over the two subjects
    assert np.mean(errors) < 0.08, errors


@pytest.mark.realdata
def test_adaptive_run_resumes_after_a_kill_and_continues_to_a_larger_k(matrix_workspace):
    from tests.fault_server import ServerConfig, ServerThread

    ws, bank, matrix, keys, held = matrix_workspace
    model = held[0]
    with ServerThread(ServerConfig(responder=_responder(matrix, keys), latency=0.15)) as server:
        spec = f"openai-compatible:{model}@{server.url}/v1"
        args = [sys.executable, "-m", "benchsmith.cli", "run", "-w", str(ws), "--adaptive", "40", "--bank", str(bank),
                "-m", spec, "--json", "--no-progress"]
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ})
        runs = ws / "runs"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            logs = list(runs.glob("*/responses.jsonl")) if runs.is_dir() else []
            if logs and len(logs[0].read_text(encoding="utf-8").splitlines()) >= 10:
                break
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait()
        before = _logged(ws, logs[0].parent.name)
        assert 10 <= len(before) < 40
        done = run_cli("run", "-w", str(ws), "--adaptive", "40", "--bank", str(bank), "-m", spec, "--json",
                       "--no-progress")
        assert done.returncode == 0, done.stderr
        first = json.loads(done.stdout)["models"][0]
        after = _logged(ws, first["run_id"])
        assert first["asked"] == 40 and first["new"] == 40 - len(before)
        assert [r["item_id"] for r in after[: len(before)]] == [r["item_id"] for r in before]
        assert len({r["item_id"] for r in after}) == len(after) == 40  # nothing asked twice
        sent = server.stats.requests
        again = run_cli("run", "-w", str(ws), "--adaptive", "40", "--bank", str(bank), "-m", spec, "--json",
                        "--no-progress")
        assert again.returncode == 0 and json.loads(again.stdout)["models"][0]["new"] == 0
        assert server.stats.requests == sent
        more = run_cli("run", "-w", str(ws), "--adaptive", "55", "--bank", str(bank), "-m", spec, "--json",
                       "--no-progress")
        assert more.returncode == 0, more.stderr
        assert json.loads(more.stdout)["models"][0]["new"] == 15 and server.stats.requests == sent + 15
    assert len(_logged(ws, first["run_id"])) == 55


@pytest.mark.realdata
def test_a_model_answering_all_right_or_all_wrong_is_outside_the_calibrated_range(matrix_workspace):
    from tests.fault_server import ServerConfig, ServerThread

    ws, bank, _, keys, _ = matrix_workspace
    rows = {"oracle": dict.fromkeys(keys, 1.0), "contrarian": dict.fromkeys(keys, 0.0)}
    with ServerThread(ServerConfig(responder=_responder(rows, keys))) as server:
        done = run_cli("run", "-w", str(ws), "--adaptive", "30", "--bank", str(bank), "-m",
                       f"openai-compatible:oracle@{server.url}/v1", "-m",
                       f"openai-compatible:contrarian@{server.url}/v1", "--json", "--no-progress")
        assert done.returncode == 0, done.stderr
        text = run_cli("run", "-w", str(ws), "--adaptive", "30", "--bank", str(bank), "-m",
                       f"openai-compatible:oracle@{server.url}/v1", "--no-progress")
    by_model = {row["model"].split(":", 1)[1]: row for row in json.loads(done.stdout)["models"]}
    n = len(keys)
    oracle, contrarian = by_model["oracle"], by_model["contrarian"]
    assert oracle["outside"] == "above" and oracle["high"] == 1.0 and oracle["low"] >= 30 / n
    assert contrarian["outside"] == "below" and contrarian["low"] == 0.0 and contrarian["high"] <= 1 - 30 / n
    assert "above the calibrated range" in text.stdout


@pytest.mark.realdata
def test_bank_items_edited_after_calibration_are_not_asked_and_counted(matrix_workspace):
    from curation.core.workspace import open_workspace
    from tests.fault_server import ServerConfig, ServerThread

    ws, bank, matrix, keys, held = matrix_workspace
    store = open_workspace(ws).store
    edited = sorted(keys)[:7]
    for item_id in edited:
        done = run_cli("items", "edit", item_id, "--set", f"stem=Question {item_id}: which one, now reworded?",
                       "--expect-rev", str(store.get(item_id).rev), "--reason", "test", "-w", str(ws))
        assert done.returncode == 0, done.stderr
    with ServerThread(ServerConfig(responder=_responder(matrix, keys))) as server:
        done = run_cli("run", "-w", str(ws), "--adaptive", "300", "--bank", str(bank), "-m",
                       f"openai-compatible:{held[0]}@{server.url}/v1", "--json", "--no-progress")
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)["models"][0]
    assert row["items"] == len(keys) - len(edited)
    assert any(note.startswith(f"{len(edited)} bank item(s) edited since calibration") for note in row["notes"])
    asked = {r["item_id"] for r in _logged(ws, row["run_id"])}
    assert len(asked) == 300 and asked.isdisjoint(edited)


def test_a_release_carries_its_bank_and_evaluate_adaptive_works_without_the_workspace(tmp_path):
    from curation.core.workspace import open_workspace
    from tests.fault_server import ServerConfig, ServerThread
    from tests.release_support import accept_all

    rng = np.random.default_rng(11)
    n_items = 120
    items = [f"gen_{j:03d}" for j in range(n_items)]
    records = _records(items)
    keys = {r["id"]: r["answer"] for r in records}
    models = [f"fam{f}-base-{s}_{c}" for f in "abc" for s in (1, 2) for c in (1, 10)]
    theta, a, b = rng.normal(0, 1, len(models) + 1), rng.uniform(0.6, 2, n_items), rng.normal(0, 1, n_items)
    y = rng.random((len(models) + 1, n_items)) < probability(theta, a, b)
    rows = {m: dict(zip(items, map(float, y[i]), strict=True)) for i, m in enumerate([*models, "newcomer"])}
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    assert run_cli("items", "import", str(pool), "-w", str(ws)).returncode == 0
    accept_all(open_workspace(ws))
    with ServerThread(ServerConfig(responder=_responder(rows, keys))) as server:
        specs = [x for m in models for x in ("-m", f"openai-compatible:{m}@{server.url}/v1")]
        done = run_cli("run", *specs, "--no-progress", "-w", str(ws))
        assert done.returncode == 0, done.stderr
        built = run_cli("release", "build", "--version", "1.0.0", "-w", str(ws), "--json")
        assert built.returncode == 0, built.stderr
        release = Path(json.loads(built.stdout)["path"])
        bank = json.loads((release / "adaptive" / "bank.json").read_text(encoding="utf-8"))
        assert len(bank["items"]) == n_items and {m["family"] for m in bank["models"]} == {
            "fama-base", "famb-base", "famc-base"}
        assert bank["validation"]["families"] == 3 and bank["validation"]["models"] == len(models)
        card = (release / "README.md").read_text(encoding="utf-8")
        assert "## Adaptive evaluation" in card and f"{bank['validation']['coverage']:.0%}" in card
        assert "adaptive/bank.json" in json.loads((release / "checksums.json").read_text(encoding="utf-8"))
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        done = run_cli("evaluate", "--release", f"{release}:full", "--adaptive", "40", "-m",
                       f"openai-compatible:newcomer@{server.url}/v1", "--json", cwd=elsewhere,
                       env={"XDG_DATA_HOME": str(tmp_path / "xdg"), "BENCHSMITH_WORKSPACE": ""})
        assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)["models"][0]
    truth = float(y[-1].mean())
    assert row["asked"] == 40 and row["items"] == n_items
    assert row["low"] <= truth <= row["high"], (row, truth)


@pytest.mark.parametrize("content, says", [
    (b'{"format": "benchsmith-item-bank/1", "items": [', "broken JSON at line 1, column"),
    (b"\xff\xfe\x00bank", "not UTF-8 text"),
    (b'{"format": "something-else/1"}', "format 'something-else/1'"),
])
def test_a_bank_file_that_is_not_a_bank_is_refused_saying_why(tmp_path, content, says):
    from curation.core.errors import BenchsmithError
    from filtering.irt.bank import load_bank

    path = tmp_path / "bank.json"
    path.write_bytes(content)
    with pytest.raises(BenchsmithError, match="not an item bank") as refused:
        load_bank(path)
    assert says in str(refused.value)
