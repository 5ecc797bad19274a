"""KMMMU end to end through the command line, on the real material (skipped without ../shared/realdata):
`init`, `items import` of the KMMMU CSV with its images, `run` of three models against a local
OpenAI-compatible server that replays each model's real responses by question (the runner sends
real requests and scores the replies; the answer judge, on the same server, replays the published
verdicts for what no checker decides), `report`, `filter hard --run …`, `analyze items`,
`analyze suspects`, `items set-status`, `release build`, and the release loaded back with `datasets`.

Every figure asserted is computed here independently of the commands: each reply scored with the
checkers (`scoring.score_key`) and, where they leave it undecided, the published `is_correct` of
that reply; the accuracy per model, the hard subset, the item analysis' counts and the release's
rows follow from those outcomes and the items' keys.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.fault_server import ServerConfig, ServerThread
from tests.kmmmu_support import PublishedJudge, ReplayedModels, judge_csv, read_csv_rows
from tests.runs_import_support import is_judge_request

pytestmark = pytest.mark.realdata

MODELS = ("gpt-5-mini", "qwen3-VL-30b-it", "varco2-14b")


def _cli(ws: Path, *args: str) -> str:
    done = run_cli(*args, "-w", str(ws))
    assert done.returncode == 0, (args[:2], done.stderr[-2000:])
    return done.stdout


def _expected_outcomes(ws: Path, realdata: Path) -> tuple[dict[str, dict[str, str]], dict[str, object]]:
    """model → item → the outcome this test gives the model's reply (checkers, else the published
    verdict), and the items by id; each item found by its question in every model's file."""
    from curation.core.workspace import open_workspace
    from scoring import score_key
    from tests.kmmmu_support import fold

    items = {stored.item.id: stored.item for stored in open_workspace(ws).store.iter_items()}
    expected: dict[str, dict[str, str]] = {}
    for model in MODELS:
        rows = read_csv_rows(judge_csv(realdata, model))
        expected[model] = {}
        for item_id, item in items.items():
            stem = fold(item.stem)
            found = [row for row in rows if fold(row["question"]) == stem or fold(row["question"]).startswith(stem + " ")]
            assert len(found) == 1, (model, item_id)
            row = found[0]
            score = score_key(item.answer, row["response"], options=[option.text for option in item.options])
            outcome = score.outcome
            if outcome == "undecided":
                outcome = "correct" if row["is_correct"].strip().lower() == "true" else "wrong"
            expected[model][item_id] = outcome
    return expected, items


def test_a_kmmmu_csv_imports_runs_scores_filters_analyses_and_releases(realdata, tmp_path):
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    imported = json.loads(_cli(ws, "items", "import", str(judge_csv(realdata, "gpt-5-mini")), "--images",
                               str(realdata / "kmmmu_judge" / "images"), "--json"))
    assert [(report["format"], report["rows"], report["created"], report["errors"]) for report in imported] == [
        ("kmmmu", 100, 100, [])]
    expected, items = _expected_outcomes(ws, realdata)
    formats = Counter(item.answer_format for item in items.values())
    assert len(items) == 100 and set(formats) == {"choice", "set", "numeric", "expression", "text", "parts", "judged"}
    assert sum(bool(item.images) for item in items.values()) >= 70  # the images were found under --images

    # run: three models answer through the runner (vision, room for their longest replies), the
    # answer judge on the same server for what no checker decides
    replay, judge = ReplayedModels(realdata, MODELS), PublishedJudge(realdata)

    def respond(prompt_text: str, body: dict) -> str:
        return judge(prompt_text, body) if is_judge_request(prompt_text) else replay(prompt_text, body)

    with ServerThread(ServerConfig(responder=respond)) as server:
        specs = [f"--model=openai-compatible:{model}@{server.url}/v1?vision=true&max_tokens=100000" for model in MODELS]
        ran = json.loads(_cli(ws, "run", *specs, "--judge", f"openai-compatible:judge@{server.url}/v1",
                              "--json", "--no-progress"))
    assert replay.misses == [] and judge.misses == []
    runs = {model: next(run for run in ran["runs"] if f"-{model}-" in run["run_id"]) for model in MODELS}
    from evaluation.records import AnswerRecord, read_jsonl_records
    from evaluation.runlog import RESPONSES

    for model, run in runs.items():
        records = read_jsonl_records(Path(run["run_dir"]) / RESPONSES, AnswerRecord)
        logged = sorted(row["response"] for row in read_csv_rows(judge_csv(realdata, model)))
        assert sorted(record.text or "" for record in records.values()) == logged  # every real reply, once
        assert {item_id: record.outcome for item_id, record in records.items()} == expected[model], model
        judged = {item_id for item_id, record in records.items() if record.typed_score().decided_by == "judge"}
        assert judged and all(records[item_id].typed_score().details["checker_outcome"] == "undecided"
                              for item_id in judged)

    # report: accuracy per model over the 100 items
    report_dir = tmp_path / "report"
    _cli(ws, "report", *(run["run_id"] for run in runs.values()), "--out", str(report_dir), "--no-charts")
    with (report_dir / "accuracy.csv").open(encoding="utf-8") as handle:
        overall = {row["run_id"]: row for row in csv.DictReader(handle) if row["subset"] == "overall"}
    for model, run in runs.items():
        correct = sum(outcome == "correct" for outcome in expected[model].values())
        row = overall[run["run_id"]]
        assert (int(row["n"]), int(row["correct"])) == (100, correct), model
        assert float(row["accuracy"]) == pytest.approx(correct / 100, abs=1e-4)
        unparseable = sum(outcome == "unparseable" for outcome in expected[model].values())
        assert int(row["unparseable"]) == unparseable
    assert all(model in (report_dir / "report.md").read_text(encoding="utf-8") for model in MODELS)

    # filter hard on the three runs as they are: survivors are the items every model got wrong
    hard = json.loads(_cli(ws, "filter", "hard", *(f"--run={run['run_id']}" for run in runs.values()), "--json"))
    by_item = {item_id: [expected[model][item_id] for model in MODELS] for item_id in items}
    survivors = {item_id for item_id, outcomes in by_item.items() if all(o == "wrong" for o in outcomes)}
    removed = {item_id for item_id, outcomes in by_item.items() if "correct" in outcomes}
    assert (hard["pool"], hard["survivors"], hard["removed"]) == (100, len(survivors), len(removed))
    assert set(hard["undetermined"]) == set(items) - survivors - removed

    # the item analysis and the suspects: each item's and each model's decided answers and share correct
    analysis = json.loads(_cli(ws, "analyze", "items", "--json"))
    assert len(analysis["models"]) == 3 and {entry["item_id"] for entry in analysis["items"]} == set(items)
    for entry in analysis["items"]:
        decided = [o for o in by_item[entry["item_id"]] if o in ("correct", "wrong")]
        assert entry["n"] == len(decided), entry["item_id"]
        if decided:
            assert entry["share_correct"] == pytest.approx(decided.count("correct") / len(decided), abs=1e-4)
    for entry in analysis["models"]:
        model = next(model for model in MODELS if f":{model}[" in entry["model"])
        decided = [o for o in expected[model].values() if o in ("correct", "wrong")]
        assert (entry["n"], entry["share_correct"]) == (len(decided), pytest.approx(
            decided.count("correct") / len(decided), abs=1e-4))
    suspects = json.loads(_cli(ws, "analyze", "suspects", "--json"))
    assert (suspects["items"], suspects["models"]) == (100, 3)
    assert {entry["item_id"] for entry in suspects["suspects"]} <= set(items)

    # release: the items reviewed (accepted), built with the hard subset, loaded back with datasets
    accepted = json.loads(_cli(ws, "items", "set-status", "accepted", "--where", "status=extracted|in_review",
                               "--reason", "reviewed (end-to-end test)", "--json"))
    assert accepted["matched"] == 100
    built = json.loads(_cli(ws, "release", "build", "--version", "1.0.0", "--json"))
    choice = {item_id for item_id, item in items.items() if item.answer_format == "choice"}
    released = set(items)  # every format has its key columns: every reviewed item is released
    assert not any("left out" in note for note in built["notes"])
    assert built["configs"]["full"] == len(released)
    assert built["configs"]["hard"] == len(survivors & released)

    import datasets

    path, cache = built["path"], str(tmp_path / "hf-cache")
    full = datasets.load_dataset(path, "full", cache_dir=cache)["test"]
    assert sorted(full["id"]) == sorted(released)
    keys = {row["id"]: row["answers"] for row in full if row["id"] in choice}
    assert keys == {item_id: items[item_id].answer.options for item_id in choice}
    typed = {row["id"]: (row["answer_format"], json.loads(row["key"])) for row in full}
    assert typed == {item_id: (item.answer_format, item.answer.model_dump(mode="json")) for item_id, item in items.items()}
    assert len({fmt for fmt, _ in typed.values()}) > 1  # KMMMU's open answers are released too
    hard_rows = datasets.load_dataset(path, "hard", cache_dir=cache)["test"]
    assert set(hard_rows["id"]) == survivors & released
    print("\naccuracy " + ", ".join(f"{model} {float(overall[run['run_id']]['accuracy']):.2f}" for model, run in runs.items())
          + f"; hard {len(survivors)}, removed {len(removed)}, undetermined {100 - len(survivors) - len(removed)}"
          + f"; released full {len(full)} (hard {len(hard_rows)})")
