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
from pathlib import Path
from typing import Any

import numpy as np

from curation.identity import content_hash
from curation.item import Item
from curation.workspace import Workspace
from evaluation.datasets import dataset_from_manifest
from evaluation.records import JUDGE_AXES, AnswerRecord, JudgeVerdict, is_current, read_jsonl_records
from evaluation.resampling import mean_interval
from evaluation.runlog import RESPONSES, read_manifest


@dataclass
class RunData:
    """A run as its readers see it: only records made from the items' current content count."""

    run_id: str
    run_dir: Path
    manifest: dict[str, Any]
    records: dict[str, AnswerRecord]  # item id → last record, current content only
    items: dict[str, Item]  # the run's items as they are now
    skipped: dict[str, str]
    stale: int = 0  # records left out because their item changed since (or predate content hashes)
    hashes: dict[str, str] = field(default_factory=dict)  # item id → current content hash
    named_subsets: dict[str, set[str]] = field(default_factory=dict)  # e.g. hard, from the filtering record
    notes: list[str] = field(default_factory=list)

    @property
    def model_name(self) -> str:
        return self.manifest["model"]["name"]

    @property
    def label(self) -> str:
        return f"{self.model_name} · {self.manifest['prompt']['name']}"

    def pending(self) -> int:
        return sum(1 for item_id in self.manifest.get("item_ids", []) if item_id not in self.records)


def load_run(run_dir: Path, ws: Workspace) -> RunData:
    manifest = read_manifest(run_dir)
    dataset = dataset_from_manifest(manifest, ws.store, ws.blobs, ws.root)
    variant = manifest.get("variant", "implicit")
    skipped = manifest.get("skipped", {})
    logged = read_jsonl_records(run_dir / RESPONSES, AnswerRecord)
    items = dataset.lookup([*manifest.get("item_ids", []), *skipped, *logged])
    hashes = {item_id: content_hash(item, variant) for item_id, item in items.items()}
    records = {item_id: record for item_id, record in logged.items() if is_current(record, hashes)}
    subsets, notes = dataset.named_subsets(variant)
    stale = len(logged) - len(records)
    if stale:
        notes.insert(0, f"{manifest['run_id']}: {stale} stale record(s) skipped (their item changed since it was "
                        "answered; rerun the same command to ask them again)")
    return RunData(manifest["run_id"], run_dir, manifest, records, items, skipped, stale, hashes, subsets, notes)


def subsets_of(item: Item, named: dict[str, set[str]] | None = None) -> list[str]:
    """The subsets an item counts in: from its flags and taxonomy, and the named subsets (hard) it is in."""
    names = ["overall", "multimodal" if item.multimodal else "text_only"]
    if item.flags.korea_specific:
        names.append("korea_specific")
    names += [name for name, ids in (named or {}).items() if item.id in ids]
    part = item.taxonomy.part or item.source.part
    subject = item.taxonomy.subject or item.source.subject
    if part:
        names.append(f"part:{part}")
    if subject:
        names.append(f"subject:{subject}")
    return names


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


def accuracy_by_subset(run: RunData, *, seed: int = 0, resamples: int = 2000,
                       common: set[str] | None = None) -> list[SubsetScore]:
    outcomes: dict[str, list[str]] = {}
    not_sent: dict[str, int] = {}
    for item_id, record in run.records.items():
        item = run.items.get(item_id)
        names = subsets_of(item, run.named_subsets) if item is not None else ["overall"]
        if common is not None and item_id in common:
            names.append("common")
        for name in names:
            outcomes.setdefault(name, []).append(record.outcome)
    for item_id in run.skipped:
        item = run.items.get(item_id)
        for name in subsets_of(item, run.named_subsets) if item is not None else ["overall"]:
            not_sent[name] = not_sent.get(name, 0) + 1
            outcomes.setdefault(name, [])
    scores = []
    for name in subset_order(outcomes):
        values = np.array([o == "correct" for o in outcomes[name]], dtype=float)
        n = int(values.size)
        scores.append(SubsetScore(
            name, n, int(values.sum()), outcomes[name].count("unparseable"), outcomes[name].count("error"),
            not_sent.get(name, 0), float(values.mean()) if n else None,
            bootstrap_ci(values, _subset_seed(seed, name), resamples)))
    return scores


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
        current = [v for v in verdicts.values() if is_current(v, run.hashes) and v.item_id in run.records]
        valid = [v.scores for v in current if v.status == "ok" and v.scores is not None]
        totals = np.array([scores.total for scores in valid], dtype=float)
        axes = {axis: float(np.mean([getattr(scores, axis) for scores in valid])) for axis in JUDGE_AXES} if valid else {}
        results.append(ReasoningScore(path.stem.removeprefix("judge-"), len(valid), len(current) - len(valid),
                                      float(totals.mean()) if valid else None,
                                      bootstrap_ci(totals, _subset_seed(seed, "reasoning"), resamples), axes,
                                      stale=len(verdicts) - len(current)))
    return results
