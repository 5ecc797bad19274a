"""Review queues: which items each queue holds, filters and search, navigation, "next
unreviewed for me", assignment with overlap, recorded decisions and progress.

Queue membership reads the store's `items` table (never writes it): what each queue selects is
its spec's (queue_specs.py), over the typed item facets in FACETS, as are the flag filters.

A queue is walked in id order, or (`order="confidence"`) by extraction confidence, lowest
first (`extra.extraction_confidence.score`, curation/extract/confidence.py), ties in id order.
An item with no confidence (imported, or extracted before it was measured) is not known to be
good: it comes after every measured one, so the doubtful items are met first.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import Connection, Engine, Float, and_, exists, func, insert, not_, or_, select, true
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import ColumnElement
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from annotator.review import claims
from annotator.review.queue_specs import ITEM_QUEUES, spec
from annotator.review.tables import assignments, now, reviews, write_connection
from curation.core.errors import BenchsmithError
from curation.core.facets import annotator_filters
from curation.core.store import facet_clause, items_table
from curation.extract.confidence import EXTRA_KEY as CONFIDENCE_KEY

ITEMS = items_table.c


FLAG_FILTERS: dict[str, str] = {
    "korea_candidate": "한국 특화 후보 · Korea candidate",
    "korea_yes": "한국 특화 확인 · Korea-specific: yes",
    "korea_no": "한국 특화 아님 · Korea-specific: no",
    "korea_undecided": "한국 특화 미정 · Korea-specific: undecided",
    "multimodal": "이미지 포함 · Multimodal",
    "needs_fix": "수정 필요 · Needs fix",
    "has_rationale": "풀이 있음 · Has rationale",
}


class QueueError(BenchsmithError):
    """A bad queue name, filter or assignment request."""


# The item facets a queue selects by and a reviewer filters by, each a typed store column
# (curation/core/facets.py).
FACETS: dict[str, Callable[[], ColumnElement[bool]]] = {
    "korea_candidate": lambda: ITEMS.korea_candidate.is_(True),
    "korea_yes": lambda: ITEMS.korea_specific.is_(True),
    "korea_no": lambda: ITEMS.korea_specific.is_(False),
    "korea_undecided": lambda: ITEMS.korea_specific.is_(None),
    "multimodal": lambda: ITEMS.multimodal.is_(True),
    "needs_fix": lambda: ITEMS.needs_fix.is_(True),
    "has_rationale": lambda: ITEMS.has_rationale.is_(True),
}


def _membership(queue: str) -> ColumnElement[bool]:
    selects = spec(queue).selects
    if selects.source != "items":
        raise QueueError(f"queue {queue!r} does not hold items: choose one of {', '.join(ITEM_QUEUES)}")
    return or_(*(FACETS[facet]() for facet in selects.any_of)) if selects.any_of else true()


@dataclass(frozen=True)
class Filters:
    status: Sequence[str] = ()
    exam: str | None = None
    subject: str | None = None
    flag: str | None = None
    assignee: str | None = None
    search: str = ""
    order: str = "id"  # how the queue is walked: a key of ORDERS (not a filter: it selects nothing)

    def describe(self) -> str:
        parts = [f"{k}={'|'.join(v) if isinstance(v, tuple | list) else v}" for k, v in self.__dict__.items()
                 if v not in ((), [], None, "") and k != "order"]
        return ", ".join(parts) or "(all)"


# status, exam and subject: the catalogue's annotator filters that Filters carries as values (the
# bool facets are flag filters, above)
_COLUMN_FILTERS = [facet for facet in annotator_filters() if facet.name in Filters.__dataclass_fields__]


def where(queue: str, filters: Filters) -> ColumnElement[bool]:
    clauses = [_membership(queue)]
    for facet in _COLUMN_FILTERS:  # the catalogue's queue filters on their store columns
        clause = facet_clause(facet, getattr(filters, facet.name))
        if clause is not None:
            clauses.append(clause)
    if filters.flag:
        if filters.flag not in FLAG_FILTERS:
            raise QueueError(f"flag filter {filters.flag!r}: choose one of {', '.join(FLAG_FILTERS)}")
        clauses.append(FACETS[filters.flag]())
    if filters.assignee:
        clauses.append(exists().where(assignments.c.queue == queue, assignments.c.item_id == ITEMS.id,
                                      assignments.c.user == filters.assignee))
    if filters.search.strip():
        text = filters.search.strip()
        clauses.append(or_(ITEMS.id.contains(text, autoescape=True), ITEMS.data.contains(text, autoescape=True)))
    return and_(*clauses)


def item_exists(engine: Engine, item_id: str) -> bool:
    with engine.connect() as conn:
        return conn.execute(select(ITEMS.id).where(ITEMS.id == item_id)).first() is not None


def walked(engine: Engine, filters: Filters) -> Filters:
    """The filters a queue is walked (and bulk-acted) by: an item id in the search box opens that
    item and is not a text filter, so it is dropped; any other search text filters."""
    search = filters.search.strip()
    if search and item_exists(engine, search):
        return dataclasses.replace(filters, search="")
    return filters


def count(engine: Engine, queue: str, filters: Filters) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(items_table).where(where(queue, filters))).scalar_one()


ORDERS: dict[str, str] = {
    "id": "ID 순 · By id",
    "confidence": "추출 신뢰도 낮은 순 · Lowest extraction confidence first",
}
UNMEASURED = 2.0  # the sort value of an item with no confidence: after every measured score (0–1)
Direction = Literal["next", "prev"]


class _ConfidenceScore(FunctionElement[float]):
    """The extraction confidence score in an item's stored snapshot; NULL when none was recorded."""

    type = Float()
    inherit_cache = True
    name = "extraction_confidence_score"


@compiles(_ConfidenceScore)
def _json_extract(element: _ConfidenceScore, compiler: SQLCompiler, **kw: Any) -> str:  # SQLite
    return f"json_extract({compiler.process(ITEMS.data, **kw)}, '$.extra.{CONFIDENCE_KEY}.score')"


@compiles(_ConfidenceScore, "postgresql")
def _jsonb(element: _ConfidenceScore, compiler: SQLCompiler, **kw: Any) -> str:
    return f"(CAST({compiler.process(ITEMS.data, **kw)} AS JSONB) -> 'extra' -> '{CONFIDENCE_KEY}' ->> 'score')::float8"


def _sort_keys(order: str) -> list[ColumnElement[Any]]:
    if order not in ORDERS:
        raise QueueError(f"order {order!r}: choose one of {', '.join(ORDERS)}")
    if order == "confidence":
        return [func.coalesce(_ConfidenceScore(), UNMEASURED), ITEMS.id]
    return [ITEMS.id]


def _ordering(order: str, direction: Direction) -> list[ColumnElement[Any]]:
    return [key if direction == "next" else key.desc() for key in _sort_keys(order)]


def _beyond(conn: Connection, order: str, current: str, direction: Direction) -> ColumnElement[bool]:
    """Items after (or before) `current` in the order: keyset comparison on the sort keys."""
    keys = _sort_keys(order)
    row = conn.execute(select(*keys).where(ITEMS.id == current)).first()
    values: tuple[Any, ...] = tuple(row) if row is not None else (current,)
    if row is None:  # the current item is gone: place it by its id alone
        keys = [ITEMS.id]
    clause = keys[-1] > values[-1] if direction == "next" else keys[-1] < values[-1]
    for key, value in zip(reversed(keys[:-1]), reversed(values[:-1]), strict=True):
        clause = or_(key > value if direction == "next" else key < value, and_(key == value, clause))
    return clause


def neighbour(engine: Engine, queue: str, filters: Filters, current: str | None,
              direction: Direction, user: str | None = None) -> str | None:
    """The item after (or before) `current` in the queue's order; the first (last) one when current is None.
    With `user`, items someone else has reserved are passed over."""
    statement = select(ITEMS.id).where(where(queue, filters))
    if user is not None:
        statement = statement.where(not_(claims.reserved_by_others(queue, user)))
    with engine.connect() as conn:
        if current is not None:
            statement = statement.where(_beyond(conn, filters.order, current, direction))
        return conn.execute(statement.order_by(*_ordering(filters.order, direction)).limit(1)).scalar_one_or_none()


def _reviewed_by(queue: str, user: str) -> ColumnElement[bool]:
    return exists().where(reviews.c.queue == queue, reviews.c.item_id == ITEMS.id, reviews.c.user == user)


def _assigned_to(queue: str, user: str) -> ColumnElement[bool]:
    return exists().where(assignments.c.queue == queue, assignments.c.item_id == ITEMS.id, assignments.c.user == user)


def has_assignments(engine: Engine, queue: str) -> bool:
    with engine.connect() as conn:
        return conn.execute(select(assignments.c.item_id).where(assignments.c.queue == queue).limit(1)).first() is not None


def next_unreviewed(engine: Engine, queue: str, filters: Filters, user: str, after: str | None) -> str | None:
    """The next item (after `after` in the queue's order, wrapping round) that `user` has not decided on
    and no one else has reserved; when the queue has assignments, only items assigned to `user`. Items
    the user skipped come only when no other is left."""
    clause = and_(where(queue, filters), not_(_reviewed_by(queue, user)), not_(claims.reserved_by_others(queue, user)))
    if has_assignments(engine, queue):
        clause = and_(clause, _assigned_to(queue, user))
    with engine.connect() as conn:
        starts = ([_beyond(conn, filters.order, after, "next")] if after else []) + [true()]
        for skipped in (not_(claims.skipped_by(queue, user)), true()):
            for start in starts:
                found = conn.execute(
                    select(ITEMS.id).where(clause, skipped, start).order_by(*_ordering(filters.order, "next")).limit(1)
                ).scalar_one_or_none()
                if found is not None:
                    return found
    return None


def record_review(engine: Engine, queue: str, item_id: str, user: str, decision: str, rev: int,
                  reason: str | None = None) -> None:
    if decision not in spec(queue).decision_names:
        raise QueueError(f"decision {decision!r} does not belong to queue {queue!r}")
    with write_connection(engine) as conn, conn.begin():
        conn.execute(insert(reviews).values(queue=queue, item_id=item_id, user=user, decision=decision,
                                            reason=reason, rev=rev, at=now()))


def reviews_of(engine: Engine, item_id: str) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        rows = conn.execute(select(reviews).where(reviews.c.item_id == item_id).order_by(reviews.c.id)).all()
    return [dict(row._mapping) for row in rows]


@dataclass
class AssignReport:
    added: int = 0
    per_user: dict[str, int] = field(default_factory=dict)
    items: int = 0


def assign(engine: Engine, queue: str, users: Sequence[str], overlap: int, filters: Filters = Filters(),
           item_ids: Sequence[str] | None = None) -> AssignReport:
    """Give each item in the queue (or `item_ids`, for a queue not read from the items table) to
    `overlap` different users, spreading the load evenly. Existing assignments are kept; running it
    again only fills items that have fewer."""
    users = list(dict.fromkeys(users))
    if not users:
        raise QueueError("assign: name at least one user")
    if not 1 <= overlap <= len(users):
        raise QueueError(f"assign: overlap must be 1..{len(users)} (the number of users named), got {overlap}")
    with engine.connect() as conn:
        if item_ids is None:
            item_ids = list(conn.execute(select(ITEMS.id).where(where(queue, filters)).order_by(ITEMS.id)).scalars())
        current: dict[str, set[str]] = defaultdict(set)
        for item_id, user in conn.execute(select(assignments.c.item_id, assignments.c.user)
                                          .where(assignments.c.queue == queue)):
            current[item_id].add(user)
    load = Counter({user: 0 for user in users})
    for holders in current.values():
        load.update(user for user in holders if user in load)
    rows, report = [], AssignReport(items=len(item_ids))
    when = now()
    for item_id in item_ids:
        holders = current[item_id]
        free = sorted((user for user in users if user not in holders), key=lambda u: (load[u], users.index(u)))
        for user in free[: max(0, overlap - len(holders))]:
            rows.append({"queue": queue, "item_id": item_id, "user": user, "assigned_at": when})
            load[user] += 1
            report.per_user[user] = report.per_user.get(user, 0) + 1
    if rows:
        with write_connection(engine) as conn, conn.begin():
            conn.execute(insert(assignments), rows)
    report.added = len(rows)
    return report


def progress(engine: Engine) -> list[dict[str, Any]]:
    """Per user and queue: items decided, items assigned, assigned items decided."""
    with engine.connect() as conn:
        decided = conn.execute(
            select(reviews.c.user, reviews.c.queue, func.count(func.distinct(reviews.c.item_id)))
            .group_by(reviews.c.user, reviews.c.queue)
        ).all()
        assigned = conn.execute(
            select(assignments.c.user, assignments.c.queue, func.count()).group_by(assignments.c.user, assignments.c.queue)
        ).all()
        assigned_done = conn.execute(
            select(assignments.c.user, assignments.c.queue, func.count())
            .where(exists().where(reviews.c.queue == assignments.c.queue, reviews.c.item_id == assignments.c.item_id,
                                  reviews.c.user == assignments.c.user))
            .group_by(assignments.c.user, assignments.c.queue)
        ).all()
    table: dict[tuple[str, str], dict[str, Any]] = {}
    for rows, key in ((decided, "decided"), (assigned, "assigned"), (assigned_done, "assigned_done")):
        for user, queue, n in rows:
            table.setdefault((user, queue), {"user": user, "queue": queue, "decided": 0, "assigned": 0,
                                             "assigned_done": 0})[key] = n
    return [table[key] for key in sorted(table)]


@dataclass(frozen=True)
class QueueProgress:
    total: int  # items (or scoring tasks) in the queue
    done: int  # of them decided by anyone
    mine: int  # decided by this user
    assigned: int  # assigned to this user
    assigned_done: int  # of those, decided by this user


def queue_progress(engine: Engine, queue: str, user: str, total: int | None = None) -> QueueProgress:
    """Done / total for the queue and for one user (for the score queue: tasks scored).
    `total`: the item queue's size when the caller knows it (counting it scans the store)."""
    from annotator.review.tables import expert_scores, scoring_tasks

    with engine.connect() as conn:
        if queue == "score":
            total = conn.execute(select(func.count()).select_from(scoring_tasks)).scalar_one()
            done = conn.execute(select(func.count(func.distinct(expert_scores.c.task_id)))).scalar_one()
            mine = conn.execute(select(func.count()).where(expert_scores.c.expert == user)).scalar_one()
            return QueueProgress(total, done, mine, 0, 0)
        done_clause = None
        if queue == "verdicts":  # its tasks are responses; one is done once its verdict is settled
            from annotator.review.tables import verdict_results, verdict_tasks

            total = conn.execute(select(func.count()).select_from(verdict_tasks)).scalar_one()
            done_clause = select(func.count()).select_from(verdict_results)
        if total is None:
            total = conn.execute(select(func.count()).select_from(items_table).where(where(queue, Filters()))).scalar_one()
        decided = select(func.count(func.distinct(reviews.c.item_id))).where(reviews.c.queue == queue)
        done = conn.execute(done_clause if done_clause is not None else decided).scalar_one()
        mine = conn.execute(decided.where(reviews.c.user == user)).scalar_one()
        mine_assigned = and_(assignments.c.queue == queue, assignments.c.user == user)
        assigned = conn.execute(select(func.count()).select_from(assignments).where(mine_assigned)).scalar_one()
        # from the user's reviews (few) into the assignments' key, not from every assignment of the queue
        assigned_done = conn.execute(
            select(func.count(func.distinct(reviews.c.item_id))).where(
                reviews.c.queue == queue, reviews.c.user == user,
                exists().where(mine_assigned, assignments.c.item_id == reviews.c.item_id))).scalar_one()
    return QueueProgress(total, done, mine, assigned, assigned_done)
