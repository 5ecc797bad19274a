"""Signed-in sessions, kept in the store (so every server process on it sees the same ones).

A session is a random token in an HttpOnly, SameSite=Lax cookie; the store keeps only its
SHA-256. It ends at logout, after `idle` without a request, after `max` since login, when the
user's password changes (the session holds the password's version) and when the user is
deactivated. An ended session's row is deleted when it is next presented or when anyone logs in.

How long: session_idle_minutes and session_max_hours (settings.py).
"""

from __future__ import annotations

import hashlib
import secrets
import time

from sqlalchemy import Engine, delete, insert, or_, select, update

from annotator.review.auth import password_version
from annotator.review.tables import inactive_users, sessions, users, write_connection

COOKIE = "bs-session"
TOUCH_S = 60.0  # seen_at is written at most this often per session (less often than every request)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def session_id(token: str) -> str:
    """A login session's id for what it holds (reservations, page state): its token's digest, as stored."""
    return _digest(token)


class Sessions:
    def __init__(self, engine: Engine, idle_s: float, max_s: float):
        self.engine, self.idle_s, self.max_s = engine, idle_s, max_s

    def start(self, name: str) -> str:
        """A new session for a user whose password was just checked; returns its token."""
        token, at = secrets.token_urlsafe(32), time.time()
        with write_connection(self.engine) as conn, conn.begin():
            stored = conn.execute(select(users.c.password_hash).where(users.c.name == name)).scalar_one()
            conn.execute(insert(sessions).values(token_hash=_digest(token), user=name, created_at=at, seen_at=at,
                                                 password_version=password_version(stored)))
            conn.execute(delete(sessions).where(or_(sessions.c.seen_at < at - self.idle_s,
                                                    sessions.c.created_at < at - self.max_s)))
        return token

    def user(self, token: str) -> str | None:
        """The user a live session belongs to; None (and the row gone) for an ended one."""
        at, digest = time.time(), _digest(token)
        query = (select(sessions.c.user, sessions.c.password_version, sessions.c.created_at, sessions.c.seen_at,
                        users.c.password_hash, inactive_users.c.name.label("inactive"))
                 .select_from(sessions.join(users, users.c.name == sessions.c.user)
                              .outerjoin(inactive_users, inactive_users.c.name == sessions.c.user))
                 .where(sessions.c.token_hash == digest))
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        if row is None:
            return None
        ended = (row.inactive is not None or row.password_version != password_version(row.password_hash)
                 or at - row.seen_at > self.idle_s or at - row.created_at > self.max_s)
        if ended:
            self.end(token)
            return None
        if at - row.seen_at > min(TOUCH_S, self.idle_s / 4):
            with write_connection(self.engine) as conn, conn.begin():
                conn.execute(update(sessions).where(sessions.c.token_hash == digest).values(seen_at=at))
        return row.user

    def end(self, token: str) -> str | None:
        """End the session; the user it was (None when there was none)."""
        with write_connection(self.engine) as conn, conn.begin():
            user = conn.execute(select(sessions.c.user).where(sessions.c.token_hash == _digest(token))).scalar()
            conn.execute(delete(sessions).where(sessions.c.token_hash == _digest(token)))
        return user
