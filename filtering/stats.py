"""Statistics used by reports: paired bootstrap between two models on the same items, Kendall
τb between model rankings with a bootstrap CI, leave-one-out sign flips for a gap. The τb and
the resampling are scipy's (`scipy.stats.kendalltau`, `scipy.stats.bootstrap`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.resampling import bootstrap_interval


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

    def difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    ci, diffs = bootstrap_interval([a, b], difference, seed=seed, resamples=resamples, level=level, vectorized=True)
    assert ci is not None  # a mean is always defined
    tail = min((diffs <= 0).mean(), (diffs >= 0).mean())
    return PairedComparison(len(a), float(a.mean() - b.mean()), ci, float(min(1.0, 2 * tail)))


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τb (ties corrected), scipy's; NaN when either side has no variation."""
    from scipy.stats import kendalltau

    return float(kendalltau(np.asarray(x, dtype=float), np.asarray(y, dtype=float), variant="b").statistic)


def ranking_agreement(correct_a: np.ndarray, correct_b: np.ndarray, *, seed: int = 0, resamples: int = 2000,
                      level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """τb between the model rankings on two item sets (models × items 0/1 matrices), with a CI
    from resampling the items of each set independently."""
    correct_a, correct_b = np.asarray(correct_a, dtype=float), np.asarray(correct_b, dtype=float)

    def tau_on(index_a: np.ndarray, index_b: np.ndarray) -> float:
        return kendall_tau_b(correct_a[:, index_a.astype(int)].mean(axis=1),
                             correct_b[:, index_b.astype(int)].mean(axis=1))

    tau = tau_on(np.arange(correct_a.shape[1]), np.arange(correct_b.shape[1]))
    ci, _ = bootstrap_interval([np.arange(correct_a.shape[1]), np.arange(correct_b.shape[1])], tau_on, seed=seed,
                               resamples=resamples, level=level, paired=False)
    return tau, ci or (float("nan"), float("nan"))


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
