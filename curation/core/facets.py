"""The item facets, declared once: what is known about an item besides its content, and where each
fact is used.

A facet has a name, a type and one way to read it from an `Item`; its flags say whether it is a
store column (and so an index readers query without parsing items), an `ItemQuery` field (and an
`--items` / `--where` key), a report subset, a release column, a release config of its own, or a
filter of the annotator's queues. The store's table and row, `ItemQuery`, the release's columns,
rows and configs, the report's subsets, `analyze shift` and the dedup scope are derived from this
list; adding a facet is a line here (and a store migration when it is a store column).

**Part and subject** have one rule: the taxonomy's, else the source's. `source` records what the
paper (or the imported file) said and stays as imported; the taxonomy step copies it into
`taxonomy` where that is empty, and reviewers correct `taxonomy`. So where they disagree the
taxonomy holds the later, reviewed decision, and every reader counts the item under it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from curation.core.item import STATUSES, InPlayStatus, Item

IN_PLAY: tuple[InPlayStatus, ...] = get_args(InPlayStatus)  # the statuses runs, filters and releases read
# dedup keeps, of a cluster of duplicates, the copy furthest along review (in-play statuses are in workflow order)
REVIEW_RANK: dict[str, int] = {status: rank for rank, status in enumerate(reversed(IN_PLAY))}

__all__ = ["FACETS", "IN_PLAY", "REVIEW_RANK", "STATUSES", "Facet", "facet", "resolved_part", "resolved_subject"]

# How a facet makes report subsets: `flag` counts the item in subset NAME when the value is true;
# `split` in NAME when true, else in the facet's `otherwise`; `label` in NAME:VALUE per value.
SubsetRule = Literal["flag", "split", "label"]
QueryRule = Literal["equals", "any_of"]

_RELEASE_DTYPES: dict[type, str] = {str: "string", int: "int32", bool: "bool", float: "float64"}


def resolved_part(item: Item) -> str | None:
    return item.taxonomy.part or item.source.part


def resolved_subject(item: Item) -> str | None:
    return item.taxonomy.subject or item.source.subject


@dataclass(frozen=True)
class Facet:
    name: str
    type: type  # str, int, float or bool
    read: Callable[[Item], Any]
    store_column: bool = False
    required: bool = False  # never None (a NOT NULL column)
    indexed: bool = False  # a store index
    max_length: int = 200  # of a string column
    query: QueryRule | None = None  # an ItemQuery field: one value, or any of a list
    report: SubsetRule | None = None
    otherwise: str | None = None  # the subset of a `split` facet's false items
    release: bool = False  # a release column
    release_config: bool = False  # a release config of the items where it is true
    annotator_filter: bool = False  # a filter of the annotator's queues (over the store column)
    label: str | None = None  # a `label` facet's subset prefix (default: its name): `format:numeric`
    mixed_only: bool = False  # a `label` facet's subsets only where the items take two values or more
    exam_score: bool = False  # read by the report's exam score (which paper an item is on, its points)

    @property
    def release_dtype(self) -> str:
        return _RELEASE_DTYPES[self.type]

    def subsets(self, value: Any) -> list[str]:
        """The report subsets an item with this value counts in."""
        if self.report == "label":
            return [f"{self.label or self.name}:{value}"] if value else []
        if self.report == "flag":
            return [self.name] if value is True else []
        if self.report == "split":
            return [self.name if value else str(self.otherwise)]
        return []


FACETS: tuple[Facet, ...] = (
    Facet("status", str, lambda item: item.status, store_column=True, required=True, indexed=True, max_length=16,
          query="any_of", annotator_filter=True),
    Facet("exam", str, lambda item: item.source.exam, store_column=True, required=True, indexed=True,
          query="equals", release=True, annotator_filter=True, exam_score=True),
    Facet("session", str, lambda item: item.source.session, store_column=True, max_length=64, release=True,
          exam_score=True),
    Facet("subject", str, resolved_subject, store_column=True, indexed=True, query="equals", report="label",
          release=True, annotator_filter=True),
    Facet("part", str, resolved_part, store_column=True, query="equals", report="label", release=True),
    Facet("number", int, lambda item: item.source.number, store_column=True, release=True),
    Facet("korea_specific", bool, lambda item: item.flags.korea_specific, store_column=True, query="equals",
          report="flag", release=True, release_config=True, annotator_filter=True),
    Facet("multimodal", bool, lambda item: item.multimodal, store_column=True, required=True, query="equals",
          report="split", otherwise="text_only", release=True, release_config=True, annotator_filter=True),
    # review state the annotator's queues select by (store columns, so no queue reads JSON)
    Facet("korea_candidate", bool, lambda item: bool(item.flags.korea_reasons), store_column=True, required=True),
    Facet("needs_fix", bool, lambda item: bool(item.flags.review_reasons), store_column=True, required=True),
    Facet("has_rationale", bool, lambda item: item.rationale is not None, store_column=True, required=True),
    # how the answer is checked (the key's format: choice, numeric, text, set …): `format:numeric` subsets
    # (only in a dataset of several formats: in a pool of one, `format:choice` would repeat `overall`)
    Facet("answer_format", str, lambda item: item.answer_format, store_column=True, max_length=16, query="equals",
          report="label", label="format", mixed_only=True),
    # 배점: the report's exam score (points earned out of the paper's total)
    Facet("points", float, lambda item: item.points, store_column=True, exam_score=True),
    Facet("visual_type", str, lambda item: item.taxonomy.visual_type, release=True),
    Facet("question_format", str, lambda item: item.taxonomy.question_format, release=True),
)

_BY_NAME = {f.name: f for f in FACETS}


def facet(name: str) -> Facet:
    return _BY_NAME[name]


def store_facets() -> list[Facet]:
    return [f for f in FACETS if f.store_column]


def query_facets() -> list[Facet]:
    return [f for f in FACETS if f.query]


def report_facets() -> list[Facet]:
    return [f for f in FACETS if f.report]


def exam_score_facets() -> list[Facet]:
    """What the report's exam score reads: the paper an item is on (exam, session) and its points."""
    return [f for f in FACETS if f.exam_score]


def release_facets() -> list[Facet]:
    return [f for f in FACETS if f.release]


def release_config_facets() -> list[Facet]:
    return [f for f in FACETS if f.release_config]


def annotator_filters() -> list[Facet]:
    """The queue filters: each is the store column of the same name, filtered as an `ItemQuery` field
    is (`curation.core.store.facet_clause`: `status` any of a list, the others one value); the flag
    filters are the bool facets (`korea_specific` None = undecided)."""
    return [f for f in FACETS if f.annotator_filter]


def values(item: Item, facets: list[Facet]) -> dict[str, Any]:
    """The item's values of `facets`, by name."""
    return {f.name: f.read(item) for f in facets}
