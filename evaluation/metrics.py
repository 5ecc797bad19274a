"""Accuracy per subset with item-bootstrap confidence intervals, and judge scores.

Every figure carries its n. Items a model was never sent (a text-only model and an image
item) are counted as `not_sent`, outside the denominator, and said so; unparseable and
error outcomes stay inside the denominator (they are not correct) and are reported as
their own rates.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc

from curation.arrow import pa
from curation.item import Item
from curation.workspace import Workspace
from evaluation.cells import run_cells
from evaluation.datasets import Dataset, StoreDataset, dataset_from_manifest
from evaluation.item_facets import FacetReader, ItemFacets
from evaluation.records import JUDGE_AXES, AnswerRecord, JudgeVerdict, is_current, read_jsonl_records
from evaluation.resampling import binary_mean_intervals, mean_interval
from evaluation.runlog import RESPONSES, read_manifest


@dataclass
class RunData:
    """A run as its readers see it: only records made from the items' current content count.

    `cells` (columns of the current records) and `facets` (hash and subsets per item, read as
    store columns) serve the pool-scale readers; the whole records and items are read only
    when a reader asks for them (`records`, `items`)."""

    run_id: str
    run_dir: Path
    manifest: dict[str, Any]
    cells: pa.Table  # evaluation.cells.CELL_SCHEMA, current records only, one row per item
    facets: ItemFacets
    dataset: Dataset
    skipped: dict[str, str]
    stale: int = 0  # records left out because their item changed since (or predate content hashes)
    named_subsets: dict[str, set[str]] = field(default_factory=dict)  # e.g. hard, from the filtering record
    notes: list[str] = field(default_factory=list)

    @property
    def model_name(self) -> str:
        return self.manifest["model"]["name"]

    @property
    def label(self) -> str:
        return f"{self.model_name} · {self.manifest['prompt']['name']}"

    @property
    def hashes(self) -> dict[str, str]:
        """Item id → current content hash."""
        return self.facets.hashes

    @cached_property
    def item_ids(self) -> list[str]:
        """The items with a current record, in log order."""
        return self.cells["item_id"].to_pylist()

    @cached_property
    def outcomes(self) -> np.ndarray:
        return np.asarray(self.cells["outcome"].to_pylist(), dtype=object)

    @cached_property
    def records(self) -> dict[str, AnswerRecord]:
        """Item id → its whole current record (text, rationale …), read from the log."""
        logged = read_jsonl_records(self.run_dir / RESPONSES, AnswerRecord)
        return {item_id: record for item_id, record in logged.items() if is_current(record, self.hashes)}

    @cached_property
    def items(self) -> dict[str, Item]:
        """The run's items as they are now."""
        return self.dataset.lookup([*self.manifest.get("item_ids", []), *self.skipped, *self.item_ids])

    @cached_property
    def answered(self) -> set[str]:
        return set(self.item_ids)

    @cached_property
    def outcome_of(self) -> dict[str, str]:
        """Item id → the outcome of its current record."""
        return dict(zip(self.item_ids, self.outcomes.tolist(), strict=True))

    def pending(self) -> int:
        return sum(1 for item_id in self.manifest.get("item_ids", []) if item_id not in self.answered)


def run_facets(dataset: Dataset, variant: str, wanted: list[str], reader: FacetReader) -> ItemFacets:
    """Hash and facets of the items a run refers to: store columns where they say it all."""
    if isinstance(dataset, StoreDataset) and variant == "implicit":
        return reader.for_store(dataset.store)
    return ItemFacets.from_items(dataset.lookup(wanted).values(), variant)


def load_run(run_dir: Path, ws: Workspace, reader: FacetReader | None = None) -> RunData:
    """A run's current records as columns; `reader` shares the store's columns between runs."""
    manifest = read_manifest(run_dir)
    dataset = dataset_from_manifest(manifest, ws.store, ws.blobs, ws.root)
    variant = manifest.get("variant", "implicit")
    skipped = manifest.get("skipped", {})
    logged = run_cells(run_dir)
    logged_ids = logged["item_id"].to_pylist()
    reader = reader or FacetReader()
    facets = run_facets(dataset, variant, [*manifest.get("item_ids", []), *skipped, *logged_ids], reader)
    hashes = facets.hashes
    current = pa.array([hashes.get(item_id) for item_id in logged_ids], type=pa.string())
    cells = logged.filter(pc.fill_null(pc.equal(logged["content_hash"], current), False))
    if isinstance(dataset, StoreDataset) and variant == "implicit":
        subsets, notes = reader.store_subsets(dataset)
    else:
        subsets, notes = dataset.named_subsets(variant)
    stale = logged.num_rows - cells.num_rows
    if stale:
        notes.insert(0, f"{manifest['run_id']}: {stale} stale record(s) skipped (their item changed since it was "
                        "answered; rerun the same command to ask them again)")
    return RunData(manifest["run_id"], run_dir, manifest, cells, facets, dataset, skipped, stale, subsets, notes)


def bootstrap_ci(values: np.ndarray, seed: int, resamples: int = 2000, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of the mean over items resampled with replacement (scipy's bootstrap)."""
    return mean_interval(np.asarray(values, dtype=float), seed=seed, resamples=resamples, level=level)


def _subset_seed(seed: int, subset: str) -> int:
    return seed + int.from_bytes(hashlib.sha256(subset.encode()).digest()[:4], "big")


@dataclass
class SubsetScore:
    subset: str
    n: int
    correct: int
    unparseable: int
    error: int
    not_sent: int
    accuracy: float | None
    ci: tuple[float, float] | None

    @property
    def unparseable_rate(self) -> float | None:
        return self.unparseable / self.n if self.n else None

    @property
    def error_rate(self) -> float | None:
        return self.error / self.n if self.n else None


def subset_order(names: Iterable[str]) -> list[str]:
    fixed = ["overall", "common", "korea_specific", "text_only", "multimodal", "hard"]
    names = set(names)
    return [n for n in fixed if n in names] + sorted(n for n in names if n not in fixed)


def _subset_samples(run: RunData, common: set[str] | None) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """Subset → the outcomes of its current records, and subset → items not sent."""
    masks = run.facets.masks(run.item_ids, run.named_subsets)
    if common is not None:
        masks["common"] = np.fromiter((i in common for i in run.item_ids), dtype=bool, count=len(run.item_ids))
    outcomes = {name: run.outcomes[mask] for name, mask in masks.items() if mask.any()}
    not_sent = {name: int(mask.sum()) for name, mask in run.facets.masks(list(run.skipped), run.named_subsets).items()
                if mask.any()}
    for name in not_sent:
        outcomes.setdefault(name, np.array([], dtype=object))
    return outcomes, not_sent


def accuracy_by_subsets(runs: list[RunData], *, seed: int = 0, resamples: int = 2000,
                        common: set[str] | None = None) -> list[list[SubsetScore]]:
    """`accuracy_by_subset` of several runs at once: the runs' resamples of a subset are drawn once."""
    samples = [_subset_samples(run, common) for run in runs]
    names = [subset_order(outcomes) for outcomes, _ in samples]
    requests = [(_subset_seed(seed, name), outcomes[name] == "correct")
                for (outcomes, _), ordered in zip(samples, names, strict=True) for name in ordered]
    intervals = iter(binary_mean_intervals(requests, resamples=resamples))
    scores = []
    for (outcomes, not_sent), ordered in zip(samples, names, strict=True):
        run_scores = []
        for name in ordered:
            values = outcomes[name]
            n, correct = int(values.size), int(np.count_nonzero(values == "correct"))
            run_scores.append(SubsetScore(name, n, correct, int(np.count_nonzero(values == "unparseable")),
                                          int(np.count_nonzero(values == "error")), not_sent.get(name, 0),
                                          correct / n if n else None, next(intervals)))
        scores.append(run_scores)
    return scores


def accuracy_by_subset(run: RunData, *, seed: int = 0, resamples: int = 2000,
                       common: set[str] | None = None) -> list[SubsetScore]:
    return accuracy_by_subsets([run], seed=seed, resamples=resamples, common=common)[0]


@dataclass
class ReasoningScore:
    judge: str
    n: int
    missing: int
    mean: float | None
    ci: tuple[float, float] | None
    axes: dict[str, float]
    stale: int = 0


def reasoning_scores(run: RunData, *, seed: int = 0, resamples: int = 2000) -> list[ReasoningScore]:
    """One entry per judge file; a missing or stale verdict is counted, never averaged in."""
    results = []
    for path in sorted(run.run_dir.glob("judge-*.jsonl")):
        verdicts = read_jsonl_records(path, JudgeVerdict)
        current = [v for v in verdicts.values() if is_current(v, run.hashes) and v.item_id in run.answered]
        valid = [v.scores for v in current if v.status == "ok" and v.scores is not None]
        totals = np.array([scores.total for scores in valid], dtype=float)
        axes = {axis: float(np.mean([getattr(scores, axis) for scores in valid])) for axis in JUDGE_AXES} if valid else {}
        results.append(ReasoningScore(path.stem.removeprefix("judge-"), len(valid), len(current) - len(valid),
                                      float(totals.mean()) if valid else None,
                                      bootstrap_ci(totals, _subset_seed(seed, "reasoning"), resamples), axes,
                                      stale=len(verdicts) - len(current)))
    return results
