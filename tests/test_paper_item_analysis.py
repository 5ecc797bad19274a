"""`report --paper` adds the item analysis of its runs: a difficulty–discrimination scatter, a
Wright map and the top suspects (Markdown and LaTeX); it reuses the workspace's saved analysis
only while that describes exactly these runs, says which it did, and warns under 10 models."""

from __future__ import annotations

import json

from curation.core.item import parse_item
from evaluation.models import resolve_model
from evaluation.runner import RunRequest, run_model

from .conftest import run_cli
from .helpers import make_record

MODELS = ("longest", "shortest", "similar", "position-1", "position-2", "random-1", "random-2", "random-3")


def _answered(workspace):
    records = []
    for n in range(24):
        record = make_record(f"p-{n:02d}", answer=n % 4 + 1, subject="기후학" if n % 2 else "대기역학")
        record["options"] = [{"text": "가" * (1 + (n * 3 + k) % 4) + f" 선택지 {k}"} for k in range(4)]
        records.append(parse_item({**record, "status": "accepted"}))
    workspace.store.save_items(records, author="t", stage="import")
    return [run_model(workspace, RunRequest(resolve_model(f"baseline:{name}"))).run_id for name in MODELS]


def _report(workspace, runs, out):
    done = run_cli("report", *runs, "--out", str(out), "--paper", "--resamples", "200", "-w", str(workspace.root))
    assert done.returncode == 0, done.stderr
    return done, (out / "report.md").read_text(encoding="utf-8")


def _outcomes(workspace, runs):
    found = {}
    for run in runs:
        lines = (workspace.runs_dir / run / "responses.jsonl").read_text(encoding="utf-8").splitlines()
        found[run] = {r["item_id"]: r["outcome"] for r in map(json.loads, lines)}
    return found


def test_report_paper_adds_scatter_wright_map_and_suspects(workspace, tmp_path):
    runs = _answered(workspace)
    done, report = _report(workspace, runs, tmp_path / "first")
    paper = tmp_path / "first" / "paper"
    for chart in ("item_scatter.png", "wright_map.png"):
        assert (paper / chart).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"](paper/{chart})" in report
    assert "\\toprule" in (paper / "suspects.tex").read_text(encoding="utf-8")
    assert "Fitted from this report's runs (24 items × 8 models" in report
    assert "Only 8 models answered: with fewer than 10" in report and "Only 8 models answered" in done.stderr

    # every suspect row's n and share correct, recounted from the run logs
    outcomes = _outcomes(workspace, runs)
    table = (paper / "suspects.md").read_text(encoding="utf-8")
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert rows, table
    for row in rows:
        item = row[1]
        determined = [o[item] for o in outcomes.values() if o.get(item) in ("correct", "wrong")]
        assert row[8] == str(len(determined))
        assert row[7] == f"{sum(o == 'correct' for o in determined) / len(determined):.2f}"

    # the saved analysis of the same runs is reused, and gives the same table
    for command in ("items", "suspects"):
        assert run_cli("analyze", command, "--json", "-w", str(workspace.root)).returncode == 0
    _, again = _report(workspace, runs, tmp_path / "second")
    assert "Reused `" in again and "item_analysis.json" in again
    assert (tmp_path / "second" / "paper" / "suspects.md").read_text(encoding="utf-8") == table

    # ... but not for other runs, nor after an item changed
    _, fewer = _report(workspace, runs[:3], tmp_path / "fewer")
    assert "was not used: its 8 models are not this report's 3" in fewer and "Only 3 models answered" in fewer
    stored = workspace.store.get("p-05")
    workspace.store.update_fields("p-05", {"stem": "고친 문제: 옳은 것은?"}, expect_rev=stored.rev, author="t",
                                  stage="annotate", reason="오타")
    _, edited = _report(workspace, runs, tmp_path / "edited")
    assert "Fitted from this report's runs (23 items × 8 models" in edited and "was not used" in edited
