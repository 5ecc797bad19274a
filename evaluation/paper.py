"""`benchsmith report --paper`: the tables a paper needs, as Markdown and LaTeX.

- leaderboard: accuracy with its item-bootstrap 95% CI per subset (every model on the same
  items of the subset, answered decidedly; see `metrics_table.comparable_items`), the exam score
  (points earned / the paper's total) per paper with points (`exam_score`), the judge's reasoning
  score per axis, the unparseable and error rates and the undecided answers;
- correlations: Kendall τb / Spearman ρ between the metrics across models, and the τb heatmap;
- judge agreement (with expert scores): α and ICC judge vs each expert and the expert mean,
  model-level τb with a CI;
- sections from packages evaluation may not import (`PaperSectionMaker`): the item analysis
  (filtering/irt/paper.py), which the root command registers in `paper_sections.SECTION_MAKERS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from curation.core.errors import MissingExtraError
from curation.core.workspace import Workspace
from evaluation.correlation import correlate_table, correlation_table, plot_heatmap
from evaluation.exam_score import exam_scores
from evaluation.human_verdicts import VerdictSettings
from evaluation.judge_agreement import (
    ScoreSheet,
    agreement_tables,
    judge_agreement,
    judge_scores_from_logs,
    read_expert_scores,
)
from evaluation.metrics import RunData, bootstrap_ci
from evaluation.metrics_table import (
    MetricTable,
    comparable_items,
    latest_per_model,
    metrics_from_runs,
    reasoning_columns,
)
from evaluation.paper_sections import PaperSectionMaker
from evaluation.text_tables import TextTable, write_table

PAPER_DIR = "paper"


@dataclass
class PaperFiles:
    out_dir: Path
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    heatmap: Path | None = None


def _pct_ci(values: list[bool], seed: int, resamples: int) -> str:
    array = np.array(values, dtype=float)
    ci = bootstrap_ci(array, seed, resamples)
    return "—" if ci is None else f"{100 * array.mean():.1f} [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _rate(run: RunData, outcome: str) -> str:
    """The share of the run's decided answers with this outcome (undecided ones wait, outside)."""
    total = len(run.decided_ids)
    return "—" if not total else f"{100 * sum(o == outcome for o in run.outcomes) / total:.1f}"


def _undecided(run: RunData) -> str:
    return str(len(run.item_ids) - len(run.decided_ids))


def leaderboard(runs: list[RunData], *, seed: int = 0, resamples: int = 2000) -> tuple[TextTable, list[str]]:
    """One row per model and configuration; subsets on the same items for every model."""
    chosen, notes = latest_per_model(runs)
    groups: dict[str, dict[str, RunData]] = {}
    for (model, config), run in chosen.items():
        groups.setdefault(config, {})[model] = run
    subsets: list[str] = []
    cells: dict[tuple[str, str], dict[str, str]] = {}
    axes: list[str] = []
    for config, by_model in sorted(groups.items()):
        for chosen_items in comparable_items(by_model):
            if chosen_items.subset not in subsets:
                subsets.append(chosen_items.subset)
            if chosen_items.note:
                notes.append(f"{config} · {chosen_items.subset}: {chosen_items.note}")
            for model, items in chosen_items.items.items():
                outcome_of = by_model[model].outcome_of
                cells.setdefault((model, config), {})[chosen_items.subset] = _pct_ci(
                    [outcome_of[i] == "correct" for i in sorted(items)], seed, resamples)
        reasoning = MetricTable()
        reasoning_columns(by_model, "reasoning", reasoning)
        notes += [f"{config} · {note}" for note in reasoning.notes]
        for metric, values in reasoning.columns.items():
            axis = metric.removeprefix("reasoning")
            axes += [axis] if axis not in axes else []
            for model, value in values.items():
                cells.setdefault((model, config), {})[axis] = f"{value:.2f}"
    papers: list[str] = []
    for key, run in chosen.items():
        for score in exam_scores(run):
            papers += [score.paper] if score.paper not in papers else []
            cells.setdefault(key, {})[f"points: {score.paper}"] = f"{score.earned:g}/{score.total:g}"
    header = ["model", "prompt", *subsets, *(f"points: {paper}" for paper in sorted(papers)),
              *(f"reasoning{axis}" for axis in axes), "unparseable %", "error %", "undecided"]
    rows = []
    for (model, config), run in sorted(chosen.items()):
        shown = cells.get((model, config), {})
        rows.append([model, config, *(shown.get(s, "n/s") for s in subsets),
                     *(shown.get(f"points: {paper}", "—") for paper in sorted(papers)), *(shown.get(a, "—") for a in axes),
                     _rate(run, "unparseable"), _rate(run, "error"), _undecided(run)])
    caption = ("Accuracy (%) with item-bootstrap 95% CI; each subset on the same items for every model, answered "
               "and decided (n/s: the model was sent none of the subset's items)"
               + ("; points: the exam score, raw points earned / the paper's total (배점)" if papers else "")
               + "; reasoning: judge score (total 4–20, axes 1–5); unparseable and error rates over the items "
               "answered and decided; undecided: answers waiting for a judge or a person (outside every n).")
    return TextTable(header, rows, caption), notes


def write_paper(runs: list[RunData], out_dir: Path, *, seed: int = 0, resamples: int = 2000,
                expert_scores: Path | None = None, charts: bool = True,
                verdicts: VerdictSettings | None = None) -> PaperFiles:
    out_dir.mkdir(parents=True, exist_ok=True)
    result = PaperFiles(out_dir)
    board, notes = leaderboard(runs, seed=seed, resamples=resamples)
    result.notes += notes
    result.files += write_table(board, out_dir, "leaderboard")
    table = metrics_from_runs(runs)
    metrics = [m for m, values in table.columns.items() if len(values) >= 2]
    if len(metrics) >= 2 and len(table.models) >= 3:
        correlations = correlate_table(table, metrics, seed=seed, resamples=min(resamples, 1000))
        result.files += write_table(correlation_table(correlations, min(resamples, 1000)), out_dir, "correlation")
        if charts:
            try:
                result.heatmap = plot_heatmap(correlations, metrics, out_dir / "correlation.png",
                                              f"Kendall τb across {len(table.models)} models")
                result.files.append(result.heatmap)
            except MissingExtraError as missing:
                result.notes.append(f"heatmap left out: {missing}")
    else:
        result.notes.append("correlations need three or more models and two metrics: left out")
    if expert_scores is not None:
        sheet = ScoreSheet(read_expert_scores(expert_scores), judge_scores_from_logs(runs))
        items, models = agreement_tables(judge_agreement(sheet, seed=seed, resamples=min(resamples, 1000)))
        result.files += write_table(items, out_dir, "judge_agreement_items")
        result.files += write_table(models, out_dir, "judge_agreement_models")
    from evaluation.error_analysis import category_table, error_breakdown, subject_table

    errors = error_breakdown(runs, verdicts or VerdictSettings())
    if not errors.empty:  # people's verdicts on these runs: why each model is wrong
        result.files += write_table(category_table(errors, runs), out_dir, "error_categories")
        result.files += write_table(subject_table(errors, runs), out_dir, "error_categories_subjects")
    return result


def paper_section(paper: PaperFiles, report_dir: Path) -> str:
    """The Markdown that links the paper tables (and shows the heatmap) from report.md."""
    lines = ["", "## Paper tables", ""]
    for path in paper.files:
        if path.suffix == ".md":
            lines += [path.read_text(encoding="utf-8"), ""]
    if paper.heatmap is not None:
        lines.append(f"![correlation heatmap]({paper.heatmap.relative_to(report_dir).as_posix()})")
    lines += [f"LaTeX: {', '.join(p.relative_to(report_dir).as_posix() for p in paper.files if p.suffix == '.tex')}"]
    lines += [f"> {note}" for note in paper.notes]
    return "\n".join(lines) + "\n"


def add_paper_to_report(runs: list[RunData], markdown: Path, *, seed: int = 0, resamples: int = 2000,
                        expert_scores: Path | None = None, charts: bool = True, ws: Workspace | None = None,
                        sections: Sequence[PaperSectionMaker] = ()) -> PaperFiles:
    """Write the paper tables under REPORT_DIR/paper/ and append them to report.md; with a workspace,
    also each of `sections`."""
    from evaluation.human_verdicts import verdict_settings

    paper = write_paper(runs, markdown.parent / PAPER_DIR, seed=seed, resamples=resamples,
                        expert_scores=expert_scores, charts=charts,
                        verdicts=verdict_settings(ws.root) if ws is not None else None)
    text = paper_section(paper, markdown.parent)
    for make in sections:
        if ws is not None:
            extra = make(ws, runs, paper.out_dir, seed=seed, charts=charts)
            paper.files += extra.files
            paper.notes += extra.notes
            text += extra.markdown
    with markdown.open("a", encoding="utf-8") as handle:
        handle.write(text)
    return paper

