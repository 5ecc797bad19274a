"""Statistics used by reports: paired bootstrap between two models on the same items, Kendall
τb between model rankings with a bootstrap CI, leave-one-out sign flips for a gap."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PairedComparison:
    n: int
    difference: float  # mean(a) - mean(b)
    ci: tuple[float, float]
    p_value: float  # two-sided, from the bootstrap distribution


def paired_bootstrap(a: np.ndarray, b: np.ndarray, *, seed: int = 0, resamples: int = 5000,
                     level: float = 0.95) -> PairedComparison:
    """Resample items (pairs kept together): CI of the accuracy difference and a p-value."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or len(a) == 0:
        raise ValueError("paired_bootstrap needs two equal-length, non-empty per-item score vectors")
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(a), size=(resamples, len(a)))
    diffs = a[index].mean(axis=1) - b[index].mean(axis=1)
    low, high = np.quantile(diffs, [(1 - level) / 2, 1 - (1 - level) / 2])
    observed = float(a.mean() - b.mean())
    tail = min((diffs <= 0).mean(), (diffs >= 0).mean())
    return PairedComparison(len(a), observed, (float(low), float(high)), float(min(1.0, 2 * tail)))


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τb (ties corrected), O(n²) — rankings here have tens of models."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu_indices(len(x), k=1)
    sx, sy = dx[upper], dy[upper]
    concordant_minus_discordant = float(np.sum(sx * sy))
    ties_x, ties_y = float(np.sum(sx != 0)), float(np.sum(sy != 0))
    if ties_x == 0 or ties_y == 0:
        return float("nan")
    return concordant_minus_discordant / np.sqrt(ties_x * ties_y)


def ranking_agreement(correct_a: np.ndarray, correct_b: np.ndarray, *, seed: int = 0, resamples: int = 2000,
                      level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """τb between the model rankings on two item sets (models × items 0/1 matrices), with a CI
    from resampling the items of each set."""
    correct_a, correct_b = np.asarray(correct_a, dtype=float), np.asarray(correct_b, dtype=float)
    tau = kendall_tau_b(correct_a.mean(axis=1), correct_b.mean(axis=1))
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(resamples):
        ia = rng.integers(0, correct_a.shape[1], correct_a.shape[1])
        ib = rng.integers(0, correct_b.shape[1], correct_b.shape[1])
        value = kendall_tau_b(correct_a[:, ia].mean(axis=1), correct_b[:, ib].mean(axis=1))
        if not np.isnan(value):
            samples.append(value)
    low, high = np.quantile(samples, [(1 - level) / 2, 1 - (1 - level) / 2]) if samples else (np.nan, np.nan)
    return tau, (float(low), float(high))


def loo_sign_flips(a: np.ndarray, b: np.ndarray) -> list[tuple[str, int]]:
    """Single items whose removal flips the sign of mean(a) - mean(b) (a and b may differ in
    length: two subsets). Returns (which side, index) for each flipping removal."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    gap = a.mean() - b.mean()
    flips: list[tuple[str, int]] = []
    if gap == 0:
        return flips  # no sign to flip
    for side, values, other in (("a", a, b), ("b", b, a)):
        if len(values) < 2:
            continue
        without = (values.sum() - values) / (len(values) - 1)
        gaps = without - other.mean() if side == "a" else other.mean() - without
        flips += [(side, int(i)) for i in np.nonzero(np.sign(gaps) != np.sign(gap))[0]]
    return flips
