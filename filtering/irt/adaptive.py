"""Adaptive testing on an item bank: each next item drawn by its information at the model's
current ability, and the model's accuracy on every bank item estimated from the few it was asked.

Ability: a posterior on a grid. The prior is the calibrating models' abilities (a kernel density
mixed with a wide normal, `subset.log_prior`); the likelihood of the answers is tempered by the
bank's likelihood weight (item parameters carry over imperfectly from the calibrating families,
and answers on items of one model are not independent given one ability: taken at face value, 100
answers make the posterior far too sure). The bank chooses the weight by leaving each calibrating
family out in turn (`tuning`), one for each of a few test lengths (its `schedule`: the entry of the
smallest length at or above the answers so far, the last beyond it); the selection and the estimate
use the same posterior.

Choice: the next item is drawn at random with probability q ∝ (1 − `UNIFORM`)·√I + `UNIFORM`·mean,
I an item's Fisher information a²·P·(1 − P) averaged over the posterior. Drawing (not taking the
most informative) is the exposure control — two models of one ability are not asked the same
sequence and no item is asked of everyone — and taking the most informative did worse: the items
that look most discriminating on the calibrating families are not so on a new one (on the real
matrices, families held out, K = 100, MAE as a ratio to a random 100-item subset's, ARC-Challenge /
CommonsenseQA / QuAIL: the most informative item with this estimate at likelihood weight 0.25 gave
0.82 / 1.23 / 1.57, drawn 0.81 / 0.85 / 0.73). Where the bank's items carry a facet
(part or subject), q is multiplied by the facet's share in the bank over its share among the items
asked so far (clipped to ½…2): content balancing that leaves every item a chance. A batch of b items
is b draws without replacement from one q. The draws are seeded by the model's name and the
number of answers so far, so a resumed run asks what an uninterrupted one would.

Estimate of accuracy on the N target items: (right answers + Σ over the items without a determined
answer of P(correct) averaged over the posterior) / N. Its standard error: the posterior spread of
that sum and the binomial spread of the unanswered items, times the bank's interval scale (set by
the same cross-validation so that the 90% interval holds for 90% of held-out models). Tried and not
kept, same measure: the 2PL at the posterior plus the asked items' residual weighted by how likely
each draw was (LURE, design-unbiased; this module's previous estimate) 0.95 / 0.92 / 0.82 — the
residual of 100 answers is as noisy as a random subset's share, since even with every answer known
the calibrating models predict a held-out model's single answers barely better than its own mean;
a regression of the unasked items' share on the asked items' share across the calibrating models
0.83 / 0.79 / 0.72 (and of the full share on this estimate 0.76 / 0.79 / 0.71); the calibrating
models' rows weighted by agreement on the asked items 0.71–1.98 (by how sharply agreement weighs).

A model whose determined answers are all right (all wrong) is beyond the calibrated range: the
estimate says so and its interval runs to the highest (lowest) accuracy the answers allow.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.stats import norm

from filtering.irt.subset import GRID, log_prior
from filtering.irt.twopl import probability

LIKELIHOOD_WEIGHT = 1.0  # a bank without a chosen weight (older banks, generated 2PL data)
UNIFORM = 0.2  # share of q spread evenly over the remaining items
BALANCE_CLIP = (0.5, 2.0)
ABOVE, BELOW = "above", "below"

Answer = tuple[int, float | None]  # (item index, 1.0 right / 0.0 wrong / None asked without a determined answer)


@dataclass
class AdaptiveEstimate:
    accuracy: float
    low: float
    high: float
    se: float
    ability: float
    ability_sd: float
    asked: int  # items with a record (any outcome)
    determined: int  # of those, answered right or wrong
    outside: str | None = None  # ABOVE / BELOW: all determined answers right / wrong

    def as_dict(self) -> dict:
        return {"accuracy": self.accuracy, "low": self.low, "high": self.high, "se": self.se,
                "ability": self.ability, "ability_sd": self.ability_sd, "asked": self.asked,
                "determined": self.determined, "outside": self.outside}


@dataclass
class _State:
    """What the answers of several models say, one row per model: the log-likelihood on the grid,
    which items have a record and which are right / wrong."""

    loglik: np.ndarray  # models × grid
    asked: np.ndarray  # models × items, bool
    right: np.ndarray  # models × items, bool
    wrong: np.ndarray  # models × items, bool


class Setting(NamedTuple):
    """For tests of up to `k` answers: the likelihood weight and the factor on the standard error."""

    k: int
    likelihood_weight: float
    interval_scale: float


class AdaptiveTest:
    """One bank's target items (in a fixed order) ready for adaptive tests. Answers are sequences
    of `Answer` in the order the items were drawn."""

    def __init__(self, items: Sequence[str], a: np.ndarray, b: np.ndarray, abilities: Sequence[float] | np.ndarray,
                 facets: Sequence[str | None] | None = None, schedule: Sequence[Setting] = (),
                 uniform: float = UNIFORM):
        self.items = list(items)
        self.position = {item: j for j, item in enumerate(self.items)}
        self.a, self.b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        p = probability(GRID, self.a, self.b)  # grid × items
        np.maximum(p, 1e-9, out=p)
        np.minimum(p, 1 - 1e-9, out=p)
        self.log_p, self.log_q = np.log(p), np.log(1 - p)  # (np.clip and log1p are several times slower here)
        self.p_items = np.ascontiguousarray(p.T)  # items × grid: sums over an item mask are one product
        p *= 1 - p
        self.spread_items = np.ascontiguousarray(p.T)
        # single precision: the proposal's one large product (models × grid × items) at half the cost,
        # and the draws need nothing like double precision
        p *= self.a**2
        self.information = p.astype(np.float32)
        self.prior = log_prior(list(abilities))
        self.schedule = sorted(schedule) or [Setting(0, LIKELIHOOD_WEIGHT, 1.0)]
        self.uniform = uniform
        self.facet_of: np.ndarray | None = None  # items × facets, one-hot
        self.facet_share = np.zeros(0)
        named = {f for f in facets or [] if f}
        if facets is not None and len(named) > 1:
            names, index = np.unique(np.array([f or "" for f in facets], dtype=object), return_inverse=True)
            self.facet_of = np.eye(len(names))[index]
            self.facet_share = self.facet_of.mean(axis=0)

    def setting(self, answers: int) -> Setting:
        return next((s for s in self.schedule if s.k >= answers), self.schedule[-1])

    # --- several models at once (simulations); the one-model methods below go through these. The
    # likelihood weight is one number or one per model (the bank's cross-validation tries several). ---

    def _state(self, answers: Sequence[Sequence[Answer]]) -> _State:
        shape = (len(answers), len(self.items))
        asked, right, wrong = np.zeros(shape, bool), np.zeros(shape, bool), np.zeros(shape, bool)
        for m, given in enumerate(answers):
            for j, value in given:
                asked[m, j] = True
                right[m, j], wrong[m, j] = value == 1.0, value == 0.0
        return _State(right @ self.log_p.T + wrong @ self.log_q.T, asked, right, wrong)

    def _add(self, state: _State, m: int, j: int, value: float | None) -> None:
        state.asked[m, j] = True
        if value == 1.0:
            state.right[m, j] = True
            state.loglik[m] += self.log_p[:, j]
        elif value == 0.0:
            state.wrong[m, j] = True
            state.loglik[m] += self.log_q[:, j]

    def _posteriors(self, loglik: np.ndarray, weight: float | np.ndarray) -> np.ndarray:
        log_post = weight * loglik + self.prior
        post = np.exp(log_post - log_post.max(axis=1, keepdims=True))
        return post / post.sum(axis=1, keepdims=True)

    def _proposals(self, state: _State, weight: float | np.ndarray) -> np.ndarray:
        """q over the items per model: 0 for those asked, the rest summing to 1 (all 0 when none is left)."""
        score = (self._posteriors(state.loglik, weight).astype(np.float32) @ self.information).astype(float)
        np.sqrt(score, out=score)
        if self.facet_of is not None:
            counts = state.asked @ self.facet_of  # models × facets
            shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
            factor = np.clip(self.facet_share / np.maximum(shares, 1e-9), *BALANCE_CLIP)
            factor[counts.sum(axis=1) == 0] = 1.0
            score *= factor @ self.facet_of.T
        score[state.asked] = 0.0
        left = np.maximum(len(self.items) - state.asked.sum(axis=1, keepdims=True), 1)
        score *= (1 - self.uniform) / np.maximum(score.sum(axis=1, keepdims=True), 1e-300)
        score += self.uniform / left
        score[state.asked] = 0.0
        return score

    def _estimates(self, state: _State, level: float, weight: float | np.ndarray,
                   scale: float) -> list[AdaptiveEstimate]:
        total = len(self.items)
        post = self._posteriors(state.loglik, weight)
        open_items = ~(state.right | state.wrong)  # not asked, or asked without a determined answer
        expected = open_items @ self.p_items  # models × grid: Σ P(correct) over the open items
        spread = open_items @ self.spread_items
        z = float(norm.ppf(1 - (1 - level) / 2))
        found = []
        for m in range(len(post)):
            observed, determined = int(state.right[m].sum()), int((state.right[m] | state.wrong[m]).sum())
            mean = float(post[m] @ expected[m])
            point = (observed + mean) / total
            se = scale * float(np.sqrt(post[m] @ (expected[m] - mean) ** 2 + post[m] @ spread[m])) / total
            bounds = observed / total, (observed + int(open_items[m].sum())) / total
            low, high = point - z * se, point + z * se
            outside = None
            if determined and observed == determined and determined < total:
                outside, high = ABOVE, bounds[1]
            elif determined and observed == 0 and determined < total:
                outside, low = BELOW, bounds[0]
            point = float(np.clip(point, *bounds))
            ability = float(post[m] @ GRID)
            found.append(AdaptiveEstimate(
                accuracy=round(point, 4), low=round(max(min(low, point), bounds[0]), 4),
                high=round(min(max(high, point), bounds[1]), 4), se=round(se, 4), ability=round(ability, 4),
                ability_sd=round(float(np.sqrt(post[m] @ (GRID - ability) ** 2)), 4), asked=int(state.asked[m].sum()),
                determined=determined, outside=outside))
        return found

    # --- one model ---

    def posterior(self, answers: Sequence[Answer]) -> np.ndarray:
        return self._posteriors(self._state([answers]).loglik, self.setting(len(answers)).likelihood_weight)[0]

    def proposal(self, answers: Sequence[Answer]) -> np.ndarray:
        """q over the items: 0 for those asked, the rest summing to 1."""
        return self._proposals(self._state([answers]), self.setting(len(answers)).likelihood_weight)[0]

    def next_items(self, answers: Sequence[Answer], count: int = 1, seed: object = 0) -> list[int]:
        """`count` items not asked yet, drawn without replacement from one `proposal`."""
        return _draw(self.proposal(answers)[None], count, [seed], len(answers))[0]

    def estimate(self, answers: Sequence[Answer], level: float = 0.9) -> AdaptiveEstimate:
        setting = self.setting(len(answers))
        return self._estimates(self._state([answers]), level, setting.likelihood_weight, setting.interval_scale)[0]


def _draw(q: np.ndarray, count: int, seeds: Sequence[object], step: int) -> list[list[int]]:
    """Per model (a row of q), `count` items drawn without replacement with probabilities q: the
    inverse of q's running sum at uniforms that are a fixed function of (seed, step, draw), so a
    resumed run draws what an uninterrupted one did, and a simulation of many models draws for each
    what a run of that one would."""
    q = q.copy()
    count = min(count, int((q[0] > 0).sum()) if len(q) else 0)
    keys = np.array([zlib.crc32((seed if isinstance(seed, str) else repr(seed)).encode("utf-8")) for seed in seeds],
                    dtype=np.uint64)
    picked = np.zeros((len(q), count), dtype=int)
    for d in range(count):
        for m, (row, u) in enumerate(zip(q, _uniform(keys, step, d), strict=True)):
            picked[m, d] = j = _inverse_running_sum(row, u)
            row[j] = 0.0
    return picked.tolist()


DRAW_BLOCK = 512


def _inverse_running_sum(q: np.ndarray, u: float) -> int:
    """The first index whose running sum of q exceeds u·Σq, by blocks: the running sum of the block
    sums finds the block, and only that block's own running sum is taken (a bank of 40,000 items
    costs a 40,000-element running sum per draw otherwise)."""
    blocks = np.add.reduceat(q, np.arange(0, len(q), DRAW_BLOCK))
    running = np.cumsum(blocks)
    at = u * running[-1]
    block = min(int(np.searchsorted(running, at, side="right")), len(blocks) - 1)
    start = block * DRAW_BLOCK
    inner = np.cumsum(q[start:start + DRAW_BLOCK]) + (running[block - 1] if block else 0.0)
    return min(start + int(np.searchsorted(inner, at, side="right")), len(q) - 1)


def _uniform(keys: np.ndarray, step: int, draw: int) -> np.ndarray:
    """Numbers in [0, 1), one per key: splitmix64 of (key, step, draw)."""
    x = keys * np.uint64(0x9E3779B97F4A7C15) + np.uint64((step << 16) + draw + 1)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(11)).astype(float) / float(1 << 53)


def simulate(test: AdaptiveTest, rows: np.ndarray, k: int, seeds: Sequence[object], batch: int = 1,
             checkpoints: Sequence[int] = (), level: float = 0.9,
             weights: np.ndarray | None = None) -> list[dict[int, AdaptiveEstimate]]:
    """Adaptive tests of models whose answers are `rows` (models × items of `test`: 1, 0, or NaN for
    no determined answer), offline and side by side, each drawing what `next_items` would draw for
    it (seeded by its entry of `seeds`): per model, the estimate at each checkpoint below k and at k.
    `weights`: a likelihood weight per model in place of the schedule's (standard errors unscaled)."""
    rows = np.atleast_2d(rows)

    def setting(answers: int) -> tuple[float | np.ndarray, float]:
        if weights is not None:
            return np.asarray(weights, dtype=float)[:, None], 1.0
        return test.setting(answers).likelihood_weight, test.setting(answers).interval_scale

    marks = sorted({c for c in checkpoints if c < k} | {k})
    found: list[dict[int, AdaptiveEstimate]] = [{} for _ in rows]
    state = test._state([[] for _ in rows])
    steps = 0
    while steps < k:
        count = min(batch, k - steps)
        picked = _draw(test._proposals(state, setting(steps)[0]), count, seeds, steps)
        for m, (row, drawn) in enumerate(zip(rows, picked, strict=True)):
            for j in drawn:
                test._add(state, m, j, None if np.isnan(row[j]) else float(row[j]))
        steps += count
        reached = [c for c in marks if c <= steps and c not in found[0]]
        if reached:
            for m, estimate in enumerate(test._estimates(state, level, *setting(steps))):
                found[m].update(dict.fromkeys(reached, estimate))
        if state.asked.all():
            break
    if len(found[0]) < len(marks):  # every item asked before k
        for m, estimate in enumerate(test._estimates(state, level, *setting(steps))):
            found[m].update({c: estimate for c in marks if c not in found[m]})
    return found
