"""Accuracy per subset with item-bootstrap confidence intervals, and judge scores.

Every figure carries its n. Items a model was never sent (a text-only model and an image
item) are counted as `not_sent`, outside the denominator, and said so — except in a run of a
dataset scored on every item (a release, as the harnesses score it), where they count in n
as `not_answered` (never correct). Unparseable and error outcomes stay inside the
denominator (they are not correct) and are reported as their own rates.

Undecided outcomes (an answer was read, but no checker could tell; a judge or a person decides)
are **outside** the denominator and reported as their own count: n = correct + wrong +
unparseable + error (+ not answered). Counting them as wrong would score a model down for
answers nobody has judged yet; counting them as right, up. The bounds a reader may want are
beside it: the accuracy were every undecided answer wrong, and were every one right. Items
undecided for some run are left out of `common` (the same items for every run).

Each subset also counts the outcomes a judge or a person decided (the Score's `decided_by`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curation.core.item import Item
from curation.core.workspace import Workspace
from evaluation.cells import run_cells
from evaluation.datasets import Dataset, StoreDataset, dataset_from_manifest
from evaluation.item_facets import FacetReader, ItemFacets
from evaluation.records import (
    JUDGE_AXES,
    AnswerRecord,
    JudgeVerdict,
    RunManifest,
    is_current,
    read_jsonl_records,
)
from evaluation.resampling import binary_mean_intervals, mean_interval
from evaluation.runlog import RESPONSES, read_answer_manifest


@dataclass
class RunData:
    """A run as its readers see it: only records made from the items' current content count.

    `cells` (columns of the current records) and `facets` (hash and subsets per item, read as
    store columns) serve the pool-scale readers; the whole records and items are read only
    when a reader asks for them (`records`, `items`)."""

    run_id: str
    run_dir: Path
    manifest: RunManifest  # without its item ids (see `items`)
    cells: pa.Table  # evaluation.cells.CELL_SCHEMA, current records only, one row per item
    facets: ItemFacets
    dataset: Dataset
    skipped: dict[str, str]
    stale: int = 0  # records left out because their item changed since (or predate content hashes)
    named_subsets: dict[str, set[str]] = field(default_factory=dict)  # e.g. hard, from the filtering record
    notes: list[str] = field(default_factory=list)
    pending_count: int = 0  # items the manifest lists that have no current record yet

    @property
    def model_name(self) -> str:
        return self.manifest.model.name

    @property
    def label(self) -> str:
        return f"{self.model_name} · {self.manifest.prompt.name}"

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
        listed = read_answer_manifest(self.run_dir).item_ids
        return self.dataset.lookup([*listed, *self.skipped, *self.item_ids])

    @cached_property
    def answered(self) -> set[str]:
        return set(self.item_ids)

    @cached_property
    def outcome_of(self) -> dict[str, str]:
        """Item id → the outcome of its current record."""
        return dict(zip(self.item_ids, self.outcomes.tolist(), strict=True))

    @cached_property
    def decided_ids(self) -> pa.Array:
        """The items whose current record is decided one way or another (every outcome but
        `undecided`): what accuracy is computed over."""
        ids = self.cells["item_id"]
        return ids.filter(pc.fill_null(pc.not_equal(self.cells["outcome"], "undecided"), True)).combine_chunks()

    def pending(self) -> int:
        return self.pending_count


def run_facets(dataset: Dataset, variant: str, wanted: list[str], reader: FacetReader) -> ItemFacets:
    """Hash and facets of the items a run refers to: store columns where they say it all."""
    if isinstance(dataset, StoreDataset) and variant == "implicit":
        return reader.for_store(dataset.store)
    return ItemFacets.from_items(dataset.lookup(wanted).values(), variant)


def load_run(run_dir: Path, ws: Workspace, reader: FacetReader | None = None,
             manifest: RunManifest | None = None) -> RunData:
    """A run's current records as columns; `reader` shares the store's columns between runs;
    `manifest`, the run's manifest when the caller has just read it (it is taken over)."""
    manifest = manifest if manifest is not None else read_answer_manifest(run_dir)
    listed, manifest.item_ids = manifest.item_ids, []  # kept out of the run's data: a pool's ids per run add up
    dataset = dataset_from_manifest(manifest, ws.store, ws.blobs, ws.root)
    variant = manifest.variant
    skipped = manifest.skipped
    logged = run_cells(run_dir)
    reader = reader or FacetReader()
    wanted = [] if isinstance(dataset, StoreDataset) and variant == "implicit" else [
        *listed, *skipped, *logged["item_id"].to_pylist()]
    facets = run_facets(dataset, variant, wanted, reader)
    cells = logged.filter(pc.fill_null(pc.equal(logged["content_hash"], facets.current_hashes(logged["item_id"])),
                                       False))
    answered = pc.is_in(pa.array(listed, pa.string()), value_set=cells["item_id"])
    pending = len(listed) - pc.sum(answered).as_py() if listed else 0
    if isinstance(dataset, StoreDataset) and variant == "implicit":
        subsets, notes = reader.store_subsets(dataset)
    else:
        subsets, notes = dataset.named_subsets(variant)
    stale = logged.num_rows - cells.num_rows
    if stale:
        notes.insert(0, f"{manifest.run_id}: {stale} stale record(s) skipped (their item changed since it was "
                        "answered; rerun the same command to ask them again)")
    return RunData(manifest.run_id, run_dir, manifest, cells, facets, dataset, skipped, stale, subsets, notes,
                   pending)


def bootstrap_ci(values: np.ndarray, seed: int, resamples: int = 2000, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of the mean over items resampled with replacement (scipy's bootstrap)."""
    return mean_interval(np.asarray(values, dtype=float), seed=seed, resamples=resamples, level=level)


def _subset_seed(seed: int, subset: str) -> int:
    return seed + int.from_bytes(hashlib.sha256(subset.encode()).digest()[:4], "big")


@dataclass
class SubsetScore:
    subset: str
    n: int  # scored: correct + wrong + unparseable + error + not answered (undecided left out)
    correct: int
    unparseable: int
    error: int
    not_sent: int  # left out of n
    accuracy: float | None
    ci: tuple[float, float] | None
    not_answered: int = 0  # not sent, yet counted in n (a dataset scored on every item)
    undecided: int = 0  # left out of n: waiting for a judge or a person
    by_judge: int = 0  # outcomes in n an answer judge decided
    by_human: int = 0  # outcomes in n a person decided

    @property
    def unparseable_rate(self) -> float | None:
        return self.unparseable / self.n if self.n else None

    @property
    def error_rate(self) -> float | None:
        return self.error / self.n if self.n else None

    @property
    def bounds(self) -> tuple[float, float] | None:
        """The accuracy were every undecided answer wrong, and were every one right."""
        total = self.n + self.undecided
        return (self.correct / total, (self.correct + self.undecided) / total) if total else None


def subset_order(names: Iterable[str]) -> list[str]:
    fixed = ["overall", "common", "korea_specific", "text_only", "multimodal", "hard"]
    names = set(names)
    return [n for n in fixed if n in names] + sorted(n for n in names if n not in fixed)


OUTCOME_CODES = ("correct", "wrong", "unparseable", "error", "undecided")
NOT_ANSWERED = len(OUTCOME_CODES) + 1  # the code of an item not sent that counts in n (after "unknown outcome")
UNDECIDED = OUTCOME_CODES.index("undecided")
DECIDERS = ("checker", "judge", "human")  # the Score's decided_by; a record before typed scores: the checker


def outcome_codes(run: RunData) -> np.ndarray:
    """Per current record: its outcome's index in `OUTCOME_CODES` (a small int, not a string)."""
    found = pc.index_in(run.cells["outcome"], value_set=pa.array(OUTCOME_CODES))
    return np.asarray(pc.fill_null(found, len(OUTCOME_CODES)).to_numpy(zero_copy_only=False), dtype=np.int8)


def decider_codes(run: RunData) -> np.ndarray:
    """Per current record: who decided its outcome, as an index in `DECIDERS`."""
    found = pc.index_in(run.cells["decided_by"], value_set=pa.array(DECIDERS))
    return np.asarray(pc.fill_null(found, 0).to_numpy(zero_copy_only=False), dtype=np.int8)


def common_items(runs: list[RunData]) -> pa.Array:
    """The ids every run has a decided current record for (undecided ones wait: they are left out)."""
    common = runs[0].decided_ids
    for run in runs[1:]:
        common = common.filter(pc.is_in(common, value_set=run.decided_ids))
    return common


@dataclass
class _Sample:
    outcomes: np.ndarray  # outcome codes of the subset's records (and of its items not answered, where they count)
    deciders: np.ndarray  # who decided each (DECIDERS index; an item not answered: the checker)


def _subset_samples(run: RunData, common: pa.Array | None) -> tuple[dict[str, _Sample], dict[str, int]]:
    """Subset → the outcome codes of its current records (and of its items not answered, where
    they count) with who decided each, and subset → items not sent and left out of n."""
    masks = run.facets.masks(run.cells["item_id"], run.named_subsets)
    if common is not None:
        masks["common"] = pc.is_in(run.cells["item_id"], value_set=common).to_numpy(zero_copy_only=False)
    codes, deciders = outcome_codes(run), decider_codes(run)
    samples = {name: _Sample(codes[mask], deciders[mask]) for name, mask in masks.items() if mask.any()}
    unsent = {name: int(mask.sum()) for name, mask in run.facets.masks(list(run.skipped), run.named_subsets).items()
              if mask.any()}
    empty = _Sample(np.array([], dtype=np.int8), np.array([], dtype=np.int8))
    for name, count in unsent.items():
        answered = samples.get(name, empty)
        if run.dataset.scores_every_item:
            samples[name] = _Sample(np.concatenate([answered.outcomes, np.full(count, NOT_ANSWERED, dtype=np.int8)]),
                                    np.concatenate([answered.deciders, np.zeros(count, dtype=np.int8)]))
        else:
            samples[name] = answered
    return samples, ({} if run.dataset.scores_every_item else unsent)


def accuracy_by_subsets(runs: list[RunData], *, seed: int = 0, resamples: int = 2000,
                        common: pa.Array | None = None) -> list[list[SubsetScore]]:
    """`accuracy_by_subset` of several runs at once: the runs' resamples of a subset are drawn once."""
    correct, unparseable, error = (OUTCOME_CODES.index(name) for name in ("correct", "unparseable", "error"))
    judge, human = DECIDERS.index("judge"), DECIDERS.index("human")
    samples = [_subset_samples(run, common) for run in runs]
    names = [subset_order(found) for found, _ in samples]
    scored = [{name: found[name].outcomes != UNDECIDED for name in ordered}
              for (found, _), ordered in zip(samples, names, strict=True)]
    requests = [(_subset_seed(seed, name), found[name].outcomes[kept[name]] == correct)
                for (found, _), ordered, kept in zip(samples, names, scored, strict=True) for name in ordered]
    intervals = iter(binary_mean_intervals(requests, resamples=resamples))
    scores = []
    for (found, not_sent), ordered, kept in zip(samples, names, scored, strict=True):
        run_scores = []
        for name in ordered:
            values, deciders = found[name].outcomes[kept[name]], found[name].deciders[kept[name]]
            n, right = int(values.size), int(np.count_nonzero(values == correct))
            run_scores.append(SubsetScore(name, n, right, int(np.count_nonzero(values == unparseable)),
                                          int(np.count_nonzero(values == error)), not_sent.get(name, 0),
                                          right / n if n else None, next(intervals),
                                          int(np.count_nonzero(values == NOT_ANSWERED)),
                                          int(found[name].outcomes.size - values.size),
                                          int(np.count_nonzero(deciders == judge)),
                                          int(np.count_nonzero(deciders == human))))
        scores.append(run_scores)
    return scores


def accuracy_by_subset(run: RunData, *, seed: int = 0, resamples: int = 2000,
                       common: pa.Array | None = None) -> list[SubsetScore]:
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
