"""`analyze correlate` and `analyze gap`: gather metrics (this workspace's runs and external
tables), then write the correlation matrix or a subset gap as CSV, Markdown (and a heatmap)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from curation.core.errors import BenchsmithError, MissingExtraError
from curation.core.workspace import Workspace
from evaluation.correlation import (
    CSV_HEADER,
    Correlation,
    correlate_table,
    correlation_markdown,
    correlation_rows,
    plot_heatmap,
    write_csv,
)
from evaluation.metrics_table import MetricTable, metrics_from_runs
from filtering.external_tables import (
    Merged,
    TableSource,
    load_aliases,
    load_table,
    merge_tables,
    rename_models,
)
from filtering.gaps import GAP_CSV_HEADER, Gap, gap_rows, metric_gap


def workspace_runs(ws: Workspace, run_ids: list[str] | None = None) -> list:
    """The answer runs of the workspace (all, or the named ones)."""
    from evaluation.metrics import load_run
    from evaluation.records import RunManifest
    from evaluation.runlog import MANIFEST, find_run, read_manifest

    if run_ids:
        dirs = [find_run(ws.runs_dir, run) for run in run_ids]
    else:
        dirs = sorted(p for p in ws.runs_dir.glob("*") if (p / MANIFEST).is_file()) if ws.runs_dir.is_dir() else []
    manifests = [(d, read_manifest(d)) for d in dirs]
    return [load_run(d, ws, manifest=manifest) for d, manifest in manifests if isinstance(manifest, RunManifest)]


def gather_metrics(ws: Workspace | None, tables: list[TableSource], *, aliases_path: Path | None = None,
                   run_ids: list[str] | None = None, same_items: bool = True) -> Merged:
    aliases = load_aliases(aliases_path)
    named: dict[str, MetricTable] = {}
    if ws is not None:
        runs = workspace_runs(ws, run_ids)
        if runs:
            named["runs"] = rename_models(metrics_from_runs(runs, same_items=same_items), aliases)
    for source in tables:
        if source.label in named:
            raise BenchsmithError(f"two sources are labelled {source.label!r}: give one a label (LABEL=FILE)")
        named[source.label] = load_table(source, aliases)
    if not named:
        raise BenchsmithError("no metrics: this workspace has no runs and no --table was given")
    return merge_tables(named)


def select_metrics(table: MetricTable, wanted: list[str] | None) -> list[str]:
    """The named metrics (exact, or `LABEL:` prefixes / bare column names), default all."""
    if not wanted:
        return list(table.columns)
    chosen = []
    for name in wanted:
        found = [m for m in table.columns if m == name or m.split(":", 1)[-1] == name or m.startswith(name + ":")]
        if not found:
            raise BenchsmithError(f"no metric {name!r} (metrics: {', '.join(list(table.columns)[:30])})")
        chosen += [m for m in found if m not in chosen]
    return chosen


@dataclass
class CorrelateResult:
    results: list[Correlation]
    metrics: list[str]
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unmatched: dict[str, list[str]] = field(default_factory=dict)


def _unmatched_lines(unmatched: dict[str, list[str]]) -> list[str]:
    return [f"only in {source} ({len(models)}): {', '.join(models)}" for source, models in unmatched.items()]


def write_metrics_csv(table: MetricTable, metrics: list[str], path: Path) -> Path:
    rows: list[list[object]] = [[model, *(table.columns[m].get(model, "") for m in metrics)] for model in table.models]
    return write_csv(path, ["model", *metrics], rows)


def run_correlate(merged: Merged, wanted: list[str] | None, out_dir: Path, *, seed: int = 0, resamples: int = 1000,
                  charts: bool = True) -> CorrelateResult:
    metrics = select_metrics(merged.table, wanted)
    if len(metrics) < 2:
        raise BenchsmithError(f"correlate needs two or more metrics (found: {', '.join(metrics) or 'none'})")
    out_dir.mkdir(parents=True, exist_ok=True)
    results = correlate_table(merged.table, metrics, seed=seed, resamples=resamples)
    result = CorrelateResult(results, metrics, notes=list(merged.table.notes), unmatched=merged.unmatched)
    result.files.append(write_csv(out_dir / "correlation.csv", CSV_HEADER, correlation_rows(results)))
    result.files.append(write_metrics_csv(merged.table, metrics, out_dir / "metrics.csv"))
    if charts:
        try:
            result.files.append(plot_heatmap(results, metrics, out_dir / "correlation.png",
                                             f"Kendall τb across {len(merged.table.models)} models"))
        except MissingExtraError as missing:
            result.notes.append(f"heatmap left out: {missing}")
    text = ["# Correlations between metrics", "", correlation_markdown(results, resamples)]
    text += ["![τb heatmap](correlation.png)", ""] if any(f.name == "correlation.png" for f in result.files) else []
    text += [f"- {line}" for line in _unmatched_lines(merged.unmatched) + result.notes]
    markdown = out_dir / "correlation.md"
    markdown.write_text("\n".join(text) + "\n", encoding="utf-8")
    result.files.insert(0, markdown)
    return result


def run_gap(merged: Merged, a: str, b: str, out_dir: Path, *, seed: int = 0, resamples: int = 2000) -> tuple[Gap, list[Path]]:
    table = merged.table
    metric_a, metric_b = (_one_metric(table, name) for name in (a, b))
    gap = metric_gap(table, metric_a, metric_b, seed=seed, resamples=resamples)
    if gap.n == 0:
        raise BenchsmithError(f"no model has both {metric_a} and {metric_b}")
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = write_csv(out_dir / "gap.csv", GAP_CSV_HEADER, gap_rows(gap))
    json_path = out_dir / "gap.json"
    json_path.write_text(json.dumps(asdict(gap), ensure_ascii=False, indent=2), encoding="utf-8")
    return gap, [csv_path, json_path]


def _one_metric(table: MetricTable, name: str) -> str:
    found = select_metrics(table, [name])
    if len(found) != 1:
        raise BenchsmithError(f"{name!r} names {len(found)} metrics ({', '.join(found[:8])}): give the full name")
    return found[0]
