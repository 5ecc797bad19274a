"""The demo's evaluation stage on the project's own items."""

from __future__ import annotations

from benchsmith.demo_evaluate import DEMO_MODELS, evaluate_sample, local_model_available
from tests.eval_support import seed_items


def test_demo_stage_runs_baselines_and_writes_the_report(workspace) -> None:
    seed_items(workspace, n_text=6, n_image=2)
    report, lines = evaluate_sample(workspace, local_limit=2)
    assert report.is_file() and report.parent == workspace.root / "report"
    assert len(lines) == len(DEMO_MODELS) + (1 if local_model_available() else 0)
    text = report.read_text(encoding="utf-8")
    assert all(f"baseline:{name.split(':')[1]}" in text for name in DEMO_MODELS)
