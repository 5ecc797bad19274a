"""The demo leaves work in every queue: review, Korea, rationale and expert scoring, with the
judge's scores beside the (empty) expert scores. Read back through the consumers and checked
against counts taken from the store and the run files directly."""

from __future__ import annotations

import json
from pathlib import Path

from curation.core.identity import content_hash
from curation.core.workspace import init_workspace
from tests.conftest import run_cli


def _last_lines(path: Path) -> dict[str, dict]:
    records: dict[str, dict] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        records[record["item_id"]] = record
    return records


def test_demo_judge_stage_fills_the_scoring_queue_with_judge_scores(tmp_path):
    from annotator.review import queues
    from annotator.review.score_desk import ScoreDesk
    from benchsmith import demo

    workspace = init_workspace(tmp_path / "ws")
    pdf = workspace.root / "sample-exam.pdf"
    ctx = demo.DemoContext(workspace, pdf, pdf.with_suffix(".truth.jsonl"))
    for stage in (demo.stage_sample_exam, demo.stage_extract, demo.stage_korea, demo.stage_rationales,
                  demo.stage_judge):
        stage(ctx)

    items = {s.item.id: s.item for s in workspace.store.iter_items()}
    (run_dir,) = [p for p in workspace.runs_dir.iterdir() if p.name.startswith("baseline-overlap-reasoning")]
    answers = {item_id: r for item_id, r in _last_lines(run_dir / "responses.jsonl").items()
               if r["content_hash"] == content_hash(items[item_id], "implicit") and r.get("rationale")}
    verdicts = _last_lines(run_dir / "judge-baseline-rubric-checks.jsonl")
    ok = {item_id: v for item_id, v in verdicts.items() if v["status"] == "ok"}
    assert answers and set(ok) == set(answers)
    assert all("not a model" in v["text"] for v in verdicts.values())
    assert len({v["total"] for v in ok.values()}) > 1  # scored from facts, not a constant

    shown = json.loads(run_cli("annotate", "stats", "--json", "-w", str(workspace.root)).stdout)["tasks"]
    judged = {row["item_id"]: row for row in shown if row["model"] == "baseline:overlap"}
    assert set(judged) == set(answers)
    axes = {"factuality": "factuality", "logic": "logical_soundness", "depth": "depth", "clarity": "clarity"}
    for item_id, row in judged.items():
        assert row["run_id"] == run_dir.name and row["experts"] == {}
        assert row["judge"] == {mine: float(ok[item_id]["scores"][theirs]) for mine, theirs in axes.items()}
    drafted = sum(1 for item in items.values() if item.rationale)
    assert len(shown) == drafted + len(answers)  # the drafts' tasks (no judge) and the run's

    engine = workspace.store.engine
    assert queues.queue_progress(engine, "score", "expert").total == len(shown)
    assert ScoreDesk(workspace.store).resume("expert").session.responses  # what an expert opens on
    korea = sum(1 for item in items.values() if item.flags.korea_reasons)
    assert queues.count(engine, "korea", queues.Filters()) == korea > 2
    assert queues.count(engine, "rationale", queues.Filters()) == drafted > 0
    assert queues.count(engine, "item", queues.Filters()) == len(items)

    log_before = (run_dir / "judge-baseline-rubric-checks.jsonl").read_bytes()
    demo.stage_judge(ctx)  # a rerun resumes: nothing asked again, nothing loaded twice
    assert (run_dir / "judge-baseline-rubric-checks.jsonl").read_bytes() == log_before
    assert len(json.loads(run_cli("annotate", "stats", "--json", "-w", str(workspace.root)).stdout)["tasks"]) == len(shown)
