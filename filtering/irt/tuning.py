"""How far a bank's 2PL carries over to a model of a family it was not fitted on, measured by
leaving each calibrating family out in turn: the 2PL fitted on the other families, each held-out
model tested adaptively answering from its own row, its estimate set against its share correct on
every item it answered.

The same cross-validation sets what the bank cannot know from its own fit, for each of a few test
lengths (k/4, k/2, k and 2k): the likelihood weight of the adaptive test (of `WEIGHTS`, the one
whose estimates erred least at that length, each held-out model tested `REPEATS` times; one weight
for every length did worse, and so did a weight chosen on random subsets instead of adaptive
tests, which picked 1 on CommonsenseQA where 0.15–0.25 does best) and the scale of its interval (split-conformal: the
⌈(n + 1)·0.9⌉-th smallest of the n held-out models' |error| / standard error, over the normal 90%
point, so that the interval holds for at least 90% of models like the held-out ones). The scale is
cross-fitted: the families are split in two halves, the weight chosen on each half, and the
quantile taken over the other half's errors at that weight, both halves pooled — errors the weight
was chosen on are its luckiest, and a scale set on them held for 84% of QuAIL's held-out models
(87% cross-fitted; 91% / 90% → 90% / 89% on ARC-Challenge / CommonsenseQA). The
validation is then a run of k items with that schedule. Nothing here looks at a model outside the
responses it is given: a benchmark that holds a family out calls this on the others only."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from filtering.irt.adaptive import AdaptiveTest, Setting, simulate
from filtering.irt.families import family_folds
from filtering.irt.responses import Responses
from filtering.irt.twopl import TwoPL, fit_2pl

WEIGHTS = (0.1, 0.15, 0.25, 0.4, 0.6, 1.0)
REPEATS = 3  # tests of each held-out model (different draws) per weight: the choice rests on their mean error
LEVEL = 0.9


@dataclass
class Transfer:
    schedule: list[Setting]
    families: int
    errors: np.ndarray  # per held-out model: estimate − share correct, k items with the schedule
    covered: np.ndarray  # per held-out model: the 90% interval holds its share correct
    asked: np.ndarray  # per held-out model
    rows: np.ndarray  # the held-out models' rows in the responses
    mae_by_weight: dict[float, float]  # at k


def lengths(k: int) -> list[int]:
    return sorted({max(1, k // 4), max(1, k // 2), k, 2 * k})


def leave_families_out(responses: Responses, k: int, facets: Sequence[str | None] | None = None, batch: int = 1,
                       weights: Sequence[float] = WEIGHTS) -> Transfer | None:
    """None with fewer than 3 families."""
    folds = family_folds(responses.models)
    if len(folds) < 3:
        return None
    y = responses.correct
    answered = ~np.isnan(y)
    truth = {row: float(np.nanmean(y[row])) for row in range(len(y)) if answered[row].any()}
    fits: list[tuple[TwoPL, list[int]]] = []
    for fold in folds:
        train = np.setdiff1d(np.arange(len(responses.models)), fold)
        held = [row for row in fold if answered[row].any()]
        if held:
            fits.append((fit_2pl(np.nan_to_num(y[train]), answered[train].astype(float)), held))
    marks = [c for c in lengths(k) if c <= len(responses.items)] or [len(responses.items)]
    errors: dict[tuple[float, int], list[float]] = {(w, c): [] for w in weights for c in marks}
    ses: dict[tuple[float, int], list[float]] = {(w, c): [] for w in weights for c in marks}
    half: list[int] = []  # per error (the same order under every weight): the half of the families its model is in
    for number, (fit, held) in enumerate(fits):  # every weight and repeat side by side: one simulation of held × repeats × weights
        test = AdaptiveTest(responses.items, fit.a, fit.b, fit.theta, facets)
        rows = np.repeat(held, len(weights) * REPEATS)
        seeds = [f"{responses.models[r]}#{n // len(weights) % REPEATS}" for n, r in enumerate(rows)]
        row_weights = np.tile(weights, len(held) * REPEATS)
        found = simulate(test, y[rows], max(marks), seeds, batch, marks, LEVEL, weights=row_weights)
        half += [number % 2] * (len(rows) // len(weights))
        for row, weight, estimates in zip(rows, row_weights, found, strict=True):
            for c in marks:
                errors[weight, c].append(estimates[c].accuracy - truth[row])
                ses[weight, c].append(estimates[c].se)
    schedule = []
    for c in marks:  # a weight per length (one weight for every length, chosen on all of them, did worse)
        mae = {w: float(np.abs(errors[w, c]).mean()) for w in weights}
        best = min(mae, key=mae.__getitem__)
        scale = cross_fitted_scale({w: np.array(errors[w, c]) for w in weights}, {w: np.array(ses[w, c]) for w in weights},
                                   np.array(half))
        schedule.append(Setting(c, best, round(scale, 4)))
    checked = max((c for c in marks if c <= k), default=marks[0])
    rows_out, errors_out, covered, asked = [], [], [], []
    for fit, held in fits:
        test = AdaptiveTest(responses.items, fit.a, fit.b, fit.theta, facets, schedule)
        for row, estimates in zip(held, simulate(test, y[held], checked, [responses.models[r] for r in held], batch,
                                                 level=LEVEL), strict=True):
            estimate = estimates[checked]
            rows_out.append(row)
            errors_out.append(estimate.accuracy - truth[row])
            covered.append(estimate.low <= truth[row] <= estimate.high)
            asked.append(estimate.asked)
    return Transfer(schedule, len(folds), np.array(errors_out), np.array(covered), np.array(asked),
                    np.array(rows_out), {w: round(float(np.abs(errors[w, checked]).mean()), 5) for w in weights})


def cross_fitted_scale(errors: dict[float, np.ndarray], se: dict[float, np.ndarray], half: np.ndarray) -> float:
    """The conformal scale from errors the weight was not chosen on: per half of the families, the
    weight that erred least on it, and the other half's |error| / se at that weight; both pooled."""
    ratios_errors, ratios_se = [], []
    for side in (0, 1):
        chosen = min(errors, key=lambda w: float(np.abs(errors[w][half == side]).mean()))
        ratios_errors.append(np.abs(errors[chosen][half != side]))
        ratios_se.append(se[chosen][half != side])
    return conformal_scale(np.concatenate(ratios_errors), np.concatenate(ratios_se))


def conformal_scale(errors: np.ndarray, se: np.ndarray, level: float = LEVEL) -> float:
    """The factor on the standard errors that makes ±z·se hold `level` of future errors like these
    (split-conformal quantile of |error| / se)."""
    ratios = np.sort(errors / np.maximum(se, 1e-6))
    rank = min(len(ratios), math.ceil((len(ratios) + 1) * level))
    return float(ratios[rank - 1] / norm.ppf(1 - (1 - level) / 2))
