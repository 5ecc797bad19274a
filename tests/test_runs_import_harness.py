"""lm-eval, inspect and (when installed) HRET, run as the release's `harness/README.md` says against a
local server, then their logs imported with `runs import` into the workspace that holds the
release's items: each item's outcome and answer read equal `benchsmith evaluate`'s on the same
replies, and the harness's own verdict is kept beside ours."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from curation.core.workspace import open_workspace
from evaluation.records import AnswerRecord, read_jsonl_records
from evaluation.runlog import RESPONSES, read_answer_manifest
from export.harness import task_name
from tests.conftest import run_cli
from tests.release_support import (
    finish_inspect,
    harness_env,
    readme_command,
    release_rows,
    run_lm_eval,
    scripted_server,
    start_inspect,
)

pytest.importorskip("lm_eval", reason="the harness extra (lm_eval[api]) is not installed")
pytest.importorskip("inspect_ai", reason="the harness extra (inspect_ai) is not installed")
MODEL = "Qwen/Qwen2.5-7B-Instruct"  # not an OpenAI name: inspect's `openai/` provider would reshape its requests
CONFIG = "full"


@pytest.fixture(scope="module")
def harness_runs(harness_release, tmp_path_factory):
    """(workspace with the release's items, evaluate's records per item, each harness's output file)."""
    source, release, _ = harness_release
    tmp = tmp_path_factory.mktemp("runs-import-harness")
    ws = open_workspace(shutil.copytree(source.root, tmp / "ws"))  # the release's store, its own runs
    name = json.loads((release / "release.json").read_text(encoding="utf-8"))["name"]
    outputs: dict[str, Path] = {}
    with scripted_server(release_rows(release, [CONFIG])) as (running, _):
        url = f"{running.url}/v1"
        inspect = start_inspect(release, url, tmp / "inspect", CONFIG, model=MODEL, log_format="eval")
        done = run_cli("evaluate", "--release", f"{release}:{CONFIG}", "-w", str(ws.root), "--out", str(tmp / "report"),
                       "--model", f"openai-compatible:{MODEL}@{url}?vision=true")
        assert done.returncode == 0, done.stderr
        out = run_lm_eval(release, url, tmp / "lm-eval", model=MODEL, task=task_name(name, CONFIG))
        outputs["lm-eval"] = next(out.rglob(f"samples_{task_name(name, CONFIG)}_*.jsonl"))
        outputs["inspect"] = finish_inspect(*inspect)
        if importlib.util.find_spec("llm_eval") is not None:  # HRET: CI installs it (lean)
            folder = tmp / "hret"
            folder.mkdir()
            command = readme_command(release, "python RELEASE/harness/hret/", url=url, model=MODEL)
            hret = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=folder, timeout=600,
                                  env={**harness_env(tmp), "OPENAI_API_KEY": "none"})
            assert hret.returncode == 0, hret.stderr[-3000:]
            outputs["hret"] = folder / "hret.json"
    run_dir = next(path for path in ws.runs_dir.iterdir() if (path / "manifest.json").is_file()
                   and read_answer_manifest(path).dataset.config == CONFIG)
    evaluated = read_jsonl_records(run_dir / RESPONSES, AnswerRecord)
    return ws, evaluated, outputs


def _imported(ws, path: Path, model: str, *extra: str) -> tuple[dict, dict[str, AnswerRecord]]:
    done = run_cli("runs", "import", str(path), "--model", model, "-w", str(ws.root), "--json", *extra)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    return summary, read_jsonl_records(ws.runs_dir / summary["run_id"] / RESPONSES, AnswerRecord)


def _same_as_evaluate(records: dict[str, AnswerRecord], evaluated: dict[str, AnswerRecord]) -> None:
    """The same outcome, answer read and reasoning per item; the same text, but where the harness
    kept a reasoning block apart from it (inspect: a `<think>` block is its ContentReasoning)."""
    assert set(records) == set(evaluated)
    assert {i: (r.outcome, r.answer, r.thinking) for i, r in records.items()} == {
        i: (r.outcome, r.answer, r.thinking) for i, r in evaluated.items()}
    for item_id, record in records.items():
        expected = evaluated[item_id].text or ""
        assert record.text in (expected, re.sub(r"^<think>.*?</think>\s*", "", expected, flags=re.S)), item_id
    assert len({record.outcome for record in records.values()}) >= 2
    assert any(record.thinking for record in records.values())


@pytest.mark.parametrize("harness", ["lm-eval", "inspect", "hret"])
def test_a_harness_log_imports_as_the_evaluate_run(harness_runs, harness):
    ws, evaluated, outputs = harness_runs
    if harness not in outputs:
        pytest.skip("HRET (haerae-evaluation-toolkit) is not installed; .ci/run installs it")
    summary, records = _imported(ws, outputs[harness], f"{harness}-model")
    assert summary["format"] == harness and summary["unmatched"] == []
    assert summary["rows"] == summary["matched"] == len(evaluated)
    assert summary["matched_by"] == {"id": len(evaluated)}
    _same_as_evaluate(records, evaluated)
    # the harness scored with the release's copy of our checkers: its verdict is kept, and agrees
    assert all(isinstance(record.external["is_correct"], bool) for record in records.values())
    assert summary["external"]["disagree"] == 0 and summary["external"]["agree"] > 0


def test_an_inspect_log_as_json_imports_the_same(harness_runs, tmp_path):
    from inspect_ai.log import read_eval_log, write_eval_log

    ws, evaluated, outputs = harness_runs
    as_json = tmp_path / "log.json"
    write_eval_log(read_eval_log(str(outputs["inspect"])), str(as_json), format="json")
    summary, records = _imported(ws, as_json, "inspect-json-model")
    assert summary["format"] == "inspect" and summary["unmatched"] == []
    _same_as_evaluate(records, evaluated)


def test_rows_whose_ids_name_other_items_are_matched_by_question_or_listed(harness_runs, tmp_path):
    """lm-eval samples whose `doc.id` was changed: matched by their question where exactly one item
    has it; a sample whose question no item has, and a second answer to an item, are listed."""
    ws, evaluated, outputs = harness_runs
    samples = [json.loads(line) for line in outputs["lm-eval"].read_text(encoding="utf-8").splitlines()]
    ids = [sample["doc"]["id"] for sample in samples]
    samples[0]["doc"]["id"] = "renamed-elsewhere"
    samples[1]["doc"]["id"] = ids[2]  # another item's id: its question decides
    samples[3]["doc"]["question"] = "이 문제 문장은 어느 항목에도 없다"
    samples[4] = samples[5]
    changed = tmp_path / outputs["lm-eval"].name
    changed.write_text("".join(json.dumps(sample, ensure_ascii=False) + "\n" for sample in samples), encoding="utf-8")
    summary, records = _imported(ws, changed, "changed-model")
    assert summary["unmatched"] == [
        {"row": 4, "reason": f"item {ids[3]!r} has another question, and no item has its question text"},
        {"row": 6, "reason": f"item {ids[5]!r} is already answered by row 5"}]
    assert summary["matched_by"] == {"id": len(samples) - 4, "question": 2}
    assert set(records) == set(evaluated) - {ids[3], ids[4]}
    assert {i: r.outcome for i, r in records.items()} == {i: evaluated[i].outcome for i in records}
