"""Percentile bootstrap on `scipy.stats.bootstrap`, one place for every CI in the reports.

The resampling is scipy's; the interval is taken over the resamples whose statistic is
defined (a τb of a resample where every value is the same is undefined, and one such
resample must not turn the whole interval into NaN).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def bootstrap_interval(samples: Sequence[np.ndarray], statistic: Callable[..., Any], *, seed: int,
                       resamples: int = 2000, level: float = 0.95, paired: bool = True,
                       vectorized: bool = False) -> tuple[tuple[float, float] | None, np.ndarray]:
    """(percentile CI or None when no resample is defined, the bootstrap distribution)."""
    from scipy.stats import bootstrap

    arrays = tuple(np.asarray(sample, dtype=float) for sample in samples)
    if any(array.size == 0 for array in arrays):
        return None, np.array([])
    if any(array.shape[-1] < 2 for array in arrays):  # scipy refuses; every resample is the sample itself
        value = float(statistic(*arrays, axis=-1) if vectorized else statistic(*arrays))
        return (None if np.isnan(value) else (value, value)), np.array([value])
    result = bootstrap(arrays, statistic, n_resamples=resamples, confidence_level=level, method="percentile",
                       paired=paired, vectorized=vectorized, rng=np.random.default_rng(seed))
    distribution = np.asarray(result.bootstrap_distribution, dtype=float)
    defined = distribution[~np.isnan(distribution)]
    if defined.size == 0:
        return None, distribution
    tail = (1 - level) / 2
    low, high = np.quantile(defined, [tail, 1 - tail])
    return (float(low), float(high)), distribution


def mean_interval(values: np.ndarray, *, seed: int, resamples: int = 2000,
                  level: float = 0.95) -> tuple[float, float] | None:
    """Percentile CI of the mean over resampled values."""
    def mean(sample: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(sample, axis=axis)

    return bootstrap_interval([values], mean, seed=seed, resamples=resamples, level=level, vectorized=True)[0]
