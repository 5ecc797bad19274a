"""Agreement statistics for the stats tab. The expert-score figures live in `evaluation.agreement`
so that the report's judge meta-evaluation uses the very same figures (read-only use of
evaluation); the categorical ones (reviewers' item decisions, Korea flags) are here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from evaluation.agreement import Metric, icc, krippendorff_alpha

__all__ = ["Metric", "cohen_kappa", "fleiss_kappa", "icc", "krippendorff_alpha"]

Units = Mapping[str, Mapping[str, str]]  # unit → rater → category


def cohen_kappa(units: Units, first: str, second: str) -> float:
    """Cohen's κ of two raters over the units both rated; NaN when chance agreement is total."""
    pairs = [(ratings[first], ratings[second]) for ratings in units.values() if first in ratings and second in ratings]
    if not pairs:
        return float("nan")
    observed = sum(a == b for a, b in pairs) / len(pairs)
    left, right = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(left[c] * right[c] for c in left) / len(pairs) ** 2
    return float("nan") if expected == 1 else (observed - expected) / (1 - expected)


def fleiss_kappa(units: Units) -> float:
    """Fleiss' κ over the units with two or more ratings. Per unit the share of agreeing rater pairs,
    n_ij(n_ij−1) summed over categories / n_i(n_i−1) (Fleiss' P_i, which allows a varying number of
    raters per unit), averaged; chance from the pooled category shares. NaN when chance agreement is total."""
    rated = [Counter(ratings.values()) for ratings in units.values() if len(ratings) >= 2]
    if not rated:
        return float("nan")
    observed = sum(sum(n * (n - 1) for n in counts.values()) / (sum(counts.values()) * (sum(counts.values()) - 1))
                   for counts in rated) / len(rated)
    pooled = sum(rated, Counter())
    total = sum(pooled.values())
    expected = sum((n / total) ** 2 for n in pooled.values())
    return float("nan") if expected == 1 else (observed - expected) / (1 - expected)
