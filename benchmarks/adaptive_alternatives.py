"""Estimators tried for `run --adaptive` and not kept, on the real solve matrices with whole model
families held out, at K = 100: MAE of the estimated full-set accuracy as a ratio to random
100-item subsets (exact expectation), each held-out model tested `REPEATS` times, every setting's
figure beside the others (the best is picked with hindsight, so it flatters):

- `flattened`: the adaptive test with each item's curve flattened by a per-item spread of the
  model's ability, σ(a(θ + δ − b)) with δ ~ N(0, τ²), i.e. a / √(1 + π a² τ² / 8) in place of a
  (τ = 0 is the kept estimator), at six likelihood weights;
- `uniform`: the kept estimate with the items drawn uniformly at random instead of by information;
- `factors`: a linear factor model of the calibrating rows (rank d from their SVD, per-item noise),
  its Bayesian prediction of the unasked items from 100 items drawn at random.

    PYTHONPATH=. python benchmarks/adaptive_alternatives.py [--matrices arc-challenge,commonsenseqa,quail]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from benchmarks.adaptive_bench import REALDATA, errors_by_weight, random100_mae
from filtering.irt.adaptive import AdaptiveTest
from filtering.irt.families import family_folds
from filtering.irt.responses import Responses, read_matrix_file
from filtering.irt.twopl import fit_2pl

K = 100
REPEATS = 4
WEIGHTS = (0.04, 0.07, 0.1, 0.15, 0.25, 0.4)
TAUS = (0.0, 1.0, 1.5)
RANKS = (1, 2, 3, 5, 8)


def flattened_test(responses: Responses, tau: float, uniform: float) -> Callable[[np.ndarray], AdaptiveTest]:
    """The 2PL fitted on the training rows, each curve flattened by τ, drawn with `uniform` spread evenly."""
    y = responses.correct

    def make(train: np.ndarray) -> AdaptiveTest:
        fit = fit_2pl(np.nan_to_num(y[train]), (~np.isnan(y[train])).astype(float))
        flat_a = fit.a / np.sqrt(1 + np.pi * fit.a**2 * tau**2 / 8)
        return AdaptiveTest(responses.items, flat_a, fit.b, fit.theta, uniform=uniform)

    return make


def factor_errors(responses: Responses, seed: int = 0) -> dict[int, np.ndarray]:
    y = np.nan_to_num(responses.correct)
    truth = y.mean(axis=1)
    rng = np.random.default_rng(seed)
    errors = {d: np.zeros(len(y)) for d in RANKS}
    for fold in family_folds(responses.models):
        train = y[np.setdiff1d(np.arange(len(y)), fold)]
        mean = train.mean(axis=0)
        _, singular, vt = np.linalg.svd(train - mean, full_matrices=False)
        variance = train.var(axis=0) + 1e-3
        for d in RANKS:
            loadings = vt[:d].T * singular[:d] / np.sqrt(len(train))  # items × d
            noise = np.maximum(variance - (loadings**2).sum(axis=1), 0.02)
            for row in fold:
                for _ in range(REPEATS):
                    asked = rng.choice(y.shape[1], K, replace=False)
                    w = loadings[asked]
                    precision = np.eye(d) + w.T @ (w / noise[asked, None])
                    z = np.linalg.solve(precision, w.T @ ((y[row, asked] - mean[asked]) / noise[asked]))
                    rest = np.ones(y.shape[1], bool)
                    rest[asked] = False
                    predicted = np.clip(mean + loadings @ z, 0, 1)[rest].sum()
                    errors[d][row] += abs((y[row, asked].sum() + predicted) / y.shape[1] - truth[row]) / REPEATS
    return errors


def by_weight(responses: Responses, make_test: Callable[[np.ndarray], AdaptiveTest]) -> dict[float, np.ndarray]:
    return errors_by_weight(responses, make_test, WEIGHTS, REPEATS, K)


def _line(label: str, errors: dict, random100: float) -> str:
    return f"{label}: " + ", ".join(f"{key:g}: {e.mean() / random100:.3f}" for key, e in errors.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matrices", default="arc-challenge,commonsenseqa,quail")
    args = parser.parse_args()
    for name in args.matrices.split(","):
        responses = read_matrix_file(REALDATA / f"{name}.csv")
        random100 = random100_mae(responses)
        print(f"\n{name}: MAE ratio to random {K} (MAE {random100:.4f}), K = {K}, per likelihood weight / rank")
        for tau in TAUS:
            print(_line(f"  flattened τ = {tau:g}", by_weight(responses, flattened_test(responses, tau, 0.2)), random100))
        print(_line("  uniform draws", by_weight(responses, flattened_test(responses, 0.0, 1.0)), random100))
        print(_line("  linear factors, rank", factor_errors(responses), random100))


if __name__ == "__main__":
    main()
