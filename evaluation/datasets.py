"""What a run answers: a dataset of items, from the store (a query), a release config (its parquet,
the store untouched) or a JSONL file of items.

A dataset says who it is in two ways: `identity()` is what makes two runs the same run (the
selection, not the content, so a rerun after an edit resumes the same run and re-asks only
what changed) and `describe()` is what the run manifest records (with a content hash where
the source is immutable). Readers (report, matrix, judge) reopen a run's dataset from its
manifest with `dataset_from_manifest` to get the items as they are now.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from curation.core.blobs import BlobStore
from curation.core.errors import BenchsmithError, NotFoundError
from curation.core.identity import content_hash
from curation.core.item import AnswerView, Item, parse_item
from curation.core.store import ItemQuery, Store, item_from_data, view_from_data
from evaluation.filter_records import latest_filter_record
from evaluation.records import RunManifest
from evaluation.release_records import RELEASE_MANIFEST, ReleaseManifest, release_rows


class Dataset(Protocol):
    label: str
    # every item is scored, as the harnesses score a release: an item a model is not sent (an image
    # item and a text-only model) counts in n as not answered; otherwise it is left out of n
    scores_every_item: bool

    def identity(self) -> dict[str, Any]: ...

    def describe(self) -> dict[str, Any]: ...

    def items(self) -> list[Item]: ...

    def lookup(self, item_ids: Sequence[str]) -> dict[str, Item]: ...

    def named_subsets(self, variant: str) -> tuple[dict[str, set[str]], list[str]]:
        """Subsets that come from outside the item (`hard`), and notes on what was left out."""
        ...


def current_hashes(items: Iterable[Item], variant: str) -> dict[str, str]:
    return {item.id: content_hash(item, variant) for item in items}


ONE_PASS_FROM = 2000  # items from which `lookup_views` reads the dataset's rows in one pass


@dataclass
class StoreDataset:
    store: Store
    query: ItemQuery = field(default_factory=ItemQuery)
    limit: int | None = None
    workspace_root: Path | None = None  # where filtering records live
    label: str = "store"
    scores_every_item = False
    _read: dict[str, tuple[Item, str | None]] = field(default_factory=dict, repr=False, compare=False)
    _hashes: dict[str, str] | None = field(default=None, repr=False, compare=False)
    _hash_columns: tuple[pa.Array, pa.Array] | None = field(default=None, repr=False, compare=False)

    def identity(self) -> dict[str, Any]:
        return {"kind": "store", "query": {k: v for k, v in self.query.__dict__.items() if v is not None},
                "limit": self.limit}

    def describe(self) -> dict[str, Any]:
        return self.identity()

    def items(self) -> list[Item]:
        stream = (stored.item for stored in self.store.iter_items(self.query))
        if self.limit:
            return [item for _, item in zip(range(self.limit), stream, strict=False)]
        return list(stream)

    def current_hashes(self) -> dict[str, str]:
        """Item id → content hash (implicit variant) of the selected items, in item order, from the
        store's column: which items changed is known before any is read."""
        if self._hashes is None:  # read once for the dataset's life (one command)
            columns = self.store.columns(["content_hash"], self.query)
            pairs = zip(columns["id"], columns["content_hash"], strict=True)
            self._hashes = dict(islice(pairs, self.limit)) if self.limit else dict(pairs)
        return self._hashes

    def current_columns(self) -> tuple[pa.Array, pa.Array]:
        """`current_hashes` as two Arrow columns (ids, hashes), for readers that work in Arrow."""
        if self._hash_columns is None:
            hashes = self.current_hashes()
            self._hash_columns = (pa.array(list(hashes), pa.string()), pa.array(list(hashes.values()), pa.string()))
        return self._hash_columns

    def lookup(self, item_ids: Sequence[str]) -> dict[str, Item]:
        return {item_id: stored.item for item_id, stored in self.store.get_many(list(item_ids)).items()}

    def lookup_hashed(self, item_ids: Sequence[str]) -> dict[str, tuple[Item, str | None]]:
        """Items with their implicit content hash, both from the same store row. Kept for the
        dataset's life (one command): several models over one pool read it once."""
        missing = [item_id for item_id in item_ids if item_id not in self._read]
        found = (self.store.iter_items(self.query, among=set(missing)) if len(missing) > 2000
                 else self.store.iter_many(missing))  # many: one pass over the dataset's own rows
        self._read.update((stored.item.id, (stored.item, stored.content_hash)) for stored in found)
        return {item_id: self._read[item_id] for item_id in item_ids if item_id in self._read}

    def lookup_views(self, item_ids: Sequence[str]) -> dict[str, tuple[AnswerView | Item, str | None]]:
        """`lookup_hashed` for a reader of options, keys and formats only (the local baselines):
        many items are parsed as `AnswerView`s in one pass over the dataset's rows; a few, or one
        without a stored hash, are read whole."""
        if len(item_ids) < ONE_PASS_FROM:
            return dict(self.lookup_hashed(item_ids))
        found: dict[str, tuple[AnswerView | Item, str | None]] = {}
        for item_id, data, digest in self.store.iter_rows(self.query, among=set(item_ids)):
            found[item_id] = (view_from_data(data) if digest else item_from_data(data), digest)
        return {item_id: found[item_id] for item_id in item_ids if item_id in found}

    def named_subsets(self, variant: str, hashes: Mapping[str, str] | None = None
                      ) -> tuple[dict[str, set[str]], list[str]]:
        """`hard` from the newest filtering record; `hashes` (item → current hash), when the caller
        has them, spare reading the survivors again."""
        found = latest_filter_record(self.workspace_root) if self.workspace_root else None
        if found is None:
            return {}, []
        path, record = found
        if hashes is None:
            hashes = (self.store.hashes(ItemQuery(ids=record.survivors)) if variant == "implicit"
                      else current_hashes(self.lookup(record.survivors).values(), variant))
        hard = record.hard_subset(hashes)
        return {"hard": set(hard.ids)}, hard.notes(path.name)


class ReleaseDataset:
    """A release config read straight from its parquet; images go to the blob cache, never items to the store.
    Scored on every row, as lm-eval and inspect score it."""

    scores_every_item = True

    def __init__(self, path: Path, config: str, blobs: BlobStore):
        self.path = Path(path)
        self.config = config
        self.blobs = blobs
        manifest_path = self.path / RELEASE_MANIFEST
        if not manifest_path.is_file():
            raise BenchsmithError(f"{self.path} is not a benchsmith release (no {RELEASE_MANIFEST})")
        self.manifest = ReleaseManifest.read(manifest_path)
        if config not in self.manifest.configs:
            raise BenchsmithError(f"{self.path}: no config {config!r} (configs: {', '.join(self.manifest.configs)})")
        self.label = f"{self.manifest.name}-v{self.manifest.version}-{config}"
        self._items: list[Item] | None = None

    def identity(self) -> dict[str, Any]:
        return {"kind": "release", "name": self.manifest.name, "version": self.manifest.version,
                "config": self.config, "content_hash": self.manifest.content_hash}

    def describe(self) -> dict[str, Any]:
        return self.identity() | {"path": str(self.path.resolve())}

    def _rows(self, config: str) -> list[dict[str, Any]]:
        import pyarrow.parquet as pq

        rows: list[dict[str, Any]] = []
        for name in self.manifest.configs[config].files:
            rows += pq.read_table(self.path / name).to_pylist()
        return rows

    def items(self) -> list[Item]:
        if self._items is None:
            self._items = [row.to_item(self.blobs.put) for row in release_rows(self._rows(self.config))]
        return self._items

    def lookup(self, item_ids: Sequence[str]) -> dict[str, Item]:
        wanted = set(item_ids)
        return {item.id: item for item in self.items() if item.id in wanted}

    def named_subsets(self, variant: str) -> tuple[dict[str, set[str]], list[str]]:
        if "hard" not in self.manifest.configs or self.config == "hard":
            return {}, []
        return {"hard": {row["id"] for row in self._rows("hard")}}, []


class JsonlDataset:
    """Items in benchsmith's JSONL form (`items export`); image blobs resolve in the workspace."""

    scores_every_item = False

    def __init__(self, path: Path):
        self.path = Path(path)
        if not self.path.is_file():
            raise NotFoundError(f"no items file {self.path}")
        self.label = self.path.stem
        self._items: list[Item] | None = None

    def identity(self) -> dict[str, Any]:
        return {"kind": "jsonl", "path": str(self.path.resolve())}

    def describe(self) -> dict[str, Any]:
        return self.identity() | {"sha256": hashlib.sha256(self.path.read_bytes()).hexdigest()}

    def items(self) -> list[Item]:
        if self._items is None:
            items = []
            for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    items.append(parse_item(json.loads(line)))
                except json.JSONDecodeError as error:
                    raise BenchsmithError(f"{self.path}:{number}: not JSON ({error.msg})") from None
            self._items = items
        return self._items

    def lookup(self, item_ids: Sequence[str]) -> dict[str, Item]:
        wanted = set(item_ids)
        return {item.id: item for item in self.items() if item.id in wanted}

    def named_subsets(self, variant: str) -> tuple[dict[str, set[str]], list[str]]:
        return {}, []


def split_release_arg(text: str) -> tuple[Path, str]:
    """`PATH[:CONFIG]` (default config `full`)."""
    path, sep, config = text.rpartition(":")
    if sep and path and "/" not in config and Path(path).is_dir():
        return Path(path), config
    return Path(text), "full"


def dataset_from_source(source: str, store: Store, blobs: BlobStore, workspace_root: Path) -> Dataset:
    """`--from`: a release folder (PATH[:CONFIG]) or a JSONL file of items."""
    path, config = split_release_arg(source)
    if path.is_dir():
        return ReleaseDataset(path, config, blobs)
    if path.suffix == ".jsonl" or path.is_file():
        return JsonlDataset(path)
    raise NotFoundError(f"--from {source!r}: not a release folder or a JSONL file")


def dataset_from_manifest(manifest: RunManifest, store: Store, blobs: BlobStore, workspace_root: Path) -> Dataset:
    """The dataset a run answered, reopened to read its items as they are now."""
    described = manifest.dataset_ref()
    if described.kind == "store":
        return StoreDataset(store, ItemQuery(**(described.query or {})), described.limit, workspace_root)
    if described.kind == "release" and described.path and described.config:
        release = ReleaseDataset(Path(described.path), described.config, blobs)
        if release.identity()["content_hash"] != described.content_hash:
            raise BenchsmithError(f"run {manifest.run_id}: release {described.path} changed since the run "
                                  "(its content hash differs)")
        return release
    if described.kind == "jsonl" and described.path:
        return JsonlDataset(Path(described.path))
    raise BenchsmithError(f"run {manifest.run_id}: its manifest does not say where its {described.kind} dataset is")
