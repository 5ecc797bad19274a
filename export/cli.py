"""CLI commands of the export package: release build / publish."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from curation.cli_kit import JsonOption, WorkspaceOption, out, print_json, workspace_from
from evaluation.judge_options import JudgeAllOption, JudgeOption

release_app = typer.Typer(help="Build and publish versioned releases.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(release_app, name="release")
    app.command("evaluate")(evaluate_command)


@release_app.command("build")
def build_command(
    version: Annotated[str, typer.Option("--version", help="X.Y.Z")],
    config_path: Annotated[Path | None, typer.Option("--config", help="release.yaml")] = None,
    like: Annotated[str | None, typer.Option("--like", help="reuse the config recorded in release vX.Y.Z")] = None,
    workspace: WorkspaceOption = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="folder to write (default: releases/vX.Y.Z)")] = None,
    as_json: JsonOption = False,
) -> None:
    """Build a release: parquet per config, data card, checksums, Croissant, harness exports."""
    from curation.core.errors import BenchsmithError
    from export.build import build_release
    from export.release_config import load_release_config, recorded_config

    ws = workspace_from(workspace)
    if like and config_path:
        raise BenchsmithError("--like and --config: give one (--like reuses a release's recorded config)")
    config = recorded_config(ws.releases_dir, like) if like else load_release_config(config_path)
    result = build_release(ws, version, config, out_path)
    summary = {"path": str(result.path), "version": result.version, "configs": result.counts,
               "content_hash": result.content_hash, "changelog": result.changelog.as_dict(), "notes": result.notes}
    if as_json:
        print_json(summary)
        return
    out.print(f"release v{result.version}: {result.path}", highlight=False)
    out.print("  " + ", ".join(f"{name} {n}" for name, n in result.counts.items()), highlight=False)
    log = result.changelog
    out.print(f"  changes since {log.previous or '(first release)'}: {len(log.added)} added, "
              f"{len(log.removed)} removed, {len(log.changed)} changed; content hash {result.content_hash[:16]}…",
              highlight=False)
    for note in result.notes:
        out.print(f"  note: {note}", highlight=False)


@release_app.command("publish")
def publish_command(
    path: Annotated[Path, typer.Argument(help="a built release folder")],
    repo: Annotated[str, typer.Option("--repo", help="ORG/NAME on the Hugging Face Hub")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print what would be uploaded")] = False,
) -> None:
    """Upload a release with huggingface_hub and tag it vX.Y.Z (checksums verified first)."""
    from export.publish import publish

    for line in publish(path, repo, dry_run=dry_run):
        out.print(line, highlight=False, markup=False)


def evaluate_command(
    release: Annotated[str, typer.Option("--release", help="PATH[:CONFIG] of a built release (default config: full)")],
    model: Annotated[list[str], typer.Option("--model", "-m", help="model spec (repeatable), as for `benchsmith run`")],
    workspace: Annotated[Path | None, typer.Option(
        "--workspace", "-w", envvar="BENCHSMITH_WORKSPACE", show_default=False,
        help="workspace for the runs, cache and reports (default: the per-user one, "
             "$XDG_DATA_HOME/benchsmith/evaluate, created on first use)")] = None,
    prompt: Annotated[str, typer.Option("--prompt", "-p", help="standard | advanced | reasoning")] = "standard",
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1, max=1024)] = 16,
    report_dir: Annotated[Path | None, typer.Option("--out", help="report folder (default: a new folder per "
                                                    "evaluation under WS/reports/RELEASE-vVERSION-CONFIG/)")] = None,
    judge: JudgeOption = None,
    judge_all: JudgeAllOption = False,
    adaptive: Annotated[int | None, typer.Option("--adaptive", min=1, help="ask each model at most K items chosen "
                                                 "as it answers, with the release's item bank, and estimate its "
                                                 "accuracy on the config with a 90% interval")] = None,
    stop_se: Annotated[float | None, typer.Option("--stop-se", min=0.0, help="with --adaptive: stop a model once its "
                                                  "estimate's standard error is below this")] = None,
    batch: Annotated[int, typer.Option("--batch", min=1, help="with --adaptive: items chosen per step")] = 1,
    as_json: JsonOption = False,
) -> None:
    """Evaluate models on a release with the runners (same cache, logs and report as `run`).

    Every row is scored, as the harnesses score it: an image item and a text-only model (no
    `?vision=true`) count in n as not answered. With --adaptive K, each model is asked at most K
    items of the release's item bank, chosen as it answers."""
    from evaluation.judge_options import answer_judge, judge_line
    from evaluation.models import resolve_model
    from evaluation.report import unsent_note
    from export.evaluate import evaluate_release, evaluation_workspace

    ws = evaluation_workspace(workspace_from(workspace) if workspace else None)
    if workspace is None and not as_json:
        out.print(f"workspace: {ws.root} (per-user; -w DIR to choose another)", highlight=False)
    specs = [resolve_model(spec_text, ws.root / "models.yaml") for spec_text in model]
    if adaptive is not None:
        from evaluation.cli import print_adaptive
        from export.release_bank import evaluate_release_adaptive

        results, failed = evaluate_release_adaptive(ws, release, specs, adaptive, stop_se=stop_se, batch=batch,
                                                    prompt=prompt, concurrency=concurrency)
        print_adaptive(results, failed, adaptive, batch, as_json)
        if failed:
            raise typer.Exit(1)
        return
    chosen_judge = answer_judge(ws, judge, judge_all)
    result = evaluate_release(ws, release, specs, prompt=prompt, concurrency=concurrency, report_dir=report_dir,
                              judge=chosen_judge)
    for summary in result.summaries:
        counts = ", ".join(f"{k} {v}" for k, v in summary.counts.items())
        out.print(f"{summary.run_id}: n={summary.total + len(summary.skipped)}: {summary.total} items asked, {counts}"
                  + (f"; {unsent_note(summary.skipped, counted=True)}" if summary.skipped else ""), highlight=False)
        if summary.run_id in result.judged:
            out.print(judge_line(result.judged[summary.run_id]), highlight=False)
    out.print(f"report: {result.report.markdown}", highlight=False)
