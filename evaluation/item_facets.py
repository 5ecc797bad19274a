"""What pool-scale readers need to know about a dataset's items, read as columns.

A report, the solve matrix or a filter needs each item's content hash (to tell current records
from stale ones) and the facets its subsets come from (modality, the Korea flag, part and
subject) — not the item itself. For the store under the implicit variant these are store
columns, read once per command for every run that shares them (`FacetReader`); for a release,
a JSONL file or another variant they come from the dataset's items, loaded once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from curation.identity import content_hash
from curation.item import Item
from curation.store import Store

if TYPE_CHECKING:
    from evaluation.datasets import StoreDataset

FACET_COLUMNS = ["content_hash", "multimodal", "korea_specific", "part", "subject", "taxonomy_part",
                 "taxonomy_subject"]


@dataclass
class ItemFacets:
    """Per item (by id): content hash under the run's variant, and the report's facets."""

    ids: list[str]
    hashes: dict[str, str]
    multimodal: list[bool]
    korea_specific: list[bool]
    part: list[str | None]  # the taxonomy's, else the source's
    subject: list[str | None]
    position: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.position = {item_id: index for index, item_id in enumerate(self.ids)}

    @classmethod
    def from_items(cls, items: Iterable[Item], variant: str) -> ItemFacets:
        items = list(items)
        return cls([i.id for i in items], {i.id: content_hash(i, variant) for i in items},
                   [i.multimodal for i in items], [i.flags.korea_specific is True for i in items],
                   [i.taxonomy.part or i.source.part for i in items],
                   [i.taxonomy.subject or i.source.subject for i in items])

    @classmethod
    def from_store(cls, store: Store) -> ItemFacets:
        c = store.columns(FACET_COLUMNS)
        return cls(c["id"], {i: h for i, h in zip(c["id"], c["content_hash"], strict=True) if h},
                   [bool(v) for v in c["multimodal"]], [v is True for v in c["korea_specific"]],
                   [t or s for t, s in zip(c["taxonomy_part"], c["part"], strict=True)],
                   [t or s for t, s in zip(c["taxonomy_subject"], c["subject"], strict=True)])

    def __contains__(self, item_id: str) -> bool:
        return item_id in self.position

    def subsets(self, item_id: str, named: dict[str, set[str]] | None = None) -> list[str]:
        """The subsets an item counts in (`overall`, modality, Korea flag, named subsets such as
        `hard`, `part:…`, `subject:…`); `overall` alone for an item the dataset no longer has."""
        index = self.position.get(item_id)
        if index is None:
            return ["overall"]
        names = ["overall", "multimodal" if self.multimodal[index] else "text_only"]
        if self.korea_specific[index]:
            names.append("korea_specific")
        names += [name for name, ids in (named or {}).items() if item_id in ids]
        if self.part[index]:
            names.append(f"part:{self.part[index]}")
        if self.subject[index]:
            names.append(f"subject:{self.subject[index]}")
        return names

    def masks(self, item_ids: Sequence[str], named: dict[str, set[str]] | None = None) -> dict[str, np.ndarray]:
        """Subset name → boolean mask over `item_ids` (the same membership as `subsets`)."""
        index = np.array([self.position.get(i, -1) for i in item_ids], dtype=np.int64)
        known = index >= 0
        safe = np.where(known, index, 0)
        masks: dict[str, np.ndarray] = {"overall": np.ones(len(item_ids), dtype=bool)}
        if len(self.ids):
            multimodal = np.asarray(self.multimodal, dtype=bool)[safe] & known
            masks["text_only"] = known & ~multimodal
            masks["multimodal"] = multimodal
            masks["korea_specific"] = np.asarray(self.korea_specific, dtype=bool)[safe] & known
        for name, ids in (named or {}).items():
            masks[name] = np.fromiter((i in ids for i in item_ids), dtype=bool, count=len(item_ids)) & known
        for prefix, values in (("part", self.part), ("subject", self.subject)):
            labels = np.asarray(values, dtype=object)[safe] if len(self.ids) else np.array([], dtype=object)
            for label in sorted({v for v in labels[known] if v}):
                masks[f"{prefix}:{label}"] = known & (labels == label)
        return {name: mask for name, mask in masks.items() if mask.any() or name == "overall"}


class FacetReader:
    """The store's facets and `hard` subset, each read once per command (runs of one pool share them)."""

    def __init__(self) -> None:
        self._store: dict[str, ItemFacets] = {}
        self._hard: dict[str, tuple[dict[str, set[str]], list[str]]] = {}

    def for_store(self, store: Store) -> ItemFacets:
        if store.url not in self._store:
            self._store[store.url] = ItemFacets.from_store(store)
        return self._store[store.url]

    def store_subsets(self, dataset: StoreDataset) -> tuple[dict[str, set[str]], list[str]]:
        """The dataset's named subsets under the implicit variant, judged by the store's hash column."""
        key = f"{dataset.store.url} {dataset.workspace_root}"
        if key not in self._hard:
            self._hard[key] = dataset.named_subsets("implicit", self.for_store(dataset.store).hashes)
        subsets, notes = self._hard[key]
        return subsets, list(notes)
