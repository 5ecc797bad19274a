"""The revisioned item store (SQLAlchemy 2 Core): SQLite in WAL mode, or PostgreSQL by URL.

Every change appends a revision row (author, stage, time, changed fields, reason, full
snapshot); the `items` table holds the current snapshot for fast queries. Writes are
compare-and-swap on the revision number: an update names the revision it was made
against and is refused with a ConflictError when that is no longer current.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, make_dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from pydantic import ValidationError
from sqlalchemy import (
    Boolean,
    Column,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    create_engine,
    event,
    func,
    select,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import TypeEngine

from curation.core.credentials import mask_url
from curation.core.diff import changed_paths
from curation.core.errors import ConflictError, NotFoundError, WorkspaceError
from curation.core.facets import Facet, query_facets, store_facets
from curation.core.facets import values as facet_values
from curation.core.identity import content_hash
from curation.core.item import SCHEMA_VERSION, AnswerView, Item, parse_item
from curation.core.migrations import STORE_VERSION, migrate_record, migrate_store

metadata = MetaData()

meta_table = Table(
    "benchsmith_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

def _facet_column(facet: Facet) -> Column:
    kinds: dict[type, TypeEngine[Any]] = {str: String(facet.max_length), int: Integer(), bool: Boolean(),
                                         float: Float()}
    kind = kinds[facet.type]
    return Column(facet.name, kind, nullable=not facet.required, index=facet.indexed or None)


# The facet columns (curation/core/facets.py) let readers that need only facts about items (solve matrix,
# filters, reports, release `hard`, the annotator's queues) filter and count without parsing an item.
items_table = Table(
    "items",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("rev", Integer, nullable=False),
    *(_facet_column(f) for f in store_facets()),
    Column("content_hash", String(32), index=True),  # content identity (implicit variant): readers of records
    Column("data", Text, nullable=False),
    Column("updated_at", String(32), nullable=False),
    Column("updated_by", String(200), nullable=False),
)

revisions_table = Table(
    "revisions",
    metadata,
    Column("item_id", String(200), primary_key=True),
    Column("rev", Integer, primary_key=True),
    Column("author", String(200), nullable=False),
    Column("stage", String(64), nullable=False, index=True),
    Column("created_at", String(32), nullable=False, index=True),
    Column("changed_fields", Text, nullable=False),
    Column("reason", Text),
    Column("snapshot", Text, nullable=False),
)

_BATCH = 2000


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class StoredItem:
    item: Item
    rev: int
    updated_at: str
    updated_by: str
    content_hash: str | None = None  # the implicit-variant hash column, read in the same row as the item


@dataclass(frozen=True)
class Revision:
    item_id: str
    rev: int
    author: str
    stage: str
    created_at: str
    changed_fields: list[str]
    reason: str | None
    snapshot: dict[str, Any]  # in the current item schema (an older snapshot is upgraded on read)


@dataclass
class WriteReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # existing items left as they are (on_existing="skip")


def _query_field(facet: Facet) -> tuple[str, Any, Any]:
    kind: Any = Sequence[facet.type] if facet.query == "any_of" else facet.type  # type: ignore[name-defined]
    return facet.name, kind | None, field(default=None)


if TYPE_CHECKING:
    class ItemQuery:
        """A filter over the current items (fields: `ids` and the queryable facets)."""

        __dataclass_fields__: ClassVar[dict[str, Any]]

        def __init__(self, ids: Sequence[str] | None = None, **facets: Any) -> None: ...
        def __getattr__(self, name: str) -> Any: ...
else:
    ItemQuery = make_dataclass(
        "ItemQuery", [("ids", Sequence[str] | None, field(default=None)), *map(_query_field, query_facets())],
        frozen=True)
    ItemQuery.__module__ = __name__  # found by pickle (process pools, Ray) where it is defined
    ItemQuery.__doc__ = ("A filter over the current items: `ids` and the queryable facets (curation/core/facets.py). "
                         "Empty fields match everything.")


def facet_clause(facet: Facet, value: Any) -> ColumnElement[bool] | None:
    """The filter on a queryable facet's store column (an `ItemQuery` field, an annotator queue
    filter): any of a list, or one value; None where the value selects everything."""
    column = items_table.c[facet.name]
    if facet.query == "any_of":
        return column.in_(list(value)) if value else None
    return None if value is None else column == value


POOL_OVERFLOW = 4  # beyond pool_size, for a thread that holds a second connection while it has one
# A pooled server keeps ~45 connections open; at SQLite's default 2 MB page cache each, they grew
# the server by up to 90 MB as they warmed. The file's pages stay in the OS cache either way.
POOLED_CACHE_KIB = 512


def _configure_sqlite(engine: Engine, cache_kib: int | None = None) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):  # noqa: ANN001
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        if cache_kib is not None:
            cursor.execute(f"PRAGMA cache_size=-{int(cache_kib)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection):
        # Writers take the write lock up front so two writers queue instead of deadlocking
        # on a lock upgrade; readers never block writers in WAL mode.
        writing = connection.get_execution_options().get("benchsmith_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writing else "BEGIN")


class Store:
    def __init__(self, url: str, *, create: bool = False, pool_size: int | None = None):
        """`pool_size`: connections kept open for reuse, one per thread that may use the store at
        once (a server's worker threads); None keeps SQLAlchemy's default (5), enough for the CLI.
        Past it, connections are opened and closed per use: under a server's load that was about
        one new connection per action."""
        self.url = url
        sizing = {} if pool_size is None else {"pool_size": pool_size, "max_overflow": POOL_OVERFLOW}
        try:
            self.engine = create_engine(url, future=True, **sizing)
        except Exception as error:  # bad URL, missing driver
            raise WorkspaceError(f"cannot open store {mask_url(url)!r}: {mask_url(str(error))}") from None
        if self.engine.dialect.name == "sqlite":
            _configure_sqlite(self.engine, None if pool_size is None else POOLED_CACHE_KIB)
        try:
            self._prepare(create)
        except OperationalError as error:
            raise WorkspaceError(f"cannot open store {mask_url(url)!r}: {mask_url(str(error.orig))}") from None

    # -- connection helpers -------------------------------------------------------------
    def _write(self):
        return self.engine.connect().execution_options(benchsmith_write=True)

    def _prepare(self, create: bool) -> None:
        with self._write() as conn, conn.begin():
            has_meta = self.engine.dialect.has_table(conn, meta_table.name)
            if not has_meta:
                if not create:
                    raise WorkspaceError(f"{mask_url(self.url)} holds no benchsmith store (run `benchsmith init`)")
                metadata.create_all(conn)
                conn.execute(meta_table.insert().values(key="store_version", value=str(STORE_VERSION)))
                return
            version = int(conn.execute(select(meta_table.c.value).where(meta_table.c.key == "store_version")).scalar_one())
            if version > STORE_VERSION:
                raise WorkspaceError(
                    f"store {mask_url(self.url)} has version {version}, newer than this benchsmith ({STORE_VERSION}): upgrade benchsmith"
                )
            if version < STORE_VERSION:
                migrate_store(conn, version)
                conn.execute(update(meta_table).where(meta_table.c.key == "store_version").values(value=str(STORE_VERSION)))

    def close(self) -> None:
        self.engine.dispose()

    # -- writing ------------------------------------------------------------------------
    @staticmethod
    def _row(item: Item, rev: int, author: str, when: str, data: str) -> dict[str, Any]:
        return {
            "id": item.id,
            "rev": rev,
            **facet_values(item, store_facets()),
            "content_hash": content_hash(item),
            "data": data,
            "updated_at": when,
            "updated_by": author,
        }

    def save_items(
        self,
        items: Iterable[Item],
        *,
        author: str,
        stage: str,
        reason: str | None = None,
        on_existing: Literal["revise", "skip"] = "revise",
    ) -> WriteReport:
        """Create new items; existing ones that differ get a new revision ("revise") or are
        left alone and reported ("skip", so re-importing a source never undoes later edits).

        Meant for bulk stages (import, extract): it does not check a revision the caller
        saw. Interactive edits go through `update`, which does.
        """
        report = WriteReport()
        batch: list[Item] = []
        with self._write() as conn, conn.begin():
            for item in items:
                batch.append(item)
                if len(batch) >= _BATCH:
                    self._save_batch(conn, batch, author, stage, reason, on_existing, report)
                    batch = []
            if batch:
                self._save_batch(conn, batch, author, stage, reason, on_existing, report)
        return report

    def _save_batch(
        self,
        conn: Connection,
        batch: list[Item],
        author: str,
        stage: str,
        reason: str | None,
        on_existing: str,
        report: WriteReport,
    ) -> None:
        ids = [item.id for item in batch]
        if len(set(ids)) != len(ids):
            dupes = sorted(i for i, count in Counter(ids).items() if count > 1)
            raise WorkspaceError(f"the same item id appears twice in one write: {', '.join(dupes[:5])}")
        existing = {
            row.id: (row.rev, row.data)
            for row in conn.execute(select(items_table.c.id, items_table.c.rev, items_table.c.data).where(items_table.c.id.in_(ids)))
        }
        when = _now()
        new_rows, revision_rows = [], []
        for item in batch:
            record = item.to_record()
            data = _dumps(record)
            if item.id not in existing:
                new_rows.append(self._row(item, 1, author, when, data))
                revision_rows.append(self._revision_row(item.id, 1, author, stage, when, sorted(record), reason, data))
                report.created.append(item.id)
                continue
            old_rev, old_data = existing[item.id]
            old_data = as_written_now(old_data)
            if old_data == data:
                report.unchanged.append(item.id)
                continue
            if on_existing == "skip":
                report.skipped.append(item.id)
                continue
            changed = changed_paths(json.loads(old_data), record)
            self._cas_update(conn, item, old_rev, author, when, data)
            revision_rows.append(self._revision_row(item.id, old_rev + 1, author, stage, when, changed, reason, data))
            report.updated.append(item.id)
        if new_rows:
            conn.execute(items_table.insert(), new_rows)
        if revision_rows:
            conn.execute(revisions_table.insert(), revision_rows)

    @staticmethod
    def _revision_row(
        item_id: str, rev: int, author: str, stage: str, when: str, changed: list[str], reason: str | None, data: str
    ) -> dict[str, Any]:
        return {
            "item_id": item_id,
            "rev": rev,
            "author": author,
            "stage": stage,
            "created_at": when,
            "changed_fields": json.dumps(changed, ensure_ascii=False),
            "reason": reason,
            "snapshot": data,
        }

    def _cas_update(self, conn: Connection, item: Item, expected_rev: int, author: str, when: str, data: str) -> bool:
        row = self._row(item, expected_rev + 1, author, when, data)
        del row["id"]
        result = conn.execute(
            update(items_table)
            .where(items_table.c.id == item.id, items_table.c.rev == expected_rev)
            .values(**row)
        )
        return result.rowcount == 1

    def update(
        self, item: Item, *, expect_rev: int, author: str, stage: str, reason: str | None = None
    ) -> int:
        """Write a new revision of `item` made against revision `expect_rev`; return the new number.

        Raises ConflictError (who changed what since) when `expect_rev` is stale, and
        NotFoundError when the item does not exist. A write that changes nothing returns
        the current revision and appends nothing.
        """
        record = item.to_record()
        data = _dumps(record)
        with self._write() as conn, conn.begin():
            current = conn.execute(
                select(items_table.c.rev, items_table.c.data).where(items_table.c.id == item.id)
            ).one_or_none()
            if current is None:
                raise NotFoundError(f"no item {item.id!r} in the store")
            if current.rev != expect_rev:
                raise self._conflict(conn, item.id, expect_rev, current.rev)
            old_data = as_written_now(current.data)
            if old_data == data:
                return current.rev
            changed = changed_paths(json.loads(old_data), record)
            when = _now()
            try:
                if not self._cas_update(conn, item, expect_rev, author, when, data):
                    raise self._conflict(conn, item.id, expect_rev, None)
                conn.execute(
                    revisions_table.insert(),
                    [self._revision_row(item.id, expect_rev + 1, author, stage, when, changed, reason, data)],
                )
            except IntegrityError:  # another writer appended this revision number first
                raise self._conflict(conn, item.id, expect_rev, None) from None
            return expect_rev + 1

    def update_many(
        self, changes: Sequence[tuple[Item, int, str | None]], *, author: str, stage: str
    ) -> tuple[list[str], list[str]]:
        """`update` for a batch stage: (item, revision it was made against, reason) per item, a
        compare-and-swap each, one transaction per few hundred items. Returns (written ids,
        conflict ids: edited meanwhile or gone); an item whose data is unchanged is neither."""
        written: list[str] = []
        conflicts: list[str] = []
        for start in range(0, len(changes), _BATCH):
            batch = changes[start : start + _BATCH]
            with self._write() as conn, conn.begin():
                # The rows stay locked until commit (SQLite: the write lock taken at BEGIN;
                # PostgreSQL: FOR UPDATE), so the revision checked here is the one replaced.
                current = {row.id: (row.rev, row.data) for row in conn.execute(
                    select(items_table.c.id, items_table.c.rev, items_table.c.data)
                    .where(items_table.c.id.in_([item.id for item, _, _ in batch])).with_for_update())}
                when = _now()
                item_rows, revision_rows = [], []
                for item, expect_rev, reason in batch:
                    record = item.to_record()
                    data = _dumps(record)
                    rev, old_data = current.get(item.id, (None, ""))
                    if rev != expect_rev:
                        conflicts.append(item.id)
                        continue
                    old_data = as_written_now(old_data)
                    if old_data == data:
                        continue
                    row = self._row(item, expect_rev + 1, author, when, data)
                    item_rows.append({f"v_{key}": value for key, value in row.items()} | {"expected": expect_rev})
                    revision_rows.append(self._revision_row(item.id, expect_rev + 1, author, stage, when,
                                                            changed_paths(json.loads(old_data), record), reason, data))
                    written.append(item.id)
                if item_rows:
                    conn.execute(update(items_table)
                                 .where(items_table.c.id == bindparam("v_id"), items_table.c.rev == bindparam("expected"))
                                 .values({key[2:]: bindparam(key) for key in item_rows[0] if key.startswith("v_")
                                          and key != "v_id"}), item_rows)
                    conn.execute(revisions_table.insert(), revision_rows)
        return written, conflicts

    def update_fields(
        self,
        item_id: str,
        changes: dict[str, Any],
        *,
        expect_rev: int,
        author: str,
        stage: str,
        reason: str | None = None,
    ) -> int:
        """Set dotted field paths (e.g. `stem`, `options.2.text`, `flags.korea_specific`) and save."""
        stored = self.get(item_id)
        if stored.rev != expect_rev:
            with self.engine.connect() as conn:
                raise self._conflict(conn, item_id, expect_rev, stored.rev)
        record = stored.item.to_record()
        for path, value in changes.items():
            set_path(record, path, value)
        return self.update(parse_item(record), expect_rev=expect_rev, author=author, stage=stage, reason=reason)

    def _conflict(self, conn: Connection, item_id: str, expected: int, current: int | None) -> ConflictError:
        rows = conn.execute(
            select(revisions_table.c.rev, revisions_table.c.author, revisions_table.c.stage,
                   revisions_table.c.created_at, revisions_table.c.changed_fields)
            .where(revisions_table.c.item_id == item_id, revisions_table.c.rev > expected)
            .order_by(revisions_table.c.rev)
        ).all()
        since = [
            f"rev {r.rev} by {r.author} ({r.stage}, {r.created_at}): {', '.join(json.loads(r.changed_fields)) or 'no fields'}"
            for r in rows
        ]
        if current is None:
            current = rows[-1].rev if rows else expected
        return ConflictError(item_id, expected, current, since)

    # -- reading ------------------------------------------------------------------------
    def _stored(self, row: Any) -> StoredItem:
        return StoredItem(item_from_data(row.data), row.rev, row.updated_at, row.updated_by, row.content_hash)

    def get(self, item_id: str) -> StoredItem:
        with self.engine.connect() as conn:
            row = conn.execute(select(items_table).where(items_table.c.id == item_id)).one_or_none()
        if row is None:
            raise NotFoundError(f"no item {item_id!r} in the store")
        return self._stored(row)

    def get_many(self, item_ids: Sequence[str]) -> dict[str, StoredItem]:
        return {stored.item.id: stored for stored in self.iter_many(item_ids)}

    def iter_many(self, item_ids: Sequence[str]) -> Iterator[StoredItem]:
        """The stored items among `item_ids` (absent ids are left out), streamed, in no set order."""
        yield from (self._stored(row) for row in self._rows_among(item_ids, list(items_table.c)))

    def iter_data(self, item_ids: Sequence[str]) -> Iterator[tuple[str, str, str | None]]:
        """(id, stored JSON, content hash) of the items among `item_ids`, streamed in no set order and
        not parsed: `iter_many` for readers that parse only what they need (`view_from_data`)."""
        c = items_table.c
        yield from ((row[0], row[1], row[2]) for row in self._rows_among(item_ids, [c.id, c.data, c.content_hash]))

    def _rows_among(self, item_ids: Sequence[str], columns: list[Any]) -> Iterator[Any]:
        with self.engine.connect() as conn:
            if len(item_ids) > 2000 and 4 * len(item_ids) > conn.execute(select(func.count()).select_from(
                    items_table)).scalar_one():
                # Most of the store: one pass over the table costs less than a statement per 500 ids.
                wanted = set(item_ids)
                for rows in conn.execution_options(yield_per=_BATCH).execute(select(*columns)).partitions():
                    yield from (row for row in rows if row.id in wanted)
                return
            for start in range(0, len(item_ids), 500):
                chunk = list(item_ids[start : start + 500])
                yield from conn.execute(select(*columns).where(items_table.c.id.in_(chunk))).all()

    def _where(self, statement, query: ItemQuery | None):  # noqa: ANN001
        if query is None:
            return statement
        if query.ids is not None:
            statement = statement.where(items_table.c.id.in_(list(query.ids)))
        for facet in query_facets():
            clause = facet_clause(facet, getattr(query, facet.name))
            if clause is not None:
                statement = statement.where(clause)
        return statement

    def iter_items(self, query: ItemQuery | None = None, among: set[str] | None = None) -> Iterator[StoredItem]:
        """Current items ordered by id, streamed by one statement in batches so memory stays flat
        (a statement per page would make the database find its place again on every page);
        `among`: only these ids (the others are not parsed)."""
        statement = self._where(select(items_table), query).order_by(items_table.c.id)
        with self.engine.connect() as conn:
            for rows in conn.execution_options(yield_per=_BATCH).execute(statement).partitions():
                for row in rows:
                    if among is None or row.id in among:
                        yield self._stored(row)

    def iter_rows(self, query: ItemQuery | None = None, among: set[str] | None = None
                  ) -> Iterator[tuple[str, str, str | None]]:
        """(id, stored JSON, content hash) of the current items, streamed like `iter_items` but
        not parsed: for readers that parse only what they need (`view_from_data`)."""
        c = items_table.c
        statement = self._where(select(c.id, c.data, c.content_hash), query).order_by(c.id)
        with self.engine.connect() as conn:
            for rows in conn.execution_options(yield_per=_BATCH).execute(statement).partitions():
                yield from ((row[0], row[1], row[2]) for row in rows if among is None or row[0] in among)

    def columns(self, names: Sequence[str], query: ItemQuery | None = None) -> dict[str, list[Any]]:
        """Item columns (`id` first, then `names`, e.g. content_hash, status, multimodal) ordered by id:
        what a pool-scale reader needs without parsing a single item."""
        wanted = [items_table.c.id, *(items_table.c[name] for name in names)]
        ids = None if query is None or query.ids is None else set(query.ids)
        if query is not None and ids is not None and len(ids) > 500:
            query = replace(query, ids=None)  # a long id list is filtered here: SQL caps a statement's parameters
        with self.engine.connect() as conn:
            rows = conn.execute(self._where(select(*wanted), query).order_by(items_table.c.id)).all()
        if ids is not None:
            rows = [row for row in rows if row[0] in ids]
        transposed = list(zip(*rows, strict=True)) or [() for _ in wanted]  # columns at C speed, not a loop per cell
        return {key: list(values) for key, values in zip(["id", *names], transposed, strict=True)}

    def hashes(self, query: ItemQuery | None = None) -> dict[str, str]:
        """Item id → its content hash (implicit variant), read from the column."""
        columns = self.columns(["content_hash"], query)
        return dict(zip(columns["id"], columns["content_hash"], strict=True))

    def ids(self, query: ItemQuery | None = None) -> list[str]:
        with self.engine.connect() as conn:
            statement = self._where(select(items_table.c.id), query).order_by(items_table.c.id)
            return list(conn.execute(statement).scalars())

    def count(self, query: ItemQuery | None = None) -> int:
        with self.engine.connect() as conn:
            return conn.execute(self._where(select(func.count()).select_from(items_table), query)).scalar_one()

    def history(self, item_id: str) -> list[Revision]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(revisions_table).where(revisions_table.c.item_id == item_id).order_by(revisions_table.c.rev)
            ).all()
        if not rows:
            raise NotFoundError(f"no item {item_id!r} in the store")
        return [
            Revision(r.item_id, r.rev, r.author, r.stage, r.created_at, json.loads(r.changed_fields), r.reason,
                     json.loads(as_written_now(r.snapshot)))
            for r in rows
        ]

    def stage_counts(self) -> dict[str, int]:
        """Revisions per stage (import, extract, dedup, annotate …): how the items were built."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(revisions_table.c.stage, func.count()).group_by(revisions_table.c.stage))
            return {stage: n for stage, n in sorted(rows)}

    def last_revision_at(self) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(select(func.max(revisions_table.c.created_at))).scalar_one()

    def revision_count(self) -> int:
        with self.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(revisions_table)).scalar_one()

    def stats(self) -> dict[str, Any]:
        c = items_table.c

        def grouped(conn: Connection, column) -> dict[str, int]:  # noqa: ANN001
            rows = conn.execute(select(column, func.count()).group_by(column).order_by(column))
            return {("(none)" if key is None else str(key)): n for key, n in rows}

        with self.engine.connect() as conn:
            total = conn.execute(select(func.count()).select_from(items_table)).scalar_one()
            return {
                "items": total,
                "revisions": conn.execute(select(func.count()).select_from(revisions_table)).scalar_one(),
                "by_status": grouped(conn, c.status),
                "by_exam": grouped(conn, c.exam),
                "by_subject": grouped(conn, c.subject),
                "by_part": grouped(conn, c.part),
                "flags": {
                    "korea_specific": grouped(conn, c.korea_specific),
                    "multimodal": grouped(conn, c.multimodal),
                },
            }


_CURRENT_SCHEMA = f'"schema_version":{SCHEMA_VERSION}'


def item_from_data(data: str) -> Item:
    """An item from its stored JSON: pydantic parses a current-schema record straight from the
    text (no dict in between); an older one is migrated first."""
    if _CURRENT_SCHEMA in data:
        try:
            return Item.model_validate_json(data)
        except ValidationError:
            pass  # parse_item says what is wrong, with the field path
    return parse_item(migrate_record(json.loads(data)))


def as_written_now(data: str) -> str:
    """Stored item JSON as this benchsmith writes it: a record of an older schema is upgraded, so
    that a write compares (and diffs) against what it means, not against its older shape."""
    return data if _CURRENT_SCHEMA in data else _dumps(item_from_data(data).to_record())


View = TypeVar("View", bound=AnswerView)


def view_from_data(data: str, view: type[View] = AnswerView) -> View | Item:  # type: ignore[assignment]
    """An item's `AnswerView` (or a view built on it) from its stored JSON; a record of an older
    schema is read whole."""
    if _CURRENT_SCHEMA in data:
        try:
            return view.model_validate_json(data)
        except ValidationError:
            pass
    return item_from_data(data)


def get_path(record: Any, path: str) -> Any:
    """The value at a dotted path (1-based list positions), or None where there is none."""
    for part in path.split("."):
        if isinstance(record, list) and part.isdigit() and 1 <= int(part) <= len(record):
            record = record[int(part) - 1]
        elif isinstance(record, dict):
            record = record.get(part)
        else:
            return None
    return record


def set_path(record: dict[str, Any], path: str, value: Any) -> None:
    """Set a dotted path in a JSON record; list indices are 1-based like option numbers."""
    parts = path.split(".")
    target: Any = record
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if isinstance(target, list):
            if not part.isdigit() or not 1 <= int(part) <= len(target):
                raise WorkspaceError(f"field {path!r}: {part!r} is not a position 1..{len(target)}")
            index = int(part) - 1
            if last:
                target[index] = value
            else:
                target = target[index]
        elif isinstance(target, dict):
            if last:
                target[part] = value
            else:
                if target.get(part) is None:
                    target[part] = {}
                target = target[part]
        else:
            raise WorkspaceError(f"field {path!r}: cannot descend into {'.'.join(parts[:depth])!r}")
