"""Evaluating a built release with the same runners: the release config's parquet is the
dataset (read straight from the release; the store is never touched), the runs live in the
workspace with the release's name, version and content hash in their manifests, and the
report is the same as `benchsmith report`'s.

Every row is scored, as lm-eval and inspect score it: an item a model is not sent (an image
item and a text-only model) counts in n as not answered. Each evaluation writes its own
report folder, so an earlier one is never overwritten."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from curation.core.workspace import Workspace, user_workspace
from evaluation.datasets import ReleaseDataset, split_release_arg
from evaluation.judge_options import AnswerJudge
from evaluation.metrics import load_run
from evaluation.models import ModelSpec
from evaluation.report import ReportFiles, write_report
from evaluation.runner import RunRequest, RunSummary, run_model
from evaluation.sender import SenderSettings

USER_WORKSPACE = "evaluate"  # the per-user workspace `evaluate --release` uses when none is given


@dataclass
class ReleaseEvaluation:
    dataset: ReleaseDataset
    summaries: list[RunSummary]
    report: ReportFiles
    judged: dict[str, dict[str, Any]] = field(default_factory=dict)  # run id → what the answer judge did


def evaluation_workspace(given: Workspace | None) -> Workspace:
    """The workspace given, else the per-user one: one for every release, so a response asked
    once (an item unchanged between versions) is never paid for again, and runs resume."""
    return given if given is not None else user_workspace(USER_WORKSPACE)


def new_report_dir(parent: Path) -> Path:
    """A folder of its own under `parent`, named by the time it was made (a second in the same
    second gets a suffix): every evaluation keeps its report."""
    parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for attempt in range(1, 1000):
        folder = parent / (stamp if attempt == 1 else f"{stamp}-{attempt}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return folder
    raise FileExistsError(f"{parent}: no free report folder for {stamp}")


def evaluate_release(ws: Workspace, release: str, specs: list[ModelSpec], *, prompt: str = "standard",
                     concurrency: int = 16, report_dir: Path | None = None,
                     judge: AnswerJudge | None = None) -> ReleaseEvaluation:
    """Run each model on the release config (then the answer judge, when given, on each run) and
    write one report (into `report_dir`, else a new folder under `WS/reports/RELEASE-vVERSION-CONFIG/`)."""
    path, config = split_release_arg(release)
    dataset = ReleaseDataset(path, config, ws.blobs)
    summaries = []
    for spec in specs:
        settings = SenderSettings(concurrency=concurrency, timeout_s=spec.timeout_s, max_retries=spec.max_retries)
        run_as = spec.decoded_as(dataset.manifest.run_decoding())  # the release's decoding, unless the spec sets it
        summaries.append(run_model(ws, RunRequest(run_as, prompt, "implicit", dataset, settings=settings)))
    judged = {summary.run_id: judge.judge(ws, summary.run_dir) for summary in summaries} if judge is not None else {}
    runs = [load_run(summary.run_dir, ws) for summary in summaries]
    report = write_report(runs, report_dir or new_report_dir(ws.root / "reports" / dataset.label))
    return ReleaseEvaluation(dataset, summaries, report, judged)
