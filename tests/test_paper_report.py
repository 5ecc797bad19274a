"""`benchsmith report --paper` on real runs (local HTTP server, baselines) with a judge and expert scores."""

from __future__ import annotations

import json

import numpy as np

from evaluation.judge import judge_log_path, judge_run
from evaluation.models import resolve_model
from evaluation.runlog import RESPONSES, read_records
from evaluation.runner import RunRequest, run_model
from evaluation.sender import SenderSettings

from .conftest import run_cli
from .eval_support import seed_items
from .fault_server import ServerThread

FAST = SenderSettings(concurrency=4, backoff_base_s=0.01, backoff_cap_s=0.05, max_retries=6, timeout_s=10)


def test_report_paper_writes_leaderboard_correlations_and_judge_agreement(workspace, tmp_path):
    seed_items(workspace, n_text=9, n_image=3, rationale=True)
    with ServerThread() as server:
        student = run_model(workspace, RunRequest(resolve_model(f"openai-compatible:student@{server.url}/v1?vision=true"),
                                                  prompt_name="reasoning", settings=FAST))
        judge = resolve_model(f"openai-compatible:judge@{server.url}/v1?structured_output=true&name=judge-a")
        judge_run(workspace, student.run_dir, judge, FAST)
    baselines = [run_model(workspace, RunRequest(resolve_model(f"baseline:{name}"), prompt_name="reasoning"))
                 for name in ("longest", "shortest")]
    verdicts = read_records(judge_log_path(student.run_dir, judge))
    model = json.loads((student.run_dir / "manifest.json").read_text(encoding="utf-8"))["model"]["name"]
    experts = tmp_path / "experts.jsonl"
    with experts.open("w", encoding="utf-8") as handle:
        for n, (item_id, verdict) in enumerate(sorted(verdicts.items())):
            for expert, shift in (("kim", 0), ("lee", n % 2)):
                scores = {axis: max(1, min(5, value - shift)) for axis, value in verdict["scores"].items()}
                handle.write(json.dumps({"item_id": item_id, "model": model, "expert": expert, **scores}) + "\n")
    out = tmp_path / "report"
    result = run_cli("report", student.run_id, *(b.run_id for b in baselines), "--out", str(out), "--paper",
                     "--expert-scores", str(experts), "--resamples", "200", "--no-charts", "-w", str(workspace.root))
    assert result.returncode == 0, result.stderr
    paper = out / "paper"
    for name in ("leaderboard", "correlation", "judge_agreement_items", "judge_agreement_models"):
        assert (paper / f"{name}.md").is_file() and "\\toprule" in (paper / f"{name}.tex").read_text(encoding="utf-8")
    board = (paper / "leaderboard.md").read_text(encoding="utf-8")
    # overall: the text items only, for every model (the image items were not sent to the baselines)
    records = read_records(student.run_dir / RESPONSES)
    text_items = [i for i in records if i.startswith("eval-text")]
    expected = 100 * np.mean([records[i]["outcome"] == "correct" for i in text_items])
    student_row = next(line for line in board.splitlines() if line.startswith(f"| {model} |"))
    assert student_row.split(" | ")[2].startswith(f"{expected:.1f} [")
    assert "3 excluded for all (3 not sent to some model" in (out / "report.md").read_text(encoding="utf-8")
    items = (paper / "judge_agreement_items.md").read_text(encoding="utf-8")
    assert "| total | kim | 1.000 | 1.000 | 9 |" in items  # kim gave the judge's own scores
    assert "| total | expert mean |" in items
    tex = (paper / "leaderboard.tex").read_text(encoding="utf-8")
    assert "unparseable \\%" in tex and "part:1" in tex
