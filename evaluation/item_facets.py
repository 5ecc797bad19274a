"""What pool-scale readers need to know about a dataset's items, read as columns.

A report, the solve matrix or a filter needs each item's content hash (to tell current records
from stale ones) and the facets its subsets come from (modality, the Korea flag, part, subject
and the answer format) — not the item itself; the report's exam score also the paper an item is
on and its points (read only when asked). For the store under the implicit variant these are store
columns, read once per command for every run that shares them (`FacetReader`); for a release,
a JSONL file or another variant they come from the dataset's items, loaded once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curation.core.facets import Facet, exam_score_facets, report_facets
from curation.core.identity import content_hash
from curation.core.item import Item
from curation.core.store import Store

if TYPE_CHECKING:
    from evaluation.datasets import StoreDataset

REPORT_FACETS = report_facets()  # modality, the Korea flag, part, subject, answer format (curation/core/facets.py)
EXAM_SCORE_FACETS = exam_score_facets()  # exam, session, points
# the facets that name one subset each (flags, splits) come first, labelled ones (part:…, subject:…) after
_FIXED = [f for f in REPORT_FACETS if f.report != "label"]
_LABELLED = sorted((f for f in REPORT_FACETS if f.report == "label"), key=lambda f: f.name)


class ExamFacts(NamedTuple):
    """What the exam score knows of an item: the paper it is on and its points (None: the paper
    gives some of its items points, not this one)."""

    exam: str
    session: str | None
    points: float | None


@dataclass
class ItemFacets:
    """Per item (by id): content hash under the run's variant, and the values of the report's facets."""

    ids: list[str]
    hashes: dict[str, str]
    values: dict[str, list[Any]]  # report facet name → its value per item, in `ids` order
    position: dict[str, int] = field(default_factory=dict)
    pointed: dict[str, ExamFacts] | None = None  # item → paper and points, on papers with points (read when asked)
    store: Store | None = None  # where `pointed` is read from, when first asked

    def __post_init__(self) -> None:
        self.position = {item_id: index for index, item_id in enumerate(self.ids)}

    @classmethod
    def from_items(cls, items: Iterable[Item], variant: str) -> ItemFacets:
        items = list(items)
        return cls([i.id for i in items], {i.id: content_hash(i, variant) for i in items},
                   {f.name: [f.read(i) for i in items] for f in REPORT_FACETS},
                   pointed=_on_pointed_papers([(i.id, *(f.read(i) for f in EXAM_SCORE_FACETS)) for i in items]))

    @classmethod
    def from_store(cls, store: Store) -> ItemFacets:
        c = store.columns(["content_hash", *(f.name for f in REPORT_FACETS), "points"])
        any_points = any(points is not None for points in c["points"])  # in the same scan: none, nothing more to read
        return cls(c["id"], {i: h for i, h in zip(c["id"], c["content_hash"], strict=True) if h},
                   {f.name: c[f.name] for f in REPORT_FACETS}, pointed=None if any_points else {}, store=store)

    def exam_facts(self, item_ids: Iterable[str]) -> dict[str, ExamFacts]:
        """Item → its paper (exam, session) and points, for those of `item_ids` on a paper that gives
        points (배점) to some of its items; {} at once where no item has points."""
        if self.pointed is None:
            assert self.store is not None
            names = [f.name for f in EXAM_SCORE_FACETS]
            c = self.store.columns(names)
            self.pointed = _on_pointed_papers(list(zip(c["id"], *(c[name] for name in names), strict=True)))
        pointed = self.pointed
        return {item_id: pointed[item_id] for item_id in item_ids if item_id in pointed} if pointed else {}

    def any_points(self) -> bool:
        """Whether any item carries points (the exam score has nothing to say otherwise)."""
        self.exam_facts(())
        return bool(self.pointed)

    def __contains__(self, item_id: str) -> bool:
        return item_id in self.position

    def subsets(self, item_id: str, named: dict[str, set[str]] | None = None) -> list[str]:
        """The subsets an item counts in (`overall`, modality, Korea flag, named subsets such as
        `hard`, `part:…`, `subject:…`); `overall` alone for an item the dataset no longer has."""
        index = self.position.get(item_id)
        if index is None:
            return ["overall"]
        names = ["overall"]
        names += [name for f in _FIXED for name in f.subsets(self.values[f.name][index])]
        names += [name for name, ids in (named or {}).items() if item_id in ids]
        return names + [name for f in self._labelled for name in f.subsets(self.values[f.name][index])]

    @cached_property
    def _labelled(self) -> list[Facet]:
        """The labelled facets that make subsets here: a `mixed_only` one where the items take two
        values or more (the answer format: one subset per format only in a dataset of several)."""
        labels = self._columns.labels
        return [f for f in _LABELLED if not f.mixed_only or len(labels[f.name][1]) > 1]

    @cached_property
    def _columns(self) -> _FacetColumns:
        return _FacetColumns.of(self)

    def current_hashes(self, item_ids: pa.Array | pa.ChunkedArray) -> pa.Array:
        """Each id's current content hash (null where the dataset has no such item), in Arrow."""
        index = _positions(item_ids, self._columns.ids)
        return self._columns.hashes.take(pa.array(index, pa.int64(), mask=index < 0))

    def masks(self, item_ids: Sequence[str] | pa.Array | pa.ChunkedArray,
              named: dict[str, set[str]] | None = None) -> dict[str, np.ndarray]:
        """Subset name → boolean mask over `item_ids` (the same membership as `subsets`),
        computed in Arrow and numpy: no Python object per item."""
        ids = item_ids if isinstance(item_ids, pa.Array | pa.ChunkedArray) else pa.array(list(item_ids), pa.string())
        columns = self._columns
        index = _positions(ids, columns.ids)
        known = index >= 0
        safe = np.where(known, index, 0)
        masks: dict[str, np.ndarray] = {"overall": np.ones(len(ids), dtype=bool)}
        if len(self.ids):
            for f in _FIXED:
                true = columns.flags[f.name][safe] & known
                masks[f.name] = true
                if f.report == "split":
                    masks[str(f.otherwise)] = known & ~true
        for name, members in (named or {}).items():
            chosen = pa.array(sorted(members), pa.string())
            masks[name] = pc.fill_null(pc.is_in(ids, value_set=chosen), False).to_numpy(zero_copy_only=False) & known
        for f in self._labelled:
            codes, labels = columns.labels[f.name]
            present = codes[safe] if len(self.ids) else np.array([], dtype=np.int32)
            for code in sorted(set(np.unique(present[known]).tolist()) - {-1}, key=lambda c: labels[c]):
                masks[f.subsets(labels[code])[0]] = known & (present == code)
        return {name: mask for name, mask in masks.items() if mask.any() or name == "overall"}


def _on_pointed_papers(rows: list[tuple[Any, ...]]) -> dict[str, ExamFacts]:
    """(id, exam, session, points) rows → the facts of the items on papers where some item has points."""
    papers = {(exam, session) for _, exam, session, points in rows if points is not None}
    return {item_id: ExamFacts(exam, session, None if points is None else float(points))
            for item_id, exam, session, points in rows if (exam, session) in papers}


def _positions(ids: pa.Array | pa.ChunkedArray, among: pa.Array) -> np.ndarray:
    """Each id's position in `among`, -1 where it is not there."""
    return np.asarray(pc.fill_null(pc.index_in(ids, value_set=among), -1).to_numpy(zero_copy_only=False),
                      dtype=np.int64)


@dataclass
class _FacetColumns:
    """An `ItemFacets` as Arrow and numpy columns, built once for all the runs that read it."""

    ids: pa.Array
    hashes: pa.Array
    flags: dict[str, np.ndarray]  # a flag or split facet: true per item (None is not true)
    labels: dict[str, tuple[np.ndarray, list[str]]]  # a labelled facet: code per item (-1: none), the labels

    @classmethod
    def of(cls, facets: ItemFacets) -> _FacetColumns:
        return cls(pa.array(facets.ids, pa.string()), pa.array([facets.hashes.get(i) for i in facets.ids], pa.string()),
                   {f.name: np.array([v is True for v in facets.values[f.name]], dtype=bool) for f in _FIXED},
                   {f.name: _codes(facets.values[f.name]) for f in _LABELLED})


def _codes(values: list[str | None]) -> tuple[np.ndarray, list[str]]:
    labels = sorted({value for value in values if value})
    code_of = {label: code for code, label in enumerate(labels)}
    return np.array([code_of.get(value, -1) if value else -1 for value in values], dtype=np.int32), labels


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
