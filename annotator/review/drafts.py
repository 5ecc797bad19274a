"""Unsaved edits kept server-side per user, so a page refresh or a closed tab loses nothing.

A draft is the set of field edits (dotted path → value) a user made on one item in one
queue, with the revision they were made against. A position is the item a user had open
in a queue, so a refreshed page reopens it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, and_, delete, insert, select, update

from annotator.review.tables import drafts, now, positions, write_connection


@dataclass
class Draft:
    item_id: str
    base_rev: int
    edits: dict[str, Any] = field(default_factory=dict)


def _key(user: str, queue: str, item_id: str):  # noqa: ANN202
    return and_(drafts.c.user == user, drafts.c.queue == queue, drafts.c.item_id == item_id)


def save_draft(engine: Engine, user: str, queue: str, draft: Draft) -> None:
    """Keep the draft (an empty one is removed)."""
    if not draft.edits:
        discard_draft(engine, user, queue, draft.item_id)
        return
    values = {"base_rev": draft.base_rev, "edits": json.dumps(draft.edits, ensure_ascii=False), "updated_at": now()}
    with write_connection(engine) as conn, conn.begin():
        changed = conn.execute(update(drafts).where(_key(user, queue, draft.item_id)).values(**values)).rowcount
        if not changed:
            conn.execute(insert(drafts).values(user=user, queue=queue, item_id=draft.item_id, **values))


def load_draft(engine: Engine, user: str, queue: str, item_id: str) -> Draft | None:
    with engine.connect() as conn:
        row = conn.execute(select(drafts.c.base_rev, drafts.c.edits).where(_key(user, queue, item_id))).first()
    return None if row is None else Draft(item_id, row.base_rev, json.loads(row.edits))


def discard_draft(engine: Engine, user: str, queue: str, item_id: str) -> None:
    with write_connection(engine) as conn, conn.begin():
        conn.execute(delete(drafts).where(_key(user, queue, item_id)))


def set_position(engine: Engine, user: str, queue: str, item_id: str) -> None:
    key = and_(positions.c.user == user, positions.c.queue == queue)
    with write_connection(engine) as conn, conn.begin():
        if not conn.execute(update(positions).where(key).values(item_id=item_id, updated_at=now())).rowcount:
            conn.execute(insert(positions).values(user=user, queue=queue, item_id=item_id, updated_at=now()))


def get_position(engine: Engine, user: str, queue: str) -> str | None:
    with engine.connect() as conn:
        return conn.execute(
            select(positions.c.item_id).where(positions.c.user == user, positions.c.queue == queue)
        ).scalar_one_or_none()
