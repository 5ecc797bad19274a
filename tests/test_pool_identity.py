"""The pool chain through the CLI on a generated Q-Net pool, checked against figures this test
computes itself from the run logs and the exported items with plain Python and scipy: the
filter's decisions, the hard subset, every accuracy and bootstrap interval of the report, and
the release's configs. The column and matrix paths must give exactly what reading every record
and every item gives (stale records after an edit included).
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from benchmarks.qnet_pool import generate_records
from curation.core.identity import content_hash
from curation.core.item import parse_item
from curation.core.workspace import open_workspace
from tests.conftest import run_cli

MODELS = ("baseline:longest", "baseline:similar", "baseline:position-2")
IN_PLAY = ("extracted", "in_review", "accepted")


def _cli(ws: Path, *args: str) -> str:
    done = run_cli(*args, "-w", str(ws))
    assert done.returncode == 0, f"{args}: {done.stderr}\n{done.stdout}"
    return done.stdout


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    root = tmp_path_factory.mktemp("pool")
    ws = root / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    picture = open_workspace(ws).blobs.put(_png(), "png")
    records = generate_records(1200, seed=11)
    for record in records[::40]:  # a few items with a picture, which text-only baselines are not sent
        record["images"] = [{"blob": picture}]
    path = root / "pool.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    _cli(ws, "items", "import", str(path))
    _cli(ws, "dedup")
    _cli(ws, "tag", "taxonomy")
    for model in MODELS:
        _cli(ws, "run", "-m", model, "--no-progress")
    _cli(ws, "filter", "adversarial", *(x for m in MODELS for x in ("-m", m)))
    record = json.loads(sorted((ws / "filtering").glob("adversarial-*.json"))[-1].read_text(encoding="utf-8"))
    edited = [*record["survivors"][3:5], sorted(record["removed"])[7]]
    for item_id in edited:  # answered and filtered, then edited: their records and their hard place are stale
        rev = open_workspace(ws).store.get(item_id).rev
        _cli(ws, "items", "edit", item_id, "--set", "stem=고친 문제: 다음 중 옳은 것은?", "--expect-rev", str(rev),
             "--reason", "test")
    runs = sorted(p.name for p in (ws / "runs").iterdir() if (p / "manifest.json").is_file())
    _cli(ws, "report", *runs, "-o", str(root / "report"), "--no-charts")
    (root / "release.yaml").write_text("statuses: [extracted, in_review, accepted]\nconfigs: [full, hard]\n")
    _cli(ws, "release", "build", "--version", "1.0.0", "--config", str(root / "release.yaml"))
    items = [parse_item(json.loads(line)) for line in _cli(ws, "items", "export", "--format", "jsonl").splitlines()]
    return ws, root, runs, {item.id: item for item in items}, edited


def _png() -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), "green").save(buffer, "PNG")
    return buffer.getvalue()


def _last_records(run_dir: Path) -> dict[str, dict]:
    last: dict[str, dict] = {}
    for line in (run_dir / "responses.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        last[record["item_id"]] = record
    return last


def _current_records(run_dir: Path, items: dict) -> dict[str, dict]:
    """The last line per item whose content hash is the item's now."""
    return {i: r for i, r in _last_records(run_dir).items()
            if i in items and r.get("content_hash") == content_hash(items[i])}


def _filter_record(ws: Path) -> dict:
    return json.loads(sorted((ws / "filtering").glob("adversarial-*.json"))[-1].read_text(encoding="utf-8"))


def test_the_filter_decides_what_the_logs_say(chain):
    ws, _, runs, items, edited = chain
    record = _filter_record(ws)
    pool = sorted(i for i, item in items.items() if item.status in IN_PLAY)
    filtered_on = record["content_hashes"]
    assert sorted(filtered_on) == pool
    assert [i for i in pool if filtered_on[i] != content_hash(items[i])] == sorted(edited)
    last = {run: _last_records(ws / "runs" / run) for run in runs}
    survivors, removed, undetermined = [], {}, []
    for item_id in pool:
        outcomes = [r["outcome"] if (r := last[run].get(item_id)) and r["content_hash"] == filtered_on[item_id]
                    else None for run in runs]
        if "correct" in outcomes:
            removed[item_id] = sum(o == "correct" for o in outcomes)
        elif outcomes == ["wrong"] * len(runs):
            survivors.append(item_id)
        else:
            undetermined.append(item_id)
    assert record["survivors"] == survivors and len(survivors) > 100
    assert {i: len(models) for i, models in record["removed"].items()} == removed
    assert sorted(record["undetermined"]) == undetermined and undetermined  # the picture items: no model was sent them


def _interval(values: list[bool], seed: int) -> tuple[float, float] | None:
    from scipy.stats import bootstrap

    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return None
    if data.size == 1:
        return float(data[0]), float(data[0])
    result = bootstrap((data,), np.mean, n_resamples=2000, method="percentile", vectorized=True,
                       rng=np.random.default_rng(seed))
    low, high = np.quantile(result.bootstrap_distribution, [0.025, 0.975])
    return float(low), float(high)


def test_every_accuracy_and_interval_of_the_report_is_what_the_records_give(chain):
    ws, root, runs, items, edited = chain
    record = _filter_record(ws)
    hard = {i for i in record["survivors"] if record["content_hashes"][i] == content_hash(items[i])}
    current = {run: _current_records(ws / "runs" / run, items) for run in runs}
    assert not set(edited) & set.union(*(set(records) for records in current.values()))  # stale: left out
    assert set(edited[:2]) & set(record["survivors"]) and not set(edited) & hard
    common = set.intersection(*(set(records) for records in current.values()))
    reported = {(row["run_id"], row["subset"]): row
                for row in csv.DictReader((root / "report" / "accuracy.csv").open(encoding="utf-8"))}
    checked = 0
    for run, records in current.items():
        subsets: dict[str, list[bool]] = {}
        for item_id, answer in records.items():
            item = items[item_id]
            names = ["overall", "multimodal" if item.multimodal else "text_only"]
            if item_id in common:
                names.append("common")
            if item_id in hard:
                names.append("hard")
            part, subject = item.taxonomy.part or item.source.part, item.taxonomy.subject or item.source.subject
            names += [f"part:{part}"] if part else []
            names += [f"subject:{subject}"] if subject else []
            for name in names:
                subsets.setdefault(name, []).append(answer["outcome"] == "correct")
        for name, values in subsets.items():
            row = reported[(run, name)]
            seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big")
            low, high = _interval(values, seed) or (None, None)
            assert int(row["n"]) == len(values) and int(row["correct"]) == sum(values), (run, name)
            assert float(row["accuracy"]) == round(sum(values) / len(values), 4)
            assert (float(row["ci_low"]), float(row["ci_high"])) == (round(low, 4), round(high, 4)), (run, name)
            checked += 1
    assert checked == len(reported) - sum(1 for (_, name) in reported if name == "multimodal")  # not sent: n=0


def test_the_release_holds_the_pool_and_the_current_hard_subset(chain):
    ws, _, _, items, _ = chain
    record = _filter_record(ws)
    release = ws / "releases" / "v1.0.0"
    ids = {config: sorted(row for path in sorted((release / "data" / config).glob("*.parquet"))
                          for row in pq.read_table(path, columns=["id"])["id"].to_pylist())
           for config in ("full", "hard")}
    assert ids["full"] == sorted(i for i, item in items.items() if item.status in IN_PLAY)
    assert ids["hard"] == sorted(i for i in record["survivors"] if record["content_hashes"][i] == content_hash(items[i]))
