"""Speed of `analyze correlate` on a leaderboard-sized table.

Every pair of M metrics over N models (default 71 × 12, the K-MetBench leaderboard's size):
τb and ρ with bootstrap CIs over models (`evaluation.correlation.correlate_table`). Baseline,
side by side: what a notebook does — for each pair, a numpy resampling loop calling
`scipy.stats.kendalltau` and `scipy.stats.spearmanr` once per resample.

    python benchmarks/correlate_bench.py [--models 71] [--metrics 12] [--resamples 1000] [--runs 3]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

import numpy as np

from evaluation.correlation import correlate_table
from evaluation.metrics_table import MetricTable


def make_table(models: int, metrics: int, seed: int = 0) -> MetricTable:
    rng = np.random.default_rng(seed)
    skill = rng.random(models)
    columns = {}
    for m in range(metrics):
        values = skill + rng.normal(0, 0.15 + 0.05 * m, models)
        present = rng.random(models) > (0.4 if m == 3 else 0.0)  # one subset only some models have
        columns[f"metric{m:02d}"] = {f"model-{i:03d}": float(v) for i, v in enumerate(values) if present[i]}
    return MetricTable(columns=columns)


def notebook_baseline(table: MetricTable, resamples: int, seed: int = 0) -> int:
    from scipy.stats import kendalltau, spearmanr

    rng = np.random.default_rng(seed)
    done = 0
    for a, b in itertools.combinations(table.columns, 2):
        _, x, y = table.paired(a, b)
        taus, rhos = [], []
        for _ in range(resamples):
            index = rng.integers(0, len(x), len(x))
            taus.append(kendalltau(x[index], y[index]).statistic)
            rhos.append(spearmanr(x[index], y[index]).statistic)
        np.nanquantile(taus, [0.025, 0.975]), np.nanquantile(rhos, [0.025, 0.975])
        done += 1
    return done


def timed(function) -> float:  # noqa: ANN001
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=71)
    parser.add_argument("--metrics", type=int, default=12)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    table = make_table(args.models, args.metrics)
    pairs = args.metrics * (args.metrics - 1) // 2
    ours, baseline = [], []
    for _ in range(args.runs):  # interleaved, so load on a shared machine hits both alike
        ours.append(timed(lambda: correlate_table(table, resamples=args.resamples)))
        baseline.append(timed(lambda: notebook_baseline(table, args.resamples)))
    ours_median, baseline_median = statistics.median(ours), statistics.median(baseline)
    print(f"{args.models} models × {args.metrics} metrics = {pairs} pairs, {args.resamples} resamples, "
          f"median of {args.runs}")
    print(f"correlate_table (τb + ρ with CIs): {ours_median:.2f} s ({1000 * ours_median / pairs:.0f} ms/pair)")
    print(f"notebook loop (kendalltau + spearmanr per resample): {baseline_median:.2f} s")
    print(f"ratio: {ours_median / baseline_median:.2f}× the notebook loop")


if __name__ == "__main__":
    main()
