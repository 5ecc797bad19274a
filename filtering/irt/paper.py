"""The item analysis in `report --paper`: a difficulty–discrimination scatter, a Wright map (the
models' abilities beside the items' difficulties) and the top suspects, from the report's runs.

The figures come from `WS/filtering/item_analysis/` (`analyze items` and `analyze suspects`) when
those files describe exactly these runs — the same models and items, every item's content hash
and every item's and model's count and share correct — and otherwise from a fit made here; the
section says which, and why the saved one was not used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from curation.core.errors import BenchsmithError, MissingExtraError
from curation.core.workspace import Workspace
from evaluation.chart_fonts import hangul_charts
from evaluation.filter_records import ITEM_ANALYSIS_FOLDER, Suspect
from evaluation.metrics import RunData
from evaluation.paper_sections import PaperSection
from evaluation.text_tables import TextTable, write_table
from filtering.irt.analysis import analyse, to_record
from filtering.irt.records import ItemAnalysis
from filtering.irt.responses import Responses
from filtering.irt.sources import from_workspace
from filtering.irt.suspects import find_suspects

MIN_MODELS = 10  # below this many models the item figures are shown with a plain warning
SUSPECT_ROWS = 15
MIN_SCORE = 0.2


def too_few_models(models: int) -> str | None:
    if models >= MIN_MODELS:
        return None
    return (f"Only {models} models answered: with fewer than {MIN_MODELS}, item difficulties, discriminations "
            "and suspects rest on too few answers to mean much — read them as an illustration of the method.")


@dataclass
class Fitted:
    record: ItemAnalysis
    suspects: list[Suspect]
    source: str  # one sentence: where the figures come from


def _same(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) < 1e-9)


def saved_mismatch(record: ItemAnalysis, responses: Responses) -> str | None:
    """Why a saved analysis does not describe `responses` (None: it does)."""
    if record.source != "workspace" or record.unparseable_as_wrong:
        return "it was made from a matrix file or with --unparseable-as-wrong"
    if sorted(m.model for m in record.models) != sorted(responses.models):
        return f"its {len(record.models)} models are not this report's {len(responses.models)}"
    if sorted(i.item_id for i in record.items) != sorted(responses.items):
        return f"its {len(record.items)} items are not the {len(responses.items)} these runs answered"
    changed = sum(1 for i in record.items if i.content_hash != responses.hashes.get(i.item_id))
    if changed:
        return f"{changed} item(s) changed content since (content hash)"
    answered = responses.answered
    column = {item: j for j, item in enumerate(responses.items)}
    with np.errstate(invalid="ignore", divide="ignore"):
        item_share = np.nansum(responses.correct, axis=0) / answered.sum(axis=0)
        model_share = np.nansum(responses.correct, axis=1) / answered.sum(axis=1)
    for item in record.items:
        j = column[item.item_id]
        share = round(float(item_share[j]), 4) if np.isfinite(item_share[j]) else None
        if item.n != int(answered[:, j].sum()) or not _same(item.share_correct, share):
            return f"the answers to {item.item_id} differ (the runs were extended or rerun since)"
    row = {model: i for i, model in enumerate(responses.models)}
    for model in record.models:
        i = row[model.model]
        share = round(float(model_share[i]), 4) if np.isfinite(model_share[i]) else None
        if model.n != int(answered[i].sum()) or not _same(model.share_correct, share):
            return f"the answers of {model.model} differ"
    return None


def _saved(folder: Path, responses: Responses) -> tuple[Fitted | None, str]:
    analysis_file, suspects_file = folder / "item_analysis.json", folder / "suspects.json"
    if not analysis_file.is_file() or not suspects_file.is_file():
        return None, f"no saved analysis in {folder} (`benchsmith analyze items` and `analyze suspects` write one)"
    try:
        record = ItemAnalysis.model_validate_json(analysis_file.read_text(encoding="utf-8"))
        saved = json.loads(suspects_file.read_text(encoding="utf-8"))
        suspects = [Suspect.model_validate(row) for row in saved["suspects"]]
    except (OSError, ValueError, KeyError, TypeError, ValidationError) as error:
        return None, f"{folder} could not be read ({type(error).__name__})"
    why = saved_mismatch(record, responses)
    if why is None and (saved.get("items"), saved.get("models")) != (len(record.items), len(record.models)):
        why = "suspects.json was made from other answers than item_analysis.json"
    if why is None and any(s.content_hash != responses.hashes.get(s.item_id) for s in suspects):
        why = "suspects.json names items whose content changed since"
    if why is not None:
        return None, f"the saved analysis in {folder} was not used: {why}"
    return Fitted(record, suspects, f"Reused `{analysis_file}` (made {record.created_at}) and `suspects.json`: "
                  "their models, items, content hashes and every item's and model's answer count and share "
                  "correct match this report's runs."), ""


def fit_for_report(ws: Workspace, runs: list[RunData], *, seed: int = 0, bootstrap: int = 30) -> Fitted:
    """The item analysis of these runs: the saved one when it describes them, else fitted now."""
    responses = from_workspace(ws, run_ids=[run.run_id for run in runs])
    other = sum(1 for run in runs if run.manifest.variant != "implicit")
    left_out = f" ({other} run(s) on explicit variants left out: the analysis is of the items as stored)" if other else ""
    fitted, why = _saved(ws.root / ITEM_ANALYSIS_FOLDER, responses)
    if fitted is not None:
        fitted.source += left_out
        return fitted
    analysis = analyse(responses, bootstrap, seed=seed)
    record = to_record(analysis)
    return Fitted(record, find_suspects(analysis, MIN_SCORE),
                  f"Fitted from this report's runs ({len(record.items)} items × {len(record.models)} models, "
                  f"{bootstrap} model resamples; {record.stale_skipped} stale records skipped){left_out}; {why}.")


def suspects_table(fitted: Fitted, rows: int = SUSPECT_ROWS) -> TextTable:
    def num(value: float | None, digits: int = 2) -> str:
        return "—" if value is None else f"{value:.{digits}f}"

    def reasons(suspect: Suspect) -> str:
        text = "; ".join(suspect.reasons)
        return text if len(text) <= 140 else text[:139] + "…"

    body = [[str(rank), s.item_id, num(s.score, 3), s.key_shown(),
             f"{s.consensus_shown()} ({num(s.consensus_posterior)})" if s.consensus_shown() else "—",
             num(s.key_wrong_posterior), num(s.discrimination), num(s.share_correct), str(s.n), reasons(s)]
            for rank, s in enumerate(fitted.suspects[:rows], start=1)]
    caption = (f"Top suspect items of {len(fitted.record.items)} ({len(fitted.suspects)} score at least {MIN_SCORE}; "
               f"{len(fitted.record.models)} models): score = 1 − Π(1 − s) over the signals; consensus: the option "
               "(an open item's normalised answer) the models' answers point to, with its posterior; P(key wrong) "
               "from the consensus models.")
    return TextTable(["#", "item", "score", "key", "consensus", "P(key wrong)", "discrimination", "share correct", "n",
                      "reasons"], body, caption)


def _display_names(models: list[str]) -> list[str]:
    """Matrix labels without their settings digest, unless two would then read the same."""
    short = [m.split("#")[0] for m in models]
    return short if len(set(short)) == len(short) else models


@hangul_charts()
def plot_scatter(fitted: Fitted, path: Path) -> Path:
    plt = _pyplot()
    items = fitted.record.items
    flagged = {s.item_id for s in fitted.suspects}
    b = np.array([i.difficulty for i in items])
    a = np.array([i.discrimination for i in items])
    mark = np.array([i.item_id in flagged for i in items], dtype=bool)
    figure, axes = plt.subplots(figsize=(6.0, 4.5), dpi=110)
    axes.scatter(b[~mark], a[~mark], s=14, color="#4c72b0", alpha=0.7, label="items")
    if mark.any():
        axes.scatter(b[mark], a[mark], s=22, color="#c44e52", label=f"suspects (score ≥ {MIN_SCORE})")
    at: dict[tuple[float, float], list[str]] = {}  # items on the same point share one label
    by_id = {i.item_id: i for i in items}
    for suspect in fitted.suspects[:8]:
        stats = by_id[suspect.item_id]
        at.setdefault((round(stats.difficulty, 2), round(stats.discrimination, 2)), []).append(suspect.item_id)
    for (x, y), ids in at.items():
        axes.annotate(ids[0] + (f" +{len(ids) - 1}" if len(ids) > 1 else ""), (x, y), fontsize=6,
                      xytext=(3, 3), textcoords="offset points")
    axes.axhline(0, color="grey", linewidth=0.6)
    axes.set_xlabel("difficulty b")
    axes.set_ylabel("discrimination a")
    axes.set_title(f"{len(items)} items × {len(fitted.record.models)} models (2PL)", fontsize=9)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


@hangul_charts()
def plot_wright_map(fitted: Fitted, path: Path) -> Path:
    plt = _pyplot()
    models = [m for m in fitted.record.models if m.ability is not None]
    names = _display_names([m.model for m in models])
    theta = np.array([m.ability for m in models], dtype=float)
    b = np.array([i.difficulty for i in fitted.record.items])
    low, high = float(min(theta.min(initial=0), b.min(initial=0))) - 0.5, float(max(theta.max(initial=0),
                                                                                   b.max(initial=0))) + 0.5
    height = max(4.5, min(12.0, 0.25 * len(models) + 2))
    figure, (left, right) = plt.subplots(1, 2, sharey=True, figsize=(8.0, height), dpi=110,
                                         gridspec_kw={"width_ratios": [1.3, 1]})
    left.scatter(np.zeros(len(theta)), theta, s=16, color="#55a868")
    if len(models) <= 40:  # beyond this the names overlap into noise
        # names in ability order at evenly spaced heights, each joined to its point
        slots = np.linspace(low + 0.3, high - 0.3, len(models)) if len(models) > 1 else theta
        for slot, m in zip(slots, np.argsort(theta, kind="stable").tolist(), strict=True):
            left.plot([0, 0.25], [theta[m], slot], color="grey", linewidth=0.5)
            left.text(0.28, slot, f"{names[m]} ({theta[m]:.2f})", fontsize=6, va="center")
    left.set_xlim(-0.1, 1.6)
    left.set_xticks([])
    left.set_ylabel("logit scale: ability θ (models), difficulty b (items)")
    left.set_title(f"{len(models)} models", fontsize=9)
    right.hist(b, bins=min(40, max(5, len(b) // 3)), range=(low, high), orientation="horizontal", color="#4c72b0")
    right.set_xlabel("items")
    right.set_title(f"{len(b)} items", fontsize=9)
    right.set_ylim(low, high)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def _pyplot():  # noqa: ANN202
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtraError("report", "matplotlib") from None
    return plt


def item_analysis_section(ws: Workspace, runs: list[RunData], out_dir: Path, *, seed: int = 0,
                          charts: bool = True) -> PaperSection:
    """The report's item-analysis section: files under out_dir, Markdown linking them from out_dir's parent."""
    lines = ["", "## Item analysis of these runs (2PL)", ""]
    try:
        fitted = fit_for_report(ws, runs, seed=seed)
    except BenchsmithError as error:
        return PaperSection("\n".join([*lines, f"Left out: {error}.", ""]), [], [f"item analysis left out: {error}"])
    files: list[Path] = []
    notes = []
    caveat = too_few_models(len(fitted.record.models))
    if caveat:
        lines += [f"> **{caveat}**", ""]
        notes.append(caveat)
    lines += [fitted.source, ""] + [f"- note: {note}" for note in fitted.record.notes]
    if fitted.record.notes:
        lines.append("")
    report_dir = out_dir.parent
    if charts:
        try:
            scatter = plot_scatter(fitted, out_dir / "item_scatter.png")
            wright = plot_wright_map(fitted, out_dir / "wright_map.png")
            files += [scatter, wright]
            lines += [f"![difficulty–discrimination scatter]({scatter.relative_to(report_dir).as_posix()})",
                      f"![Wright map]({wright.relative_to(report_dir).as_posix()})", ""]
        except MissingExtraError as missing:
            lines += [f"Charts left out: {missing}", ""]
            notes.append(f"item-analysis charts left out: {missing}")
    table = suspects_table(fitted)
    files += write_table(table, out_dir, "suspects")
    if not fitted.suspects:
        lines += [f"No item scored {MIN_SCORE} or more as a suspect.", ""]
    lines += [(out_dir / "suspects.md").read_text(encoding="utf-8"),
              f"LaTeX: {(out_dir / 'suspects.tex').relative_to(report_dir).as_posix()}", ""]
    return PaperSection("\n".join(lines), files, notes)
