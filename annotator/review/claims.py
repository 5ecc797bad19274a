"""Who may write an item in a queue right now: its assignees, and the reviewer editing it.

- Assignment (queues.assign) is enforced here: an item assigned in a queue can be saved or decided
  there only by its assignees. An admin may override; the override is written into the revision's
  reason ("admin override: assigned to …"). An item with no assignment in the queue is open to all.
- Reservation: only work in progress reserves. A reviewer's first edit of an item (or an explicit
  start) reserves it in that queue, for their login session, until `idle_s` passes without an
  edit (`reservation_idle_minutes`, 5 by default); their save, decision, skip or moving to
  another item releases it, as does logging out of that session (their other sessions keep
  theirs). Opening, Next and page loads reserve nothing; an item already decided in the queue is
  never reserved; a user holds at most `per_user` reservations (`reservations_per_user`, 3: the
  oldest goes first). While one holds, others are shown who has it and for how long, their saves
  are refused and their Next passes over the item. An item's assignees are never kept out of it.
  An admin may break a reservation; the break is recorded (reservation_breaks).
- Skip: releases the reservation and is remembered, so the reviewer's next unreviewed item is
  another one while others remain.

`check` is the one gate on the save, decide and revert path (actions.Reviewer).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, and_, delete, exists, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql import ColumnElement

from annotator.review.auth import User
from annotator.review.queue_specs import ADMIN, NotAllowed
from annotator.review.tables import (
    assignments,
    now,
    reservation_breaks,
    reservations,
    reviews,
    skips,
    write_connection,
)
from curation.core.store import items_table

RESERVATION_S = 300.0  # five minutes without an edit; `annotate --reserve-minutes`, reservation_idle_minutes
PER_USER = 3  # reservations one user holds at once; reservations_per_user


class Claimed(NotAllowed):
    """The item is assigned to others in this queue, or someone else holds its reservation."""


@dataclass(frozen=True)
class Reservation:
    user: str
    expires_at: float

    @property
    def until(self) -> str:
        """How long it still holds, in minutes: no clock time, so no time zone to get wrong."""
        minutes = max(1, math.ceil((self.expires_at - time.time()) / 60))
        return f"{minutes}분 더 · for {minutes} more min"


def _key(queue: str, item_id: str) -> ColumnElement[bool]:
    return and_(reservations.c.queue == queue, reservations.c.item_id == item_id)


def holder(engine: Engine, queue: str, item_id: str) -> Reservation | None:
    """The live reservation of the item in the queue, if any."""
    with engine.connect() as conn:
        row = conn.execute(select(reservations.c.user, reservations.c.expires_at)
                           .where(_key(queue, item_id), reservations.c.expires_at > time.time())).first()
    return None if row is None else Reservation(row.user, row.expires_at)


def decided(engine: Engine, queue: str, item_id: str) -> bool:
    """Someone has taken a decision on the item in the queue (it is never reserved then)."""
    with engine.connect() as conn:
        return conn.execute(select(reviews.c.id).where(reviews.c.queue == queue, reviews.c.item_id == item_id)
                            .limit(1)).first() is not None


def reserve(engine: Engine, user: str, queue: str, item_id: str, seconds: float = RESERVATION_S, *,
            session: str = "", per_user: int = PER_USER) -> Reservation | None:
    """Reserve the item for `user`'s login `session` while they edit it (renewing their own once half
    its time has run); returns the other reviewer's reservation instead when someone else holds it.
    A decided item is not reserved; past `per_user`, the user's oldest reservation is released."""
    at = time.time()
    with engine.connect() as conn:  # read first: an edit event must not take the write lock each time
        row = conn.execute(select(reservations.c.user, reservations.c.expires_at).where(_key(queue, item_id))).first()
    if row is not None and row.user != user and row.expires_at > at:
        return Reservation(row.user, row.expires_at)
    if row is not None and row.user == user and row.expires_at - at > seconds / 2:
        return None
    if row is None and decided(engine, queue, item_id):
        return None
    values = {"user": user, "session": session, "expires_at": at + seconds}
    try:
        with write_connection(engine) as conn, conn.begin():
            if row is None:
                conn.execute(insert(reservations).values(queue=queue, item_id=item_id, taken_at=at, **values))
                _keep_newest(conn, user, per_user)
                return None
            # taken only if it is still ours or still lapsed: another reviewer may have taken it since the read
            if conn.execute(update(reservations).where(
                    _key(queue, item_id), (reservations.c.user == user) | (reservations.c.expires_at <= at))
                    .values(**values)).rowcount:
                _keep_newest(conn, user, per_user)
                return None
    except IntegrityError:  # another reviewer inserted it since the read
        pass
    live = holder(engine, queue, item_id)
    return live if live is not None and live.user != user else None


def _keep_newest(conn: Connection, user: str, per_user: int) -> None:
    held = conn.execute(select(reservations.c.queue, reservations.c.item_id).where(reservations.c.user == user)
                        .order_by(reservations.c.expires_at.desc())).all()
    for queue, item_id in held[per_user:]:
        conn.execute(delete(reservations).where(_key(queue, item_id), reservations.c.user == user))


def release(engine: Engine, user: str, queue: str | None = None, item_id: str | None = None, *,
            session: str | None = None) -> None:
    """Release the user's reservation of an item; with no item named, every one of theirs (of the
    login `session` only, when given: a logout)."""
    clause = reservations.c.user == user
    if queue is not None and item_id is not None:
        clause = and_(clause, _key(queue, item_id))
    if session is not None:
        clause = and_(clause, reservations.c.session == session)
    with write_connection(engine) as conn, conn.begin():
        conn.execute(delete(reservations).where(clause))


def break_reservation(engine: Engine, admin: User, queue: str, item_id: str) -> str | None:
    """An admin ends someone's reservation of the item, recorded in reservation_breaks; the holder
    it had (None when nothing held)."""
    if admin.role != ADMIN:
        raise NotAllowed(f"{admin.name} ({admin.role}) may not break a reservation: admins only")
    live = holder(engine, queue, item_id)
    if live is None:
        return None
    with write_connection(engine) as conn, conn.begin():
        conn.execute(delete(reservations).where(_key(queue, item_id)))
        conn.execute(insert(reservation_breaks).values(queue=queue, item_id=item_id, holder=live.user,
                                                       by=admin.name, at=now()))
    return live.user


def assignees(engine: Engine, queue: str, item_id: str) -> list[str]:
    with engine.connect() as conn:
        return list(conn.execute(select(assignments.c.user).where(
            assignments.c.queue == queue, assignments.c.item_id == item_id).order_by(assignments.c.user)).scalars())


def claim(engine: Engine, user: str, queue: str, item_id: str) -> Reservation | None:
    """`user` opens the item (reserving nothing): the other reviewer's reservation that keeps them
    out of it, if any."""
    other = holder(engine, queue, item_id)
    return None if other is None or other.user == user or user in assignees(engine, queue, item_id) else other


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
        raise Claimed(f"{item_id}: {live.user} 님이 수정 중입니다 ({live.until}) · {live.user} is editing it in "
                      f"the {queue} queue: wait until they save or leave it, or the reservation lapses")
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
