"""The README's main job: `benchsmith demo` on the embedded default, offline."""

import json

from curation.item import parse_item

from .conftest import run_cli


def test_demo_runs_every_stage_and_reruns_cleanly(tmp_path):
    ws = tmp_path / "demo"
    first = run_cli("demo", "-w", str(ws))
    assert first.returncode == 0, first.stderr
    assert first.stdout.rstrip().endswith(f"benchsmith annotate -w {ws.resolve()}")  # the demo's last line
    for stage in ("sample exam", "extract", "dedup", "shuffle", "korea", "taxonomy", "rationales", "stats", "export",
                  "evaluate", "judge",
                  "filter", "item analysis", "shift", "release"):
        assert f"✓ {stage}" in first.stdout, stage
    truth = [parse_item(json.loads(line)) for line in (ws / "sample-exam.truth.jsonl").read_text(encoding="utf-8").splitlines()]
    text_only = sum(1 for item in truth if not item.multimodal)
    assert len(truth) == 26 and text_only == 22  # the sample exam's ground truth
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
    assert all(json.loads(line)["original_option_order"] for line in exported)  # shuffled, original kept
    assert (ws / "releases" / "v0.1.0" / "README.md").is_file()
    _every_queue_has_work(ws, stats["items"], text_only)
    second = run_cli("demo", "-w", str(ws))
    assert second.returncode == 0, second.stderr
    assert "release v0.1.1" in second.stdout
    assert json.loads(run_cli("items", "stats", "--json", "-w", str(ws)).stdout)["revisions"] == stats["revisions"]


def _every_queue_has_work(ws, items: int, text_only: int) -> None:
    from annotator import queues, scoring
    from curation.steps.korea import KoreaLexicon
    from curation.workspace import open_workspace

    workspace = open_workspace(ws)
    engine = workspace.store.engine
    korea = sum(1 for s in workspace.store.iter_items() if KoreaLexicon().reasons(s.item))
    assert queues.count(engine, "korea", queues.Filters()) == korea > 2
    with_answer = sum(1 for s in workspace.store.iter_items() if s.item.answer_list() and s.item.status != "excluded")
    assert with_answer == items  # every sample question has a key
    assert queues.count(engine, "rationale", queues.Filters()) == with_answer  # a drafted rationale each
    # scoring tasks: each drafted rationale, and each rationale baseline:overlap wrote (text items only)
    assert len(scoring.tasks(engine)) == with_answer + text_only
    judged = [row for row in scoring.score_table(engine) if row["judge"]]
    assert any(row["model"] == "baseline:overlap" for row in judged)  # judged by baseline:rubric-checks
    assert queues.count(engine, "item", queues.Filters()) == items
