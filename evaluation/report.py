"""`benchsmith report`: Markdown and CSV tables, a radar chart and per-subset bars.

accuracy.csv: per run and subset, n (undecided left out: `metrics`), correct, the interval, the
unparseable, error, not sent, not answered and undecided counts, the accuracy were every
undecided answer wrong or right, and the outcomes a judge or a person decided. exam_scores.csv
(where items carry points): per run and paper, the points earned out of its total
(`exam_score`).

matplotlib is imported only here and only for the charts (extra `report`); without it the
tables are still written and the report says the charts were left out.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from pathlib import Path

from curation.core.errors import MissingExtraError
from evaluation.chart_fonts import hangul_charts
from evaluation.exam_score import PaperScore, exam_scores, paper_cell
from evaluation.human_verdicts import VerdictSettings
from evaluation.metrics import (
    ReasoningScore,
    RunData,
    SubsetScore,
    accuracy_by_subsets,
    common_items,
    reasoning_scores,
    subset_order,
)


@dataclass
class RunReport:
    run: RunData
    subsets: list[SubsetScore]
    reasoning: list[ReasoningScore]
    papers: list[PaperScore] = field(default_factory=list)  # the exam score per paper with points


@dataclass
class ReportFiles:
    out_dir: Path
    markdown: Path
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _cell(score: SubsetScore | None) -> str:
    if score is None:
        return "—"
    if score.n == 0:
        return f"not sent ({score.not_sent})" if score.not_sent else "—"
    low, high = score.ci or (None, None)
    return f"{_pct(score.accuracy)} [{_pct(low)}, {_pct(high)}] ({'; '.join(_counts(score))})"


def _counts(score: SubsetScore) -> list[str]:
    """n, who decided besides the checkers, and what waits (undecided, outside n)."""
    parts = [f"n={score.n}"]
    deciders = [f"{count} by {who}" for count, who in ((score.by_judge, "judge"), (score.by_human, "person")) if count]
    if deciders:
        parts.append(", ".join(deciders))
    if score.undecided:
        parts.append(f"{score.undecided} undecided")
    return parts


def unsent_note(skipped: dict[str, str], counted: bool) -> str:
    """What became of the items a model was not sent: `counted` (a release), in n as not answered."""
    reasons = "; ".join(sorted(set(skipped.values())))
    if counted:
        return f"{len(skipped)} items not answered ({reasons}): counted in n, never correct, as the harnesses count them"
    return f"{len(skipped)} items not sent ({reasons}); its denominators leave them out"


def build_reports(runs: list[RunData], *, seed: int = 0, resamples: int = 2000) -> list[RunReport]:
    common = common_items(runs) if len(runs) > 1 else None
    subsets = accuracy_by_subsets(runs, seed=seed, resamples=resamples, common=common)
    return [RunReport(run, scores, reasoning_scores(run, seed=seed, resamples=resamples), exam_scores(run))
            for run, scores in zip(runs, subsets, strict=True)]


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> None:
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    os.replace(tmp, path)


def _round(value: float | None) -> object:
    return "" if value is None else round(value, 4)


def _accuracy_rows(reports: list[RunReport]) -> list[list[object]]:
    rows = []
    for report in reports:
        for s in report.subsets:
            low, high = s.ci or (None, None)
            if_wrong, if_right = s.bounds or (None, None)
            rows.append([report.run.run_id, report.run.model_name, report.run.manifest.prompt.name, s.subset, s.n,
                         s.correct, _round(s.accuracy), _round(low), _round(high), s.unparseable,
                         _round(s.unparseable_rate), s.error, _round(s.error_rate), s.not_sent, s.not_answered,
                         s.undecided, _round(if_wrong), _round(if_right), s.by_judge, s.by_human])
    return rows


ACCURACY_HEADER = ["run_id", "model", "prompt", "subset", "n", "correct", "accuracy", "ci_low", "ci_high", "unparseable",
                   "unparseable_rate", "error", "error_rate", "not_sent", "not_answered", "undecided",
                   "accuracy_if_undecided_wrong", "accuracy_if_undecided_correct", "decided_by_judge",
                   "decided_by_human"]
EXAM_HEADER = ["run_id", "model", "prompt", "exam", "session", "items", "total_points", "earned_points",
               "undecided_points", "unanswered_points", "correct", "answered", "accuracy", "items_without_points"]


def _exam_rows(reports: list[RunReport]) -> list[list[object]]:
    return [[r.run.run_id, r.run.model_name, r.run.manifest.prompt.name, p.exam, p.session or "", p.items,
             _round(p.total), _round(p.earned), _round(p.undecided), _round(p.unanswered), p.correct, p.answered,
             _round(p.accuracy), p.unpointed] for r in reports for p in r.papers]


def _reasoning_rows(reports: list[RunReport]) -> list[list[object]]:
    rows = []
    for report in reports:
        for r in report.reasoning:
            low, high = r.ci or (None, None)
            rows.append([report.run.run_id, report.run.model_name, r.judge, r.n, r.missing, _round(r.mean), _round(low),
                         _round(high), *(_round(r.axes.get(axis)) for axis in ("factuality", "logical_soundness",
                                                                                "depth", "clarity"))])
    return rows


def _markdown(reports: list[RunReport], charts: list[Path], notes: list[str]) -> str:
    names = subset_order({s.subset for r in reports for s in r.subsets})
    lines = ["# Evaluation report", "",
             "Accuracy in % with the item-bootstrap 95% CI and n (items scored: correct, wrong, unparseable and "
             "error). Undecided answers (read, but no checker could tell; a judge or a person decides) are left "
             "out of n and counted apart; `by judge` / `by person`: outcomes in n that an answer judge or a "
             "person decided, not the checker. accuracy.csv adds the accuracy were every undecided answer "
             "wrong, and were every one right.", ""]
    lines += ["| subset | " + " | ".join(r.run.label for r in reports) + " |",
              "|---|" + "---|" * len(reports)]
    for name in names:
        cells = [_cell(next((s for s in r.subsets if s.subset == name), None)) for r in reports]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "## Runs", "",
              "| run | model | prompt | n | pending | not sent | not answered | unparseable % | error % | undecided | "
              "by judge | by person |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in reports:
        overall = next(s for s in r.subsets if s.subset == "overall")
        lines.append(f"| `{r.run.run_id}` | {r.run.model_name} | {r.run.manifest.prompt.version} | {overall.n} | "
                     f"{r.run.pending()} | {overall.not_sent} | {overall.not_answered} | "
                     f"{_pct(overall.unparseable_rate)} | {_pct(overall.error_rate)} | {overall.undecided} | "
                     f"{overall.by_judge} | {overall.by_human} |")
    for r in reports:
        if r.run.skipped:
            lines.append(f"\n{r.run.model_name}: {unsent_note(r.run.skipped, r.run.dataset.scores_every_item)}.")
    lines += _exam_section(reports)
    if any(r.reasoning for r in reports):
        lines += ["", "## Reasoning (judge score 4–20)", "", "| run | judge | mean [95% CI] | n | missing verdicts |",
                  "|---|---|---|---|---|"]
        for r in reports:
            for score in r.reasoning:
                low, high = score.ci or (None, None)
                mean = "—" if score.mean is None else f"{score.mean:.2f} [{low:.2f}, {high:.2f}]"
                lines.append(f"| {r.run.model_name} | {score.judge} | {mean} | {score.n} | {score.missing} |")
    if any(s.subset == "common" for r in reports for s in r.subsets):
        lines.append("\n`common`: the items every run in this report answered (same denominator for all).")
    lines += [""] + [f"![{chart.stem}]({chart.name})" for chart in charts] + [f"> {note}" for note in notes]
    return "\n".join(lines) + "\n"


def _exam_section(reports: list[RunReport]) -> list[str]:
    papers = sorted({(p.exam, p.session or "", p.paper) for r in reports for p in r.papers})
    if not papers:
        return []
    lines = ["", "## Exam score (배점)", "",
             "Raw points earned out of the paper's total (the points of its items in the run's selection; an item "
             "not sent or not yet answered earns nothing), and the accuracy on the paper's items with points that "
             "were answered and decided. Undecided points wait for a judge or a person; no partial credit. Per model "
             "and paper in exam_scores.csv.", "",
             "| paper | " + " | ".join(r.run.label for r in reports) + " |", "|---|" + "---|" * len(reports)]
    for _, _, name in papers:
        cells = []
        for r in reports:
            score = next((p for p in r.papers if p.paper == name), None)
            cells.append("—" if score is None else f"{paper_cell(score)} · {_pct(score.accuracy)}%")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    unpointed = {p.paper: p.unpointed for r in reports for p in r.papers if p.unpointed}
    lines += [f"\n{name}: {count} item(s) without points, left out of the total." for name, count in unpointed.items()]
    return lines


@hangul_charts()
def _charts(reports: list[RunReport], out_dir: Path) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtraError("report", "matplotlib") from None
    import numpy as np

    names = [n for n in subset_order({s.subset for r in reports for s in r.subsets})
             if any(s.subset == n and s.n for r in reports for s in r.subsets)][:16]

    def value(report: RunReport, name: str) -> SubsetScore | None:
        return next((s for s in report.subsets if s.subset == name and s.n), None)

    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(names) * max(1, len(reports)) / 2 + 3), 4.5))
    width = 0.8 / max(1, len(reports))
    for index, report in enumerate(reports):
        scores = [value(report, name) for name in names]
        heights = [100 * s.accuracy if s and s.accuracy is not None else 0.0 for s in scores]
        errors = np.array([[100 * (s.accuracy - s.ci[0]), 100 * (s.ci[1] - s.accuracy)]
                           if s and s.ci and s.accuracy is not None else [0, 0]
                           for s in scores]).T
        ax.bar(np.arange(len(names)) + index * width, heights, width, yerr=errors, capsize=2, label=report.run.label)
    ax.set_xticks(np.arange(len(names)) + width * (len(reports) - 1) / 2, names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7)
    fig.tight_layout()
    bars = out_dir / "subsets.png"
    fig.savefig(bars, dpi=110)
    plt.close(fig)

    radar = out_dir / "radar.png"
    angles = np.linspace(0, 2 * np.pi, max(3, len(names)), endpoint=False)
    fig = plt.figure(figsize=(5.5, 5.5))
    ax = fig.add_subplot(projection="polar")
    for report in reports:
        values = [100 * s.accuracy if (s := value(report, name)) and s.accuracy is not None else 0.0 for name in names]
        values += [0.0] * (len(angles) - len(values))
        ax.plot(np.append(angles, angles[0]), values + values[:1], label=report.run.label)
        ax.fill(np.append(angles, angles[0]), values + values[:1], alpha=0.1)
    ax.set_xticks(angles[: len(names)], names, fontsize=7)
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7, loc="lower right", bbox_to_anchor=(1.25, -0.1))
    fig.tight_layout()
    fig.savefig(radar, dpi=110)
    plt.close(fig)
    return [radar, bars]


def write_report(runs: list[RunData], out_dir: Path, *, seed: int = 0, resamples: int = 2000,
                 charts: bool = True, verdicts: VerdictSettings | None = None) -> ReportFiles:
    """report.md, the CSVs and the charts; with people's verdicts on the runs' responses, also their
    errors by category and subject (errors.csv; `verdicts`: the workspace's taxonomy)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    reports = build_reports(runs, seed=seed, resamples=resamples)
    result = ReportFiles(out_dir, out_dir / "report.md", notes=[note for run in runs for note in run.notes])
    accuracy_csv, reasoning_csv = out_dir / "accuracy.csv", out_dir / "reasoning.csv"
    _write_csv(accuracy_csv, ACCURACY_HEADER, _accuracy_rows(reports))
    _write_csv(reasoning_csv, ["run_id", "model", "judge", "n", "missing", "mean_total", "ci_low", "ci_high",
                               "factuality", "logical_soundness", "depth", "clarity"], _reasoning_rows(reports))
    result.files += [accuracy_csv, reasoning_csv]
    if any(r.papers for r in reports):
        exam_csv = out_dir / "exam_scores.csv"
        _write_csv(exam_csv, EXAM_HEADER, _exam_rows(reports))
        result.files.append(exam_csv)
    chart_files: list[Path] = []
    if charts:
        try:
            chart_files = _charts(reports, out_dir)
        except MissingExtraError as missing:
            result.notes.append(f"charts left out: {missing}")
    result.files += chart_files
    from evaluation.error_analysis import CSV_HEADER, csv_rows, error_breakdown, markdown_section

    errors = error_breakdown(runs, verdicts or VerdictSettings())
    errors_md = ""
    if not errors.empty:
        errors_csv = out_dir / "errors.csv"
        _write_csv(errors_csv, CSV_HEADER, csv_rows(errors))
        result.files.append(errors_csv)
        errors_md = markdown_section(errors, runs)
    result.markdown.write_text(_markdown(reports, chart_files, result.notes) + errors_md, encoding="utf-8")
    result.files.insert(0, result.markdown)
    return result
