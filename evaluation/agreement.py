"""Agreement statistics.

- Krippendorff's alpha (nominal, ordinal, interval) on a coders × units matrix with missing
  values as NaN, computed by the `krippendorff` package (Castro's implementation of
  Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability").
- ICC(2,1) (two-way random effects, absolute agreement, single rater) and ICC(3,1)
  (two-way mixed, consistency, single rater) after Shrout & Fleiss (1979), on units rated
  by every rater (incomplete units are dropped). Written here on purpose: the libraries that
  offer ICC (pingouin) bring pandas, statsmodels and more for three lines of ANOVA.
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


def krippendorff_alpha(ratings: object, metric: Metric = "interval") -> float:
    """Alpha for a coders × units matrix (NaN = missing), by the `krippendorff` package.
    NaN when there is no variation or no unit with two values (the package raises there)."""
    if metric not in ("nominal", "ordinal", "interval"):
        raise ValueError(f"metric {metric!r}: choose nominal, ordinal or interval")
    matrix = _as_matrix(ratings)
    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    if not pairable.any() or len(np.unique(matrix[:, pairable][~np.isnan(matrix[:, pairable])])) < 2:
        return float("nan")
    import krippendorff

    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=metric))


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
