"""Model comparisons over current run records: a paired bootstrap of two runs, and the ranking
agreement between all items and the hard subset. Stale records never enter either, nor items
some run left undecided (they wait for a judge or a person: `metrics.common_items`)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curation.core.errors import BenchsmithError
from curation.core.workspace import Workspace
from evaluation.filter_records import FilterRecord, latest_filter_record, load_filter_record
from evaluation.item_facets import FacetReader
from evaluation.metrics import RunData, common_items, load_run
from evaluation.runlog import find_run
from filtering.stats import loo_sign_flips, paired_bootstrap, ranking_agreement


def _correct(run: RunData, items: pa.Array) -> np.ndarray:
    """1.0 where the run's current record of each item is correct, else 0.0 (in Arrow, not per item)."""
    rows = pc.index_in(items, value_set=run.cells["item_id"])
    correct = pc.fill_null(pc.equal(run.cells["outcome"].take(rows), "correct"), False)
    return correct.to_numpy(zero_copy_only=False).astype(float)


def _common(runs: list[RunData]) -> pa.Array:
    """The ids every run has a current record for, sorted (Arrow orders UTF-8 as Python orders str)."""
    common = common_items(runs)
    return common.take(pc.sort_indices(common))


def compare_runs(ws: Workspace, run_a: str, run_b: str, *, seed: int = 0) -> dict[str, Any]:
    """Paired bootstrap of two runs on their common current items, and leave-one-out sign flips."""
    reader = FacetReader()
    a, b = (load_run(find_run(ws.runs_dir, name), ws, reader) for name in (run_a, run_b))
    common = _common([a, b])
    if not len(common):
        raise BenchsmithError(f"runs {run_a} and {run_b} share no items")
    score_a, score_b = _correct(a, common), _correct(b, common)
    result = paired_bootstrap(score_a, score_b, seed=seed)
    return asdict(result) | {"loo_sign_flips": len(loo_sign_flips(score_a, score_b)),
                             "accuracy_a": float(score_a.mean()), "accuracy_b": float(score_b.mean()),
                             "stale_skipped": a.stale + b.stale}


def filter_record(ws: Workspace, path: Path | None) -> FilterRecord | None:
    """The filtering record at `path`, or the workspace's newest."""
    if path is not None:
        return load_filter_record(path)
    found = latest_filter_record(ws.root)
    return found[1] if found else None


def ranking_vs_hard(ws: Workspace, run_names: list[str], record_path: Path | None = None, *,
                    seed: int = 0) -> dict[str, Any]:
    """Kendall τb between the models' ranking on all their common items and on the current hard subset."""
    if len(run_names) < 2:
        raise BenchsmithError("ranking needs two or more runs")
    record = filter_record(ws, record_path)
    if record is None:
        raise BenchsmithError("no filtering record: run `benchsmith filter hard` or `filter adversarial` first")
    reader = FacetReader()
    runs = [load_run(find_run(ws.runs_dir, name), ws, reader) for name in run_names]
    common = _common(runs)
    survivors, stale_hard = record.hard_subset(runs[0].hashes)
    hard_index = np.flatnonzero(pc.is_in(common, value_set=pa.array(survivors, pa.string())).to_numpy(
        zero_copy_only=False))
    hard = hard_index.tolist()
    if len(hard) < 2:
        raise BenchsmithError(f"only {len(hard)} of the runs' common items are in the hard subset: too few to rank on")
    correct = np.array([_correct(run, common) for run in runs])
    tau, (low, high) = ranking_agreement(correct, correct[:, hard_index], seed=seed)
    return {"tau_b": tau, "ci": [low, high], "items": len(common), "hard_items": len(hard),
            "stale_skipped": sum(run.stale for run in runs), "hard_stale": stale_hard,
            "accuracy_all": dict(zip(run_names, correct.mean(axis=1).round(4).tolist(), strict=True)),
            "accuracy_hard": dict(zip(run_names, correct[:, hard_index].mean(axis=1).round(4).tolist(), strict=True))}
