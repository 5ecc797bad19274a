"""Percentile bootstrap on `scipy.stats.bootstrap`, one place for every CI in the reports.

The resampling is scipy's; the interval is taken over the resamples whose statistic is
defined (a τb of a resample where every value is the same is undefined, and one such
resample must not turn the whole interval into NaN).
"""

from __future__ import annotations

import os
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


_COUNT_FROM = 5  # members sharing a seed from which the draws are counted once (measured crossover: 3–6)


def binary_mean_intervals(samples: Sequence[tuple[int, np.ndarray]], *, resamples: int = 2000,
                          level: float = 0.95, batch: int = 64) -> list[tuple[float, float] | None]:
    """`mean_interval(values, seed=seed)` for many (seed, 0/1 values) at once, with the same result.

    scipy draws each resample's indices with `rng.integers(0, n, (resamples, n))`; drawn in
    batches the stream is the same, so memory stays at `batch` resamples. Samples that share a
    seed and a length (one subset across several models) share the draws, and seeds are drawn
    in parallel threads (numpy's generators release the GIL).
    """
    from concurrent.futures import ThreadPoolExecutor

    results: list[tuple[float, float] | None] = [None] * len(samples)
    groups: dict[tuple[int, int], list[int]] = {}
    for index, (seed, values) in enumerate(samples):
        size = np.asarray(values).size
        if size == 1:  # every resample is the sample itself
            results[index] = (float(np.asarray(values, dtype=float)[0]),) * 2
        elif size:
            groups.setdefault((seed, size), []).append(index)
    tail = (1 - level) / 2

    def group_intervals(key: tuple[int, int]) -> None:
        seed, n = key
        members = groups[key]
        # A resample's sum of 0/1 values is how often it drew each index times that index's value:
        # one count per index and resample, then one product with every member's values at once.
        # Below a few members, gathering each member's values costs less than counting the draws.
        by_counts = len(members) >= _COUNT_FROM
        values = np.stack([np.asarray(samples[i][1], dtype=np.float64 if by_counts else np.uint8) for i in members],
                          axis=1)
        rng = np.random.default_rng(seed)
        sums = np.empty((resamples, len(members)))
        step = max(1, min(batch, (1 << 21) // n))  # resamples per draw: memory stays flat however large n is
        for start in range(0, resamples, step):
            rows = min(step, resamples - start)
            drawn = rng.integers(0, n, (rows, n))
            if not by_counts:
                for column in range(len(members)):
                    sums[start:start + rows, column] = np.take(values[:, column], drawn).sum(axis=1, dtype=np.int64)
                continue
            drawn += np.arange(rows)[:, None] * n
            counts = np.bincount(drawn.ravel(), minlength=rows * n).reshape(rows, n)
            sums[start:start + rows] = counts.astype(np.float64) @ values  # BLAS; integers below 2**53 are exact
        for column, index in enumerate(members):
            low, high = np.quantile(sums[:, column] / n, [tail, 1 - tail])
            results[index] = (float(low), float(high))

    with ThreadPoolExecutor(max_workers=min(len(groups), os.cpu_count() or 1) or 1) as pool:
        list(pool.map(group_intervals, sorted(groups, key=lambda key: -key[1] * len(groups[key]))))
    return results
