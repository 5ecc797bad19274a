"""How often a login may be tried: exponential backoff per client (IP address) and per name,
never a hard lock.

- A client's failures (whatever names it tried) in the last WINDOW_S: after FREE_TRIES of them,
  each further try waits BASE_S (login_backoff_seconds, settings.py) · 2^(failures − FREE_TRIES) after the last failure, at most
  CAP_S. One client spraying many names is slowed down as much as one guessing one name.
- A name's failures since its last successful login: the same backoff, but only for clients
  that have themselves failed on that name. So someone spraying the admin's name cannot keep
  the admin out: the admin's own browser, on a client that has not failed, goes straight to the
  password check. A try refused for backoff is not a failure and does not extend it.

`benchsmith users unlock NAME` forgets a name's failures (and so its clients' backoff from them).
Clients are told apart by the address the server sees: behind a proxy all share one, so the
server does not trust X-Forwarded-For (uvicorn's proxy_headers is off in server.py).
"""

from __future__ import annotations

import time

from sqlalchemy import Engine, and_, delete, func, insert, select

from annotator.review.tables import login_tries, write_connection

FREE_TRIES = 5
BASE_S = 1.0
CAP_S = 15 * 60.0
WINDOW_S = 15 * 60.0


def backoff_s(failures: int, base_s: float = BASE_S) -> float:
    """The wait after the last of `failures` failures (0 while under FREE_TRIES)."""
    if failures < FREE_TRIES:
        return 0.0
    return min(CAP_S, base_s * 2 ** min(failures - FREE_TRIES, 30))


def backoff_message(seconds: float) -> str:
    wait = max(1, round(seconds))
    amount = f"{wait} seconds" if wait < 120 else f"{round(wait / 60)} minutes"
    return f"로그인 실패가 많습니다 · Too many failed logins: try again in {amount}"


class LoginThrottle:
    def __init__(self, engine: Engine, base_s: float = BASE_S):
        self.engine, self.base_s = engine, base_s  # base_s: [annotator] login_backoff_seconds

    def wait_s(self, name: str, client: str, at: float | None = None) -> float | None:
        """Seconds this client must wait before trying `name`, or None when it may try now."""
        at = time.time() if at is None else at
        since = at - WINDOW_S
        failed = and_(login_tries.c.ok == 0, login_tries.c.at >= since)
        with self.engine.connect() as conn:
            by_client = conn.execute(select(func.count(), func.max(login_tries.c.at))
                                     .where(failed, login_tries.c.client == client)).one()
            last_ok = conn.execute(select(func.max(login_tries.c.at))
                                   .where(login_tries.c.name == name, login_tries.c.ok == 1)).scalar()
            on_name = and_(failed, login_tries.c.name == name, login_tries.c.at > (last_ok or 0.0))
            by_name = conn.execute(select(func.count(), func.max(login_tries.c.at)).where(on_name)).one()
            tried_name = conn.execute(select(login_tries.c.id).where(on_name, login_tries.c.client == client)
                                      .limit(1)).first() is not None
        waits = [backoff_s(by_client[0], self.base_s) - (at - (by_client[1] or at))]
        if tried_name:
            waits.append(backoff_s(by_name[0], self.base_s) - (at - (by_name[1] or at)))
        wait = max(waits)
        return wait if wait > 0 else None

    def record(self, name: str, client: str, ok: bool, at: float | None = None) -> None:
        at = time.time() if at is None else at
        with write_connection(self.engine) as conn, conn.begin():
            conn.execute(insert(login_tries).values(name=name, client=client, at=at, ok=int(ok)))
            conn.execute(delete(login_tries).where(login_tries.c.at < at - WINDOW_S))


def unlock(engine: Engine, name: str | None = None, client: str | None = None) -> int:
    """Forget the failed logins on a name and/or from a client; returns how many were forgotten."""
    where = [login_tries.c.ok == 0]
    if name is not None:
        where.append(login_tries.c.name == name)
    if client is not None:
        where.append(login_tries.c.client == client)
    with write_connection(engine) as conn, conn.begin():
        return conn.execute(delete(login_tries).where(*where)).rowcount
