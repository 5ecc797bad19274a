"""CLI commands of the evaluation package: run, judge, report."""

from __future__ import annotations

import json
import time
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

from curation.cli_kit import JsonOption, WorkspaceOption, is_one_of, print_json, workspace_from
from curation.core.errors import BenchsmithError
from curation.core.workspace import Workspace
from curation.execution.options import ExecutorOption, MaxAttemptsOption, RayAddressOption, WorkersOption
from evaluation.judge_options import AnswerJudge, JudgeAllOption, JudgeOption, answer_judge, judge_line
from evaluation.models import ModelSpec, resolve_model
from evaluation.sender import SenderSettings

console = Console(stderr=True)
out = Console(soft_wrap=True)

ModelsFileOption = Annotated[Path | None, typer.Option("--models-file", help="YAML declaring models by name "
                                                       "(default: WORKSPACE/models.yaml)")]
ConcurrencyOption = Annotated[int, typer.Option("--concurrency", "-c", min=1, max=1024, help="requests in flight")]
ProgressOption = Annotated[bool, typer.Option("--progress/--no-progress", help="show a progress bar")]


RUNS_HELP = "Answer runs: import another tool's responses as a run, list runs, show a run's records, judge answers."
runs_app = typer.Typer(help=RUNS_HELP, no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("judge")(judge_command)
    app.command("report")(report_command)
    app.command("rescore")(rescore_command)
    app.add_typer(runs_app, name="runs")


def _model(spec: str, models_file: Path | None, workspace_root: Path) -> ModelSpec:
    return resolve_model(spec, models_file or workspace_root / "models.yaml")


def _settings(spec: ModelSpec, concurrency: int, timeout: float | None, retries: int | None) -> SenderSettings:
    return SenderSettings(concurrency=concurrency, timeout_s=timeout or spec.timeout_s,
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

    pending = [0, 0.0]  # records not yet shown, when the bar was last drawn

    def on_record(record: dict[str, Any]) -> None:
        counts[record.get("outcome") or record.get("status") or "?"] += 1
        pending[0] += 1
        now = time.monotonic()
        if now - pending[1] >= 0.1:  # redrawn ten times a second, not once per record
            progress.update(task_id, advance=pending[0], counts=" ".join(f"{k} {v}" for k, v in sorted(counts.items())))
            pending[:] = [0, now]

    with progress:
        yield on_start, on_record
        progress.update(task_id, advance=pending[0], counts=" ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def judge_with_progress(judge: AnswerJudge, ws: Workspace, run_dir: Path, show: bool) -> dict[str, Any]:
    """The answer judge on one run, with a progress bar."""
    with progress_bar(show, f"judge {judge.spec.name}") as (_, on_record):
        return judge.judge(ws, run_dir, on_record)


def run_command(
    model: Annotated[list[str] | None, typer.Option("--model", "-m", help="inline spec (baseline:longest, "
                                                    "openai-compatible:MODEL@URL, gemini:ID, vllm:ID, hf:ID, "
                                                    "llamacpp:PATH|gemma3-270m), FILE.yaml[:NAME] or a name in "
                                                    "models.yaml; repeat for several models")] = None,
    model_list: Annotated[Path | None, typer.Option("--model-list", help="a models YAML (all its models) or a text "
                                                    "file with one model per line")] = None,
    workspace: WorkspaceOption = None,
    prompt: Annotated[str, typer.Option("--prompt", "-p", help="standard | advanced | reasoning")] = "standard",
    variant: Annotated[str, typer.Option("--variant", help="implicit | explicit (explicit_variant stems) | "
                                         "options_only | question_only (shortcut probes)")] = "implicit",
    items: Annotated[str | None, typer.Option("--items", help="exam=…,subject=…,status=a|b,korea_specific=true,"
                                              "multimodal=false,ids=a|b")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="only the first N matching items")] = None,
    source: Annotated[str | None, typer.Option("--from", help="answer a release config (PATH[:CONFIG]) or a JSONL "
                                               "file of items instead of the store (the store is not touched)")] = None,
    concurrency: ConcurrencyOption = 16,
    timeout: Annotated[float | None, typer.Option("--timeout", help="seconds per request (default: model's)")] = None,
    retries: Annotated[int | None, typer.Option("--retries", min=0, help="retries per request (default: model's)")] = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="name of the run (default: derived from the config)")] = None,
    resume: Annotated[bool, typer.Option("--resume/--no-resume", help="continue an interrupted run")] = True,
    cache: Annotated[bool, typer.Option("--cache/--no-cache", help="reuse and store cached responses")] = True,
    retry_errors: Annotated[bool, typer.Option("--retry-errors", help="on resume, send error outcomes again")] = False,
    models_file: ModelsFileOption = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    workers: WorkersOption = None,
    shard_size: Annotated[int, typer.Option("--shard-size", min=1, help="items per shard (several models or Ray)")] = 100,
    max_attempts: MaxAttemptsOption = 3,
    judge: JudgeOption = None,
    judge_all: JudgeAllOption = False,
    progress: ProgressOption = True,
    as_json: JsonOption = False,
    adaptive: Annotated[int | None, typer.Option("--adaptive", min=1, help="ask each model at most K items of the "
                                                 "--bank, each chosen from its answers so far, and estimate its "
                                                 "accuracy on every bank item of the selection")] = None,
    bank: Annotated[Path | None, typer.Option("--bank", help="the item bank (`analyze calibrate`) for --adaptive")] = None,
    stop_se: Annotated[float | None, typer.Option("--stop-se", min=0.0, help="with --adaptive: stop a model early once "
                                                  "its accuracy estimate's standard error is below this")] = None,
    batch: Annotated[int, typer.Option("--batch", min=1, help="with --adaptive: items chosen per step (fewer round "
                                       "trips, each chosen on a slightly older estimate)")] = 1,
) -> None:
    """Ask models every selected item; responses are cached and logged; a rerun resumes.

    One model runs in this process; several models (or `--executor ray`) run as shards on local
    processes or a Ray cluster, with this process the only writer of logs and cache. With
    `--adaptive K --bank BANK.json`, each model is asked at most K bank items chosen as it answers
    (the models at the same time), and its accuracy on the bank's items is estimated."""
    from curation.execution.dispatch import ExecutorChoice, dispatch
    from evaluation.datasets import dataset_from_source
    from evaluation.prompts import VARIANTS
    from evaluation.runner import RunRequest, parse_item_query, run_model, store_dataset

    if not is_one_of(variant, VARIANTS):
        raise BenchsmithError(f"--variant {variant!r}: choose one of {', '.join(VARIANTS)}")
    ws = workspace_from(workspace)
    specs = _models(model or [], model_list, models_file, ws.root)
    answer_judge_ = answer_judge(ws, judge, judge_all, models_file)
    if run_id is not None and len(specs) > 1:
        raise BenchsmithError("--run-id names one run: use it with a single model")
    if source is not None and (items or limit):
        raise BenchsmithError("--from answers a whole release config or file: leave out --items and --limit")
    dataset = (dataset_from_source(source, ws.store, ws.blobs, ws.root) if source
               else store_dataset(ws, parse_item_query(items), limit))
    if source:
        dataset.items()  # read (and cached) before any progress bar, so a broken file is one clean error line
    requests = [RunRequest(spec, prompt, variant, dataset, run_id, resume, cache, retry_errors,
                           _settings(spec, concurrency, timeout, retries)) for spec in specs]
    show = progress and not as_json
    if adaptive is not None or bank is not None:
        if adaptive is None or bank is None:
            raise BenchsmithError("an adaptive run needs both --adaptive K and --bank BANK.json")
        if executor != "local" or (judge is not None and judge.strip().lower() != "none"):
            raise BenchsmithError("--adaptive runs the models here, one item at a time: leave out --executor and "
                                  "--judge (judge the runs afterwards with `runs judge`)")
        _run_adaptive(ws, requests, adaptive, bank, stop_se, batch, show, as_json)
        return

    def here() -> tuple[list[Any], dict[str, str]]:
        with progress_bar(show, specs[0].name) as (on_start, on_record):
            return [run_model(ws, requests[0], on_start, on_record)], {}

    def sharded(executor: Any, on_plan: Callable[[int, int], None], on_progress: Callable[[Any], None]
                ) -> tuple[list[Any], dict[str, str]]:
        from evaluation.sharded_run import run_models

        result = run_models(ws, requests, executor, shard_size=shard_size, max_attempts=max_attempts,
                            on_plan=on_plan, on_progress=on_progress)
        return result.summaries, result.failed

    choice = ExecutorChoice(executor, ray_address, workers, max_attempts)
    summaries, failed = dispatch(choice, len(requests), here, sharded, label=f"{len(requests)} models", unit="items",
                                 show=show, console=console)
    judged = ({summary.run_id: judge_with_progress(answer_judge_, ws, summary.run_dir, show) for summary in summaries}
              if answer_judge_ is not None else {})
    _print_runs(summaries, failed, as_json, judged)
    if failed:
        raise typer.Exit(1)


def _run_adaptive(ws: Workspace, requests: list[Any], k: int, bank: Path, stop_se: float | None, batch: int,
                  show: bool, as_json: bool) -> None:
    from evaluation.adaptive_run import AdaptiveSettings, run_adaptive

    with progress_bar(show, f"adaptive, {len(requests)} model(s)") as (on_start, on_record):
        on_start(k * len(requests), 0)
        results, failed = run_adaptive(ws, requests, AdaptiveSettings(k, bank, stop_se, batch), on_record)
    print_adaptive(results, failed, k, batch, as_json)
    if failed:
        raise typer.Exit(1)


def print_adaptive(results: list[Any], failed: dict[str, str], k: int, batch: int, as_json: bool) -> None:
    """Per model: items asked, estimated accuracy on the bank items of the selection, 90% interval."""
    plan = results[0].plan_summary if results else {}
    if as_json:
        print_json({"models": [r.as_dict() for r in results], "k": k, "batch": batch, "level": 0.9, "bank": plan,
                    "failed": failed})
        return
    validation = plan.get("cross_validation") if plan else None
    if validation:
        out.print(f"bank: {plan['bank_items']} items calibrated on {plan['calibrated_on']} models "
                  f"({plan['calibrated_at'][:10]}); leaving each of {validation['families']} model families out, "
                  f"{validation['k']} adaptive items gave a mean absolute error of {validation['mae']:.3f} "
                  f"({validation['ratio']:.2f}× that of {validation['k']} random items) and 90% intervals holding "
                  f"the truth for {validation['coverage']:.0%} of {validation['models']} models", highlight=False)
    notes = list(dict.fromkeys(note for r in results for note in r.notes))
    for note in notes:
        out.print(f"note: {note}", highlight=False)
    for r in results:
        e = r.estimate
        flag = f"; {e['note']}" if e.get("note") else ""
        out.print(f"{r.model}: {e['accuracy']:.1%} (90% interval {e['low']:.1%} … {e['high']:.1%}) on {r.targets} "
                  f"bank items, from {r.asked} asked ({r.new} new, batch {batch}, stopped: {r.stopped}){flag}; "
                  f"run {r.run_id}", highlight=False)
    for model, error in failed.items():
        console.print(f"{model} failed: {error} (its finished requests are kept; rerun the same command to resume)",
                      highlight=False, markup=False, soft_wrap=True)


def _models(models: list[str], model_list: Path | None, models_file: Path | None, root: Path) -> list[ModelSpec]:
    from evaluation.models import resolve_model_list

    specs = [_model(spec, models_file, root) for spec in models]
    if model_list is not None:
        specs += resolve_model_list(model_list, models_file or root / "models.yaml")
    if not specs:
        raise BenchsmithError("no model: give --model (repeatable) or --model-list")
    return specs


def _print_runs(summaries: list[Any], failed: dict[str, str], as_json: bool,
                judged: dict[str, dict[str, Any]] | None = None) -> None:
    judged = judged or {}
    if as_json:
        runs = [{"run_id": s.run_id, "run_dir": str(s.run_dir), "items": s.total, "resumed": s.done_before,
                 "counts": s.counts, "not_sent": len(s.skipped), "stats": s.stats}
                | ({"judge": judged[s.run_id]} if s.run_id in judged else {}) for s in summaries]
        print_json(runs[0] if len(runs) == 1 and not failed else {"runs": runs, "failed_shards": failed})
    else:
        for summary in summaries:
            counts = ", ".join(f"{k} {v}" for k, v in summary.counts.items())
            changed = summary.stats.get("changed_since", 0)
            out.print(f"run {summary.run_id}: {summary.total} items ({summary.done_before} from before"
                      + (f", {changed} asked again because they changed" if changed else "") + f"), {counts}"
                      + (f"; {len(summary.skipped)} not sent" if summary.skipped else ""), highlight=False)
            out.print(f"log: {summary.run_dir / 'responses.jsonl'}", highlight=False)
            if summary.run_id in judged:
                out.print(judge_line(judged[summary.run_id]), highlight=False)
    for key, error in failed.items():
        hint = "" if "rerun" in error else " (its finished requests are kept; rerun the same command to resume)"
        console.print(f"shard {key} failed: {error}{hint}", highlight=False, markup=False, soft_wrap=True)


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


def rescore_command(
    runs: Annotated[list[str], typer.Argument(help="run ids or run folders")],
    workspace: WorkspaceOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="count what would change; append nothing")] = False,
    as_json: JsonOption = False,
) -> None:
    """Score every record of a run again from its logged text with today's checkers (nothing is
    re-sent): after a checker changes. A person's verdict stays; changed scores are appended."""
    from evaluation.rescore import rescore_run
    from evaluation.runlog import find_run

    ws = workspace_from(workspace)
    summaries = [rescore_run(ws, find_run(ws.runs_dir, name), dry_run=dry_run) for name in runs]
    if as_json:
        print_json({"runs": [summary.as_dict() for summary in summaries], "dry_run": dry_run})
        return
    for summary in summaries:
        changes = ", ".join(f"{change} {count}" for change, count in sorted(summary.changes.items())) or "none"
        verb = "would change" if dry_run else "changed"
        out.print(f"{summary.run_id}: {summary.records} records, {verb} {summary.rescored} ({changes}); "
                  f"{summary.unchanged} unchanged, {summary.kept_verdicts} verdicts of a judge or a person kept, "
                  + (f"{summary.restored_verdicts} people's verdicts given back, " if summary.restored_verdicts else "")
                  + f"{summary.stale} stale, {summary.no_text} without a response", highlight=False)


def report_command(
    runs: Annotated[list[str], typer.Argument(help="run ids or run folders")],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="folder for report.md, CSVs and charts")],
    workspace: WorkspaceOption = None,
    seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    resamples: Annotated[int, typer.Option(min=100, help="bootstrap resamples")] = 2000,
    charts: Annotated[bool, typer.Option("--charts/--no-charts", help="radar and bar charts (matplotlib)")] = True,
    paper: Annotated[bool, typer.Option("--paper", help="also the paper's tables (Markdown and LaTeX) under OUT/paper/: "
                                        "leaderboard, correlations with a heatmap, judge agreement, item analysis "
                                        "(difficulty–discrimination scatter, Wright map, top suspects)")] = False,
    expert_scores: Annotated[Path | None, typer.Option("--expert-scores", help="experts' scores JSONL (`annotate "
                                                       "export-scores`) for the judge agreement table")] = None,
) -> None:
    """Accuracy per subset with bootstrap CIs, reasoning scores, error rates: Markdown, CSV, PNG."""
    from evaluation.item_facets import FacetReader
    from evaluation.metrics import load_run
    from evaluation.report import write_report
    from evaluation.runlog import find_run

    ws = workspace_from(workspace)
    reader = FacetReader()
    data = [load_run(find_run(ws.runs_dir, name), ws, reader) for name in runs]
    from evaluation.human_verdicts import verdict_settings

    result = write_report(data, out_dir, seed=seed, resamples=resamples, charts=charts,
                          verdicts=verdict_settings(ws.root))
    if paper or expert_scores is not None:
        from evaluation.paper import add_paper_to_report
        from evaluation.paper_sections import SECTION_MAKERS

        tables = add_paper_to_report(data, result.markdown, seed=seed, resamples=resamples, ws=ws,
                                     sections=SECTION_MAKERS, expert_scores=expert_scores, charts=charts)
        out.print(f"paper tables: {tables.out_dir} ({len(tables.files)} files)", highlight=False)
        for note in tables.notes:
            console.print(note, highlight=False)
    for note in result.notes:
        console.print(note, highlight=False)
    out.print(f"report: {result.markdown}", highlight=False)


@runs_app.command("import")
def runs_import_command(
    files: Annotated[list[Path], typer.Argument(help="the other tool's file: a KMMMU judge CSV, lm-eval's "
                                                "samples_TASK_*.jsonl (--log_samples), an inspect log (.eval/.json), "
                                                "HRET's result JSON, or a JSONL of {id, response[, finish_reason]}; "
                                                "several files: one --model each, in order")],
    models: Annotated[list[str], typer.Option("--model", "-m", help="the name of the model whose responses these "
                                              "are (one per file)")],
    source: Annotated[str | None, typer.Option("--from", help="kmmmu | lm-eval | inspect | hret | jsonl "
                                               "(default: what each file says it is)")] = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="name of the run (default: derived from the model, "
                                               "the format and the file's digest); one file only")] = None,
    workspace: WorkspaceOption = None,
    judge: JudgeOption = None,
    judge_all: JudgeAllOption = False,
    models_file: ModelsFileOption = None,
    concurrency: ConcurrencyOption = 8,
    progress: ProgressOption = True,
    as_json: JsonOption = False,
) -> None:
    """Another tool's responses as a run: each row matched to its store item (by id, else by its
    question text) and scored by the item's checker (and the judge, where none decides); every
    row left out is listed with its reason. The tool's own verdicts are kept beside ours."""
    from evaluation.imported_runs import ItemMatcher, import_run, refresh_outcomes

    if len(models) != len(files):
        raise BenchsmithError(f"{len(files)} file(s) and {len(models)} --model: name one model per file, in order")
    if run_id is not None and len(files) > 1:
        raise BenchsmithError("--run-id names one run: use it with a single file")
    ws = workspace_from(workspace)
    chosen_judge = answer_judge(ws, judge, judge_all, models_file, concurrency)
    matcher = ItemMatcher(ws.store)  # its question index is built once for every file
    summaries = []
    for file, model in zip(files, models, strict=True):
        summary = import_run(ws, file, model, source, run_id, matcher)
        if chosen_judge is not None:
            summary.judge = judge_with_progress(chosen_judge, ws, summary.run_dir, progress and not as_json)
            refresh_outcomes(summary)
        summaries.append(summary)
    if as_json:
        print_json(summaries[0].as_dict() if len(summaries) == 1 else {"runs": [s.as_dict() for s in summaries]})
        return
    for summary in summaries:
        _print_import(summary)


def _print_import(summary: Any) -> None:
    outcomes = ", ".join(f"{name} {count}" for name, count in summary.outcomes.items())
    by = ", ".join(f"{count} by {how}" for how, count in sorted(summary.matched_by.items()) if count)
    out.print(f"run {summary.run_id}: {summary.matched} of {summary.rows} rows of {summary.path} ({summary.format}) "
              f"imported ({by}; {summary.written} written, {summary.unchanged} already there): {outcomes}",
              highlight=False)
    if summary.external["agree"] or summary.external["disagree"]:
        out.print(f"the file's own verdicts: agree with ours on {summary.external['agree']}, disagree on "
                  f"{summary.external['disagree']} (both kept: `external` in each record)", highlight=False)
    if summary.judge is not None:
        out.print(judge_line(summary.judge), highlight=False)
    if summary.unmatched:
        out.print(f"{len(summary.unmatched)} row(s) not imported:", highlight=False)
        for row in summary.unmatched:
            out.print(f"  row {row.row}: {row.reason}", highlight=False, markup=False)
    out.print(f"log: {summary.run_dir / 'responses.jsonl'}", highlight=False)


def _answer_runs(ws: Workspace) -> list[Any]:
    from evaluation.records import RunManifest
    from evaluation.runlog import MANIFEST, read_manifest

    found = []
    for run_dir in sorted(ws.runs_dir.glob("*")) if ws.runs_dir.is_dir() else []:
        if (run_dir / MANIFEST).is_file():
            manifest = read_manifest(run_dir)
            if isinstance(manifest, RunManifest):
                found.append((run_dir, manifest))
    return found


@runs_app.command("list")
def runs_list_command(workspace: WorkspaceOption = None, as_json: JsonOption = False) -> None:
    """One line per answer run: id, model, records, outcomes."""
    from evaluation.cells import run_cells

    ws = workspace_from(workspace)
    runs = []
    for run_dir, manifest in _answer_runs(ws):
        outcomes = Counter(run_cells(run_dir)["outcome"].to_pylist())
        runs.append({"run_id": manifest.run_id, "model": manifest.model.name, "records": sum(outcomes.values()),
                     "outcomes": dict(sorted(outcomes.items())),
                     "imported": manifest.imported.format if manifest.imported else None})
    if as_json:
        print_json({"runs": runs})
        return
    if not runs:
        out.print(f"no answer runs in {ws.runs_dir}", highlight=False)
    for run in runs:
        counts = ", ".join(f"{name} {count}" for name, count in run["outcomes"].items()) or "no records"
        source = f" (imported from {run['imported']})" if run["imported"] else ""
        out.print(f"{run['run_id']}  {run['model']}  {run['records']} records: {counts}{source}", highlight=False,
                  markup=False)


@runs_app.command("show")
def runs_show_command(
    run: Annotated[str, typer.Argument(help="run id (folder under runs/) or run folder")],
    workspace: WorkspaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """One line per record of a run: item, outcome, the answer read, who decided, the checker."""
    from evaluation.records import AnswerRecord, read_jsonl_records
    from evaluation.runlog import RESPONSES, find_run, read_answer_manifest

    ws = workspace_from(workspace)
    run_dir = find_run(ws.runs_dir, run)
    manifest = read_answer_manifest(run_dir)
    records = read_jsonl_records(run_dir / RESPONSES, AnswerRecord)
    order = [item_id for item_id in manifest.item_ids if item_id in records]
    order += [item_id for item_id in records if item_id not in set(order)]
    rows = []
    for item_id in order:
        record = records[item_id]
        score = record.typed_score()
        rows.append({"item_id": item_id, "outcome": score.outcome, "extracted": score.extracted,
                     "decided_by": score.decided_by, "checker": score.checker, "judge_model": score.judge_model,
                     **({"external": record.external} if record.external else {})})
    if as_json:
        print_json({"run_id": manifest.run_id, "model": manifest.model.name, "records": rows})
        return
    out.print(f"{manifest.run_id}: {manifest.model.name}, {len(rows)} records", highlight=False, markup=False)
    for row in rows:
        who = row["decided_by"] + (f" ({row['judge_model']})" if row["judge_model"] else "")
        extracted = json.dumps(row["extracted"], ensure_ascii=False) if row["extracted"] is not None else "-"
        verdict = (row.get("external") or {}).get("is_correct")
        beside = f"  tool: {'correct' if verdict else 'wrong'}" if isinstance(verdict, bool) else ""
        out.print(f"{row['item_id']}  {row['outcome']}  {extracted}  {who}  {row['checker'] or '-'}{beside}",
                  highlight=False, markup=False)


@runs_app.command("judge")
def runs_judge_command(
    runs: Annotated[list[str], typer.Argument(help="run ids or run folders")],
    workspace: WorkspaceOption = None,
    judge: JudgeOption = None,
    judge_all: JudgeAllOption = False,
    models_file: ModelsFileOption = None,
    concurrency: ConcurrencyOption = 8,
    progress: ProgressOption = True,
    as_json: JsonOption = False,
) -> None:
    """Judge the answers of runs that no checker decided (every answer with --judge-all)."""
    from evaluation.runlog import find_run

    ws = workspace_from(workspace)
    chosen = answer_judge(ws, judge, judge_all, models_file, concurrency)
    if chosen is None:
        raise BenchsmithError("no judge: give --judge SPEC (or set [judge] model in benchsmith.toml)")
    summaries = [judge_with_progress(chosen, ws, find_run(ws.runs_dir, name), progress and not as_json)
                 for name in runs]
    if as_json:
        print_json({"runs": summaries})
        return
    for summary in summaries:
        out.print(judge_line(summary), highlight=False)
