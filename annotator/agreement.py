"""Agreement statistics with numpy only.

- Krippendorff's alpha (nominal, ordinal, interval) on a coders × units matrix with missing
  values as NaN, by the coincidence-matrix method of Krippendorff (2011), "Computing
  Krippendorff's Alpha-Reliability".
- ICC(2,1) (two-way random effects, absolute agreement, single rater) and ICC(3,1)
  (two-way mixed, consistency, single rater) after Shrout & Fleiss (1979), on units rated
  by every rater (incomplete units are dropped).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Metric = Literal["nominal", "ordinal", "interval"]


def _as_matrix(ratings: object) -> np.ndarray:
    matrix = np.asarray(ratings, dtype=float)
    if matrix.ndim != 2:
        raise ValueError("ratings must be a 2-D coders × units matrix")
    return matrix


def _coincidences(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The values that occur in pairable units and their coincidence matrix."""
    values = np.unique(matrix[~np.isnan(matrix)])
    index = {value: position for position, value in enumerate(values)}
    coincidences = np.zeros((len(values), len(values)))
    for unit in matrix.T:
        present = unit[~np.isnan(unit)]
        if len(present) < 2:
            continue  # a unit with one value is not pairable
        counts = np.zeros(len(values))
        for value in present:
            counts[index[value]] += 1
        coincidences += (np.outer(counts, counts) - np.diag(counts)) / (len(present) - 1)
    return values, coincidences


def _distances(values: np.ndarray, marginals: np.ndarray, metric: Metric) -> np.ndarray:
    if metric == "nominal":
        return 1.0 - np.eye(len(values))
    if metric == "interval":
        return np.subtract.outer(values, values) ** 2
    if metric == "ordinal":
        cumulative = np.cumsum(marginals)
        # sum of marginals from c to k minus half of the two end points, squared
        between = np.subtract.outer(cumulative, cumulative - marginals)  # [k, c] = sum_{g=c}^{k} n_g for c <= k
        upper = np.triu(between.T)
        squared = (upper - np.add.outer(marginals, marginals) / 2) ** 2
        squared = np.triu(squared, 1)
        return squared + squared.T
    raise ValueError(f"metric {metric!r}: choose nominal, ordinal or interval")


def krippendorff_alpha(ratings: object, metric: Metric = "interval") -> float:
    """Alpha for a coders × units matrix (NaN = missing). NaN when there is no variation."""
    matrix = _as_matrix(ratings)
    values, coincidences = _coincidences(matrix)
    marginals = coincidences.sum(axis=1)
    total = marginals.sum()
    if total <= 1 or len(values) < 2:
        return float("nan")
    delta = _distances(values, marginals, metric)
    observed = (coincidences * delta).sum() / total
    expected = (np.outer(marginals, marginals) * delta).sum() / (total * (total - 1))
    if expected == 0:
        return float("nan")
    return float(1.0 - observed / expected)


def _complete_units(ratings: object) -> np.ndarray:
    """Units × raters, keeping units rated by every rater."""
    matrix = _as_matrix(ratings).T
    return matrix[~np.isnan(matrix).any(axis=1)]


def _mean_squares(table: np.ndarray) -> tuple[float, float, float]:
    n, k = table.shape
    grand = table.mean()
    ss_rows = k * ((table.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((table.mean(axis=0) - grand) ** 2).sum()
    ss_error = ((table - grand) ** 2).sum() - ss_rows - ss_cols
    return ss_rows / (n - 1), ss_cols / (k - 1), ss_error / ((n - 1) * (k - 1))


def icc(ratings: object, kind: Literal["2,1", "3,1"] = "2,1") -> float:
    """ICC(2,1) or ICC(3,1) for a raters × units matrix; NaN with < 2 complete units or raters."""
    table = _complete_units(ratings)
    n, k = table.shape if table.size else (0, 0)
    if n < 2 or k < 2:
        return float("nan")
    ms_rows, ms_cols, ms_error = _mean_squares(table)
    if kind == "2,1":
        denominator = ms_rows + (k - 1) * ms_error + k * (ms_cols - ms_error) / n
    elif kind == "3,1":
        denominator = ms_rows + (k - 1) * ms_error
    else:
        raise ValueError(f"ICC kind {kind!r}: choose '2,1' or '3,1'")
    if denominator == 0:
        return float("nan")
    return float((ms_rows - ms_error) / denominator)
