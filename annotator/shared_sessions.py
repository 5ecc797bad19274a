"""What several server processes on one store share so that they serve one team as one app:
the session secret and the signed-in sessions.

- `server_secret`: from BENCHSMITH_ANNOTATOR_SECRET when set, else one made at the first
  start and kept in the store, so every process on the store reads the same one. The session
  cookie's name is derived from it (Gradio names it after a random id per process).
- `SharedTokens`: Gradio's `app.tokens` (access token -> user name) kept in the store instead
  of one process's memory, so a cookie from one process is signed in on every other, and a
  logout on one ends the session on all of them. Only a hash of each token is stored. Each
  process remembers a lookup for CACHE_S, so a logout reaches the other processes within that.

Gradio keeps per-page state (gr.State) in the process that served the page: behind a reverse
proxy, route each browser to one process (sticky by the session cookie); see README.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
import time
from collections.abc import Iterator, MutableMapping

from sqlalchemy import Engine, delete, insert, select
from sqlalchemy.exc import IntegrityError

from annotator.tables import server_secrets, sessions, write_connection

SECRET_ENV = "BENCHSMITH_ANNOTATOR_SECRET"
CACHE_S = 5.0


def server_secret(engine: Engine, name: str = "session") -> str:
    """The secret every process on this store shares (the env variable wins when set)."""
    if os.environ.get(SECRET_ENV):
        return hmac.new(os.environ[SECRET_ENV].encode(), name.encode(), hashlib.sha256).hexdigest()
    with engine.connect() as conn:
        value = conn.execute(select(server_secrets.c.value).where(server_secrets.c.name == name)).scalar_one_or_none()
    if value is not None:
        return value
    try:
        with write_connection(engine) as conn, conn.begin():
            conn.execute(insert(server_secrets).values(name=name, value=secrets.token_hex(32)))
    except IntegrityError:
        pass  # another process made it first: theirs is read below
    with engine.connect() as conn:
        return conn.execute(select(server_secrets.c.value).where(server_secrets.c.name == name)).scalar_one()


def cookie_id(secret: str) -> str:
    """A stable, secret-derived suffix for the session cookie's name (the same on every process)."""
    return hmac.new(secret.encode(), b"cookie-id", hashlib.sha256).hexdigest()[:32]


class TokenHash(str):
    """A stored session's key as iteration yields it (the token itself is never stored)."""


def _hash(token: str) -> str:
    return token if isinstance(token, TokenHash) else hashlib.sha256(token.encode()).hexdigest()


class SharedTokens(MutableMapping[str, str]):
    def __init__(self, engine: Engine):
        self.engine = engine
        self._seen: dict[str, tuple[str, float]] = {}  # token hash -> (user, when looked up)
        self._lock = threading.Lock()

    def __getitem__(self, token: str) -> str:
        if not isinstance(token, str) or not token:
            raise KeyError(token)
        key, now = _hash(token), time.monotonic()
        cached = self._seen.get(key)
        if cached is not None and now - cached[1] < CACHE_S:
            return cached[0]
        with self.engine.connect() as conn:
            user = conn.execute(select(sessions.c.user).where(sessions.c.token_hash == key)).scalar_one_or_none()
        with self._lock:
            if user is None:
                self._seen.pop(key, None)
                raise KeyError(token)
            if len(self._seen) > 10_000:
                self._seen.clear()
            self._seen[key] = (user, now)
        return user

    def __setitem__(self, token: str, user: str) -> None:
        with write_connection(self.engine) as conn, conn.begin():
            conn.execute(insert(sessions).values(token_hash=_hash(token), user=user, created_at=time.time()))

    def __delitem__(self, token: str) -> None:
        key = _hash(token)
        with self._lock:
            self._seen.pop(key, None)
        with write_connection(self.engine) as conn, conn.begin():
            conn.execute(delete(sessions).where(sessions.c.token_hash == key))

    def __iter__(self) -> Iterator[str]:
        with self.engine.connect() as conn:
            keys = conn.execute(select(sessions.c.token_hash)).scalars().all()
        return iter([TokenHash(key) for key in keys])

    def __len__(self) -> int:
        return sum(1 for _ in self)
