"""Who may write an item in a queue right now: its assignees, and the reviewer holding it.

- Assignment (queues.assign) is enforced here: an item assigned in a queue can be saved or decided
  there only by its assignees. An admin may override; the override is written into the revision's
  reason ("admin override: assigned to …"). An item with no assignment in the queue is open to all.
- Reservation: opening an item reserves it in that queue for the reviewer for `RESERVATION_S`
  seconds, renewed on their edits; their save or skip (or logout) releases it. While it holds,
  others are shown who has it, their saves are refused, and their Next passes over the item. An
  item's assignees are never kept out of it (with overlap, each of them is meant to review it).
- Skip: releases the reservation and is remembered, so the reviewer's next unreviewed item is
  another one while others remain.

`check` is the one gate on the save, decide and revert path (actions.Reviewer).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, and_, delete, exists, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql import ColumnElement

from annotator.review.auth import User
from annotator.review.queue_specs import ADMIN, NotAllowed
from annotator.review.tables import assignments, now, reservations, skips, write_connection
from curation.store import items_table

RESERVATION_S = 600.0  # ten minutes; `annotate --reserve-minutes`


class Claimed(NotAllowed):
    """The item is assigned to others in this queue, or someone else holds its reservation."""


@dataclass(frozen=True)
class Reservation:
    user: str
    expires_at: float

    @property
    def until(self) -> str:
        return datetime.fromtimestamp(self.expires_at, UTC).strftime("%H:%M UTC")


def _key(queue: str, item_id: str) -> ColumnElement[bool]:
    return and_(reservations.c.queue == queue, reservations.c.item_id == item_id)


def holder(engine: Engine, queue: str, item_id: str) -> Reservation | None:
    """The live reservation of the item in the queue, if any."""
    with engine.connect() as conn:
        row = conn.execute(select(reservations.c.user, reservations.c.expires_at)
                           .where(_key(queue, item_id), reservations.c.expires_at > time.time())).first()
    return None if row is None else Reservation(row.user, row.expires_at)


def reserve(engine: Engine, user: str, queue: str, item_id: str, seconds: float = RESERVATION_S) -> Reservation | None:
    """Reserve the item for `user` (renewing their own once half its time has run); returns the
    other reviewer's reservation instead when someone else holds it."""
    at = time.time()
    with engine.connect() as conn:  # read first: an edit event must not take the write lock each time
        row = conn.execute(select(reservations.c.user, reservations.c.expires_at).where(_key(queue, item_id))).first()
    if row is not None and row.user != user and row.expires_at > at:
        return Reservation(row.user, row.expires_at)
    if row is not None and row.user == user and row.expires_at - at > seconds / 2:
        return None
    try:
        with write_connection(engine) as conn, conn.begin():
            if row is None:
                conn.execute(insert(reservations).values(queue=queue, item_id=item_id, user=user,
                                                         expires_at=at + seconds))
                return None
            # taken only if it is still ours or still lapsed: another reviewer may have taken it since the read
            if conn.execute(update(reservations).where(
                    _key(queue, item_id), (reservations.c.user == user) | (reservations.c.expires_at <= at))
                    .values(user=user, expires_at=at + seconds)).rowcount:
                return None
    except IntegrityError:  # another reviewer inserted it since the read
        pass
    live = holder(engine, queue, item_id)
    return live if live is not None and live.user != user else None


def release(engine: Engine, user: str, queue: str | None = None, item_id: str | None = None) -> None:
    """Release the user's reservation of an item (every one of theirs when no item is named: logout)."""
    clause = reservations.c.user == user
    if queue is not None and item_id is not None:
        clause = and_(clause, _key(queue, item_id))
    with write_connection(engine) as conn, conn.begin():
        conn.execute(delete(reservations).where(clause))


def assignees(engine: Engine, queue: str, item_id: str) -> list[str]:
    with engine.connect() as conn:
        return list(conn.execute(select(assignments.c.user).where(
            assignments.c.queue == queue, assignments.c.item_id == item_id).order_by(assignments.c.user)).scalars())


def claim(engine: Engine, user: str, queue: str, item_id: str, seconds: float = RESERVATION_S) -> Reservation | None:
    """Open the item for `user`: reserve it, and return the other reviewer's reservation that keeps
    them out of it, if any."""
    other = reserve(engine, user, queue, item_id, seconds)
    return None if other is None or user in assignees(engine, queue, item_id) else other


def check(engine: Engine, user: User, queue: str, item_id: str) -> str:
    """Raise Claimed unless `user` may write `item_id` in `queue` now (assigned to them or to no one,
    and no one else's reservation). Returns the note an admin's override of the assignment leaves in
    the revision's reason ('' when nothing is overridden)."""
    names = assignees(engine, queue, item_id)
    if user.name in names:
        return ""
    note = override(user, queue, item_id, names)
    live = holder(engine, queue, item_id)
    if live is not None and live.user != user.name:
        raise Claimed(f"{item_id} is reserved by {live.user} until {live.until} in the {queue} queue: "
                      "wait until they save or skip it, or the reservation lapses")
    return note


def override(user: User, queue: str, item_id: str, names: list[str]) -> str:
    """The note an admin writing an item assigned (`names`) to others leaves; Claimed for anyone else."""
    if not names or user.name in names:
        return ""
    if user.role != ADMIN:
        raise Claimed(f"{item_id} is assigned to {', '.join(names)} in the {queue} queue, not to {user.name}")
    return f"admin override: assigned to {', '.join(names)}"


def with_note(reason: str, note: str) -> str:
    return " · ".join(part for part in (reason, note) if part)


def skip(engine: Engine, user: str, queue: str, item_id: str) -> None:
    """Release the item and remember the skip (the user's next unreviewed item is another one)."""
    release(engine, user, queue, item_id)
    key = and_(skips.c.user == user, skips.c.queue == queue, skips.c.item_id == item_id)
    with write_connection(engine) as conn, conn.begin():
        if not conn.execute(update(skips).where(key).values(at=now())).rowcount:
            conn.execute(insert(skips).values(user=user, queue=queue, item_id=item_id, at=now()))


# -- clauses over the items table, for the queue walks (queues.py) ----------------------------------
def reserved_by_others(queue: str, user: str) -> ColumnElement[bool]:
    """Items someone else holds that are not assigned to `user`."""
    assigned = exists().where(assignments.c.queue == queue, assignments.c.item_id == items_table.c.id,
                              assignments.c.user == user)
    return and_(exists().where(reservations.c.queue == queue, reservations.c.item_id == items_table.c.id,
                               reservations.c.user != user, reservations.c.expires_at > time.time()), ~assigned)


def skipped_by(queue: str, user: str) -> ColumnElement[bool]:
    return exists().where(skips.c.queue == queue, skips.c.item_id == items_table.c.id, skips.c.user == user)
