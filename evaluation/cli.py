"""CLI commands of the evaluation package: run, judge, report."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from curation.cli import JsonOption, WorkspaceOption, print_json, workspace_from
from curation.errors import BenchsmithError
from evaluation.executor import ExecutorSettings
from evaluation.models import ModelSpec, resolve_model

console = Console(stderr=True)
out = Console(soft_wrap=True)

ModelsFileOption = Annotated[Path | None, typer.Option("--models-file", help="YAML declaring models by name "
                                                       "(default: WORKSPACE/models.yaml)")]
ConcurrencyOption = Annotated[int, typer.Option("--concurrency", "-c", min=1, max=1024, help="requests in flight")]
ProgressOption = Annotated[bool, typer.Option("--progress/--no-progress", help="show a progress bar")]


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("judge")(judge_command)
    app.command("report")(report_command)


def _model(spec: str, models_file: Path | None, workspace_root: Path) -> ModelSpec:
    return resolve_model(spec, models_file or workspace_root / "models.yaml")


def _settings(spec: ModelSpec, concurrency: int, timeout: float | None, retries: int | None) -> ExecutorSettings:
    return ExecutorSettings(concurrency=concurrency, timeout_s=timeout or spec.timeout_s,
                            max_retries=spec.max_retries if retries is None else retries)


@contextmanager
def progress_bar(enabled: bool, label: str) -> Iterator[tuple[Callable[[int, int], None], Callable[[dict[str, Any]], None]]]:
    """(on_start(total, already_done), on_record(record)) driving a rich bar with ETA and live counts."""
    counts: Counter = Counter()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[counts]}"),
                        console=console, disable=not enabled, transient=False)
    task_id = progress.add_task(label, total=None, counts="")

    def on_start(total: int, done: int) -> None:
        progress.update(task_id, total=total, completed=done)

    def on_record(record: dict[str, Any]) -> None:
        counts[record.get("outcome") or record.get("status") or "?"] += 1
        progress.update(task_id, advance=1, counts=" ".join(f"{k} {v}" for k, v in sorted(counts.items())))

    with progress:
        yield on_start, on_record


def run_command(
    model: Annotated[str, typer.Option("--model", "-m", help="inline spec (baseline:longest, "
                                       "openai-compatible:MODEL@URL, gemini:ID, vllm:ID, hf:ID, llamacpp:PATH|gemma3-270m), "
                                       "FILE.yaml[:NAME] or a name in models.yaml")],
    workspace: WorkspaceOption = None,
    prompt: Annotated[str, typer.Option("--prompt", "-p", help="standard | advanced | reasoning")] = "standard",
    variant: Annotated[str, typer.Option("--variant", help="implicit | explicit (explicit_variant stems) | "
                                         "options_only | question_only (shortcut probes)")] = "implicit",
    items: Annotated[str | None, typer.Option("--items", help="exam=…,subject=…,status=a|b,korea_specific=true,"
                                              "multimodal=false,ids=a|b")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="only the first N matching items")] = None,
    concurrency: ConcurrencyOption = 16,
    timeout: Annotated[float | None, typer.Option("--timeout", help="seconds per request (default: model's)")] = None,
    retries: Annotated[int | None, typer.Option("--retries", min=0, help="retries per request (default: model's)")] = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="name of the run (default: derived from the config)")] = None,
    resume: Annotated[bool, typer.Option("--resume/--no-resume", help="continue an interrupted run")] = True,
    cache: Annotated[bool, typer.Option("--cache/--no-cache", help="reuse and store cached responses")] = True,
    retry_errors: Annotated[bool, typer.Option("--retry-errors", help="on resume, send error outcomes again")] = False,
    models_file: ModelsFileOption = None,
    progress: ProgressOption = True,
    as_json: JsonOption = False,
) -> None:
    """Ask a model every selected item; responses are cached and logged; a rerun resumes."""
    from evaluation.prompts import VARIANTS
    from evaluation.runner import RunRequest, parse_item_query, run_model

    if variant not in VARIANTS:
        raise BenchsmithError(f"--variant {variant!r}: choose one of {', '.join(VARIANTS)}")
    ws = workspace_from(workspace)
    spec = _model(model, models_file, ws.root)
    request = RunRequest(spec, prompt, variant, parse_item_query(items), limit, run_id, resume, cache, retry_errors,  # type: ignore[arg-type]
                         _settings(spec, concurrency, timeout, retries))
    with progress_bar(progress and not as_json, spec.name) as (on_start, on_record):
        summary = run_model(ws, request, on_start, on_record)
    if as_json:
        print_json({"run_id": summary.run_id, "run_dir": str(summary.run_dir), "items": summary.total,
                    "resumed": summary.done_before, "counts": summary.counts, "not_sent": len(summary.skipped),
                    "stats": summary.stats})
        return
    counts = ", ".join(f"{k} {v}" for k, v in summary.counts.items())
    out.print(f"run {summary.run_id}: {summary.total} items ({summary.done_before} from before), {counts}"
              + (f"; {len(summary.skipped)} not sent" if summary.skipped else ""), highlight=False)
    out.print(f"log: {summary.run_dir / 'responses.jsonl'}", highlight=False)


def judge_command(
    run: Annotated[str, typer.Argument(help="run id (folder under runs/) or run folder")],
    judge: Annotated[str, typer.Option("--judge", "-j", help="model spec of the judge")],
    workspace: WorkspaceOption = None,
    concurrency: ConcurrencyOption = 8,
    max_invalid: Annotated[int, typer.Option("--max-invalid", min=0, help="resends after an invalid verdict")] = 2,
    models_file: ModelsFileOption = None,
    progress: ProgressOption = True,
    as_json: JsonOption = False,
) -> None:
    """Score each rationale of a reasoning run on four axes (1–5) against the reference rationale."""
    from evaluation.judge import judge_run
    from evaluation.runlog import find_run

    ws = workspace_from(workspace)
    spec = _model(judge, models_file, ws.root)
    run_dir = find_run(ws.runs_dir, run)
    with progress_bar(progress and not as_json, f"judge {spec.name}") as (on_start, on_record):
        summary = judge_run(ws, run_dir, spec, _settings(spec, concurrency, None, None), max_invalid=max_invalid,
                            on_start=on_start, on_record=on_record)
    if as_json:
        print_json(summary)
        return
    out.print(f"judged {summary['judged']} rationales of {run_dir.name}: {summary['ok']} valid, "
              f"{summary['missing']} missing; {summary['not_judged']} items without a rationale to judge; "
              f"log: {summary['log']}", highlight=False)


def report_command(
    runs: Annotated[list[str], typer.Argument(help="run ids or run folders")],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="folder for report.md, CSVs and charts")],
    workspace: WorkspaceOption = None,
    seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    resamples: Annotated[int, typer.Option(min=100, help="bootstrap resamples")] = 2000,
    charts: Annotated[bool, typer.Option("--charts/--no-charts", help="radar and bar charts (matplotlib)")] = True,
) -> None:
    """Accuracy per subset with bootstrap CIs, reasoning scores, error rates: Markdown, CSV, PNG."""
    from evaluation.metrics import load_run
    from evaluation.report import write_report
    from evaluation.runlog import find_run

    ws = workspace_from(workspace)
    data = [load_run(find_run(ws.runs_dir, name), ws.store) for name in runs]
    result = write_report(data, out_dir, seed=seed, resamples=resamples, charts=charts)
    for note in result.notes:
        console.print(note, highlight=False)
    out.print(f"report: {result.markdown}", highlight=False)
