"""Evaluating a built release with the same runners: the release config's parquet is the
dataset (read straight from the release; the store is never touched), the runs live in the
workspace with the release's name, version and content hash in their manifests, and the
report is the same as `benchsmith report`'s."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from curation.workspace import Workspace
from evaluation.datasets import ReleaseDataset, split_release_arg
from evaluation.metrics import load_run
from evaluation.models import ModelSpec
from evaluation.report import ReportFiles, write_report
from evaluation.runner import RunRequest, RunSummary, run_model
from evaluation.sender import SenderSettings


@dataclass
class ReleaseEvaluation:
    dataset: ReleaseDataset
    summaries: list[RunSummary]
    report: ReportFiles


def evaluate_release(ws: Workspace, release: str, specs: list[ModelSpec], *, prompt: str = "standard",
                     concurrency: int = 16, report_dir: Path | None = None) -> ReleaseEvaluation:
    path, config = split_release_arg(release)
    dataset = ReleaseDataset(path, config, ws.blobs)
    summaries = []
    for spec in specs:
        settings = SenderSettings(concurrency=concurrency, timeout_s=spec.timeout_s, max_retries=spec.max_retries)
        run_as = spec.decoded_as(dataset.manifest.run_decoding())  # the release's decoding, unless the spec sets it
        summaries.append(run_model(ws, RunRequest(run_as, prompt, "implicit", dataset, settings=settings)))
    runs = [load_run(summary.run_dir, ws) for summary in summaries]
    report = write_report(runs, report_dir or ws.root / "reports" / dataset.label)
    return ReleaseEvaluation(dataset, summaries, report)
