"""The gap between two metrics over the models that have both (e.g. multimodal − text-only
over vision models): mean difference with n, a bootstrap CI over models, and paired tests
(Wilcoxon signed-rank and paired t, scipy's)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from evaluation.metrics_table import MetricTable
from evaluation.resampling import mean_interval


@dataclass
class Gap:
    a: str
    b: str
    n: int
    mean_difference: float  # mean over models of (a − b)
    ci: tuple[float, float] | None
    wilcoxon_p: float
    ttest_p: float
    per_model: list[tuple[str, float, float]] = field(default_factory=list)  # (model, a, b)
    without_both: list[str] = field(default_factory=list)  # models with only one of the two metrics


def metric_gap(table: MetricTable, a: str, b: str, *, seed: int = 0, resamples: int = 2000) -> Gap:
    from scipy.stats import ttest_rel, wilcoxon

    models, x, y = table.paired(a, b)
    without = sorted((set(table.column(a)) | set(table.column(b))) - set(models))
    differences = x - y
    wilcoxon_p = ttest_p = math.nan
    if len(models) >= 2 and np.any(differences != 0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tiny n: scipy warns; the p-value it returns is still what we report
            wilcoxon_p = float(wilcoxon(x, y).pvalue)
            ttest_p = float(ttest_rel(x, y).pvalue)
    return Gap(a, b, len(models), float(differences.mean()) if len(models) else math.nan,
               mean_interval(differences, seed=seed, resamples=resamples) if len(models) else None,
               wilcoxon_p, ttest_p, [(m, float(p), float(q)) for m, p, q in zip(models, x, y, strict=True)], without)


GAP_CSV_HEADER = ["model", "metric_a", "value_a", "metric_b", "value_b", "difference"]


def gap_rows(gap: Gap) -> list[list[object]]:
    return [[model, gap.a, round(va, 6), gap.b, round(vb, 6), round(va - vb, 6)] for model, va, vb in gap.per_model]
