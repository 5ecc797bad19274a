"""The README's main job: `benchsmith demo` on the embedded default, offline."""

import json
import re

from curation.core.item import parse_item

from .conftest import run_cli


def test_demo_runs_every_stage_and_reruns_cleanly(tmp_path):
    ws = tmp_path / "demo"
    first = run_cli("demo", "-w", str(ws))
    assert first.returncode == 0, first.stderr
    assert first.stdout.rstrip().endswith(f"benchsmith annotate -w {ws.resolve()}")  # the demo's last line
    for stage in ("sample exam", "extract", "dedup", "shuffle", "korea", "taxonomy", "rationales", "stats", "export",
                  "evaluate", "exam score", "judge",
                  "filter", "item analysis", "shift", "release"):
        assert f"✓ {stage}" in first.stdout, stage
    truth = [parse_item(json.loads(line)) for line in (ws / "sample-exam.truth.jsonl").read_text(encoding="utf-8").splitlines()]
    text_only = sum(1 for item in truth if not item.multimodal)
    short = [item for item in truth if not item.options]  # 단답형: numbers and a word, no options
    assert len(short) == 4 and all(item.points for item in truth)  # the sample exam's ground truth, 배점 for each
    # each run's exam score: the points it earned out of the exam's, per answer format; the open
    # items are answered by baseline:echo (the option-only baselines leave them)
    total = sum(item.points for item in truth)
    numeric = sum(1 for item in short if item.answer.format == "numeric")
    assert re.search(rf"baseline:echo \d+ / {total:g} points \(\d+%[^)]*\): choice \d+/{len(truth) - len(short)}, "
                     rf"numeric \d+/{numeric}, text \d+/{len(short) - numeric}", first.stdout), first.stdout
    assert re.search(rf"baseline:longest \d+ / {total:g} points \(\d+%; \d+ unanswered\): .*numeric not asked",
                     first.stdout)
    # the demo's few models feed the item analysis and the Suspects queue, with a plain warning;
    # they read text only, so the items with pictures are not in it
    suspects = json.loads((ws / "filtering" / "item_analysis" / "suspects.json").read_text(encoding="utf-8"))
    assert suspects["items"] == text_only and suspects["suspects"]
    assert f"Only {suspects['models']} models answered: with fewer than 10" in first.stdout.replace("\n", " ")
    report = (ws / "report" / "report.md").read_text(encoding="utf-8")
    assert "## Item analysis of these runs (2PL)" in report and "Only " in report
    stats = json.loads(run_cli("items", "stats", "--json", "-w", str(ws)).stdout)
    assert stats["items"] == len(truth)  # every question extracted, none merged by dedup
    assert stats["flags"]["multimodal"].get("True", 0) == len(truth) - text_only
    exported = (ws / "items.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(exported) == stats["items"]
    records = [json.loads(line) for line in exported]  # shuffled, original kept (short answers have no options)
    assert all(record["original_option_order"] for record in records if record["options"])
    assert (ws / "releases" / "v0.1.0" / "README.md").is_file()
    choice_text_only = sum(1 for item in truth if not item.multimodal and item.options)
    _every_queue_has_work(ws, stats["items"], choice_text_only)
    second = run_cli("demo", "-w", str(ws))
    assert second.returncode == 0, second.stderr
    assert "release v0.1.1" in second.stdout
    assert json.loads(run_cli("items", "stats", "--json", "-w", str(ws)).stdout)["revisions"] == stats["revisions"]


def _every_queue_has_work(ws, items: int, choice_text_only: int) -> None:
    from annotator.review import queues, scoring
    from curation.core.workspace import open_workspace
    from curation.steps.korea import KoreaLexicon

    workspace = open_workspace(ws)
    engine = workspace.store.engine
    korea = sum(1 for s in workspace.store.iter_items() if KoreaLexicon().reasons(s.item))
    assert queues.count(engine, "korea", queues.Filters()) == korea > 2
    with_answer = sum(1 for s in workspace.store.iter_items() if s.item.answer is not None and s.item.status != "excluded")
    assert with_answer == items  # every sample question has a key
    with_choice = sum(1 for s in workspace.store.iter_items() if s.item.answer_list() and s.item.status != "excluded")
    assert queues.count(engine, "rationale", queues.Filters()) == with_choice  # a drafted rationale each
    # scoring tasks: each drafted rationale, and each rationale baseline:overlap wrote (text items only)
    assert len(scoring.tasks(engine)) == with_choice + choice_text_only
    judged = [row for row in scoring.score_table(engine) if row["judge"]]
    assert any(row["model"] == "baseline:overlap" for row in judged)  # judged by baseline:rubric-checks
    assert queues.count(engine, "item", queues.Filters()) == items
