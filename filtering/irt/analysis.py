"""Per-item and per-model figures from a 2PL fit of the answers: share correct, item–rest
correlation, difficulty and discrimination with bootstrap intervals over models, the share of
models choosing each option (overall and among the strongest third), the top distractor, and
each model's ability with its standard error."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from curation.core.errors import BenchsmithError
from evaluation.runlog import now_iso
from filtering.irt.records import ItemAnalysis, ItemStats, ModelAbility
from filtering.irt.responses import Responses
from filtering.irt.twopl import TwoPL, bootstrap_items, fit_2pl

METHOD = "2PL, joint MAP (θ~N(0,1); normal item priors learned across items); intervals: model bootstrap, abilities held"


@dataclass
class Analysis:
    responses: Responses
    fit: TwoPL
    n: np.ndarray  # per item, models with a determined answer
    share: np.ndarray  # per item, NaN without answers
    item_rest: np.ndarray  # per item, NaN where undefined
    a_low: np.ndarray
    a_high: np.ndarray
    b_low: np.ndarray
    b_high: np.ndarray
    strong: np.ndarray  # per model: among the strongest third by ability
    option_share: np.ndarray | None  # items × options
    option_share_strong: np.ndarray | None
    bootstrap: int
    level: float
    notes: list[str] = field(default_factory=list)


def usable(responses: Responses) -> tuple[Responses, list[str]]:
    """The models that answered something; a clear error when fewer than two are left."""
    notes = []
    silent = responses.models_without_answers()
    if silent:
        notes.append(f"{len(silent)} model(s) without a determined answer left out: {', '.join(silent[:10])}")
        keep = np.flatnonzero(responses.answered.sum(axis=1) > 0)
        responses = responses.take(models=keep)
    if len(responses.models) < 2:
        found = ", ".join(responses.models) or "none"
        raise BenchsmithError(f"item analysis needs determined answers from at least 2 models; found "
                              f"{len(responses.models)} ({found})" + (f"; {notes[0]}" if notes else ""))
    if not responses.items:
        raise BenchsmithError("item analysis found no items with current answers")
    return responses, notes


def analyse(responses: Responses, bootstrap: int = 30, level: float = 0.9, seed: int = 0) -> Analysis:
    responses, notes = usable(responses)
    answered = responses.answered
    y = np.nan_to_num(responses.correct)
    w = answered.astype(float)
    fit = fit_2pl(y, w)
    if not fit.converged:
        notes.append(f"the fit stopped after {fit.iterations} rounds before every item settled")
    n = answered.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = (y * w).sum(axis=0) / n
    tail = (1 - level) / 2
    if bootstrap > 0:
        a_draws, b_draws = bootstrap_items(y, w, fit, bootstrap, seed)
        a_low, a_high = np.quantile(a_draws, [tail, 1 - tail], axis=0)
        b_low, b_high = np.quantile(b_draws, [tail, 1 - tail], axis=0)
    else:
        a_low = a_high = b_low = b_high = np.full(len(responses.items), np.nan)
    strong = fit.theta >= np.quantile(fit.theta, 2 / 3)
    option_share = option_share_strong = None
    if responses.choice is not None:
        option_share = option_shares(responses.choice, _option_count(responses))
        option_share_strong = option_shares(responses.choice[strong], _option_count(responses))
    return Analysis(responses, fit, n, share, item_rest(y, w), a_low, a_high, b_low, b_high, strong, option_share,
                    option_share_strong, bootstrap, level, notes)


def item_rest(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per item: Pearson correlation, across the models that answered it, between the item and
    each model's share correct on the other items it answered."""
    total, count = (y * w).sum(axis=1, keepdims=True), w.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        rest = np.where(count - w > 0, (total - y * w) / (count - w), 0.0)
        n = w.sum(axis=0)
        mean_y, mean_r = (w * y).sum(axis=0) / n, (w * rest).sum(axis=0) / n
        dy, dr = w * (y - mean_y), w * (rest - mean_r)
        r = (dy * dr).sum(axis=0) / np.sqrt((dy * dy).sum(axis=0) * (dr * dr).sum(axis=0))
    return np.where(np.isfinite(r), r, np.nan)


def _option_count(responses: Responses) -> int:
    stated = int(responses.options.max(initial=0)) if responses.options is not None else 0
    chosen = int(responses.choice.max(initial=0)) if responses.choice is not None else 0
    return max(stated, chosen, 1)


def option_shares(choice: np.ndarray, options: int) -> np.ndarray:
    """items × options: the share of the models that chose an option choosing each (NaN: none chose)."""
    counts = np.stack([(choice == o).sum(axis=0) for o in range(1, options + 1)], axis=1).astype(float)
    chose = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chose > 0, counts / chose, np.nan)


def top_distractors(shares: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item, the most chosen wrong option (0: no key or nobody chose a wrong one) and its share."""
    masked = np.nan_to_num(shares, nan=-1.0).copy()
    rows = np.flatnonzero(keys > 0)
    masked[rows, keys[rows] - 1] = -1.0
    best = masked.argmax(axis=1)
    value = masked[np.arange(len(best)), best]
    found = (keys > 0) & (value > 0)
    return np.where(found, best + 1, 0), np.where(found, value, np.nan)


def _num(value: float, digits: int = 4) -> float | None:
    return None if not np.isfinite(value) else round(float(value), digits)


def _shares(row: np.ndarray | None, j: int) -> dict[str, float]:
    if row is None:
        return {}
    return {str(o + 1): round(float(v), 4) for o, v in enumerate(row[j]) if np.isfinite(v)}


def to_record(analysis: Analysis, unparseable_as_wrong: bool = False) -> ItemAnalysis:
    r, fit = analysis.responses, analysis.fit
    keys = r.keys if r.keys is not None else np.zeros(len(r.items), dtype=np.int16)
    distractor, distractor_share = (top_distractors(analysis.option_share, keys) if analysis.option_share is not None
                                    else (np.zeros(len(r.items), dtype=int), np.full(len(r.items), np.nan)))
    items = [ItemStats.model_construct(
        item_id=item_id, content_hash=r.hashes.get(item_id), n=int(analysis.n[j]), share_correct=_num(analysis.share[j]),
        item_rest=_num(analysis.item_rest[j]), difficulty=round(float(fit.b[j]), 4), difficulty_low=_num(analysis.b_low[j]),
        difficulty_high=_num(analysis.b_high[j]), discrimination=round(float(fit.a[j]), 4),
        discrimination_low=_num(analysis.a_low[j]), discrimination_high=_num(analysis.a_high[j]),
        key=int(keys[j]) or None, options=_shares(analysis.option_share, j),
        options_strong=_shares(analysis.option_share_strong, j), top_distractor=int(distractor[j]) or None,
        top_distractor_share=_num(distractor_share[j]),
        unparseable=int(r.unparseable[j]) if r.unparseable is not None else 0)
        for j, item_id in enumerate(r.items)]
    answered = r.answered
    per_model = answered.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        model_share = np.nansum(r.correct, axis=1) / per_model
    models = [ModelAbility(model=m, n=int(per_model[i]), share_correct=_num(model_share[i]), ability=_num(fit.theta[i]),
                           ability_se=_num(fit.theta_se[i])) for i, m in enumerate(r.models)]
    return ItemAnalysis(created_at=now_iso(), source=r.source, method=METHOD, unparseable_as_wrong=unparseable_as_wrong,
                        bootstrap=analysis.bootstrap, level=analysis.level, converged=fit.converged,
                        iterations=fit.iterations, stale_skipped=r.stale_skipped, models=models, items=items,
                        notes=analysis.notes)
