"""Users, roles and logins: scrypt password hashes (hashlib), failed logins rate-limited."""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass

from sqlalchemy import Engine, delete, func, insert, select, update

from annotator.tables import login_attempts, now, users, write_connection
from curation.errors import BenchsmithError, NotFoundError

ROLES: tuple[str, ...] = ("annotator", "expert", "admin")
USER_NAME = re.compile(r"^[A-Za-z0-9가-힣][A-Za-z0-9가-힣._\-]{0,63}$")
MIN_PASSWORD = 8

MAX_FAILURES = 5
WINDOW_S = 15 * 60

_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 2**14, 8, 1


class AuthError(BenchsmithError):
    """A bad user name, role or password when managing users."""


@dataclass(frozen=True)
class User:
    name: str
    role: str


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P, dklen=32)
    encode = base64.b64encode
    return f"scrypt${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}${encode(salt).decode()}${encode(digest).decode()}"


def check_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest)
        actual = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p),
                                dklen=len(expected))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)


def add_user(engine: Engine, name: str, role: str, password: str, *, replace: bool = False) -> User:
    if not USER_NAME.match(name):
        raise AuthError(f"user name {name!r}: use letters, digits, Hangul, '.', '_' or '-' (at most 64)")
    if role not in ROLES:
        raise AuthError(f"role {role!r}: choose one of {', '.join(ROLES)}")
    if len(password) < MIN_PASSWORD:
        raise AuthError(f"password for {name!r} is too short (at least {MIN_PASSWORD} characters)")
    row = {"name": name, "role": role, "password_hash": hash_password(password), "created_at": now()}
    with write_connection(engine) as conn, conn.begin():
        exists = conn.execute(select(users.c.name).where(users.c.name == name)).first() is not None
        if exists and not replace:
            raise AuthError(f"user {name!r} exists (use --replace to change the role or password)")
        if exists:
            conn.execute(update(users).where(users.c.name == name).values(**row))
        else:
            conn.execute(insert(users).values(**row))
    return User(name, role)


def list_users(engine: Engine) -> list[User]:
    with engine.connect() as conn:
        return [User(r.name, r.role) for r in conn.execute(select(users.c.name, users.c.role).order_by(users.c.name))]


def user_count(engine: Engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(users)).scalar_one()


def get_user(engine: Engine, name: str) -> User:
    with engine.connect() as conn:
        row = conn.execute(select(users.c.name, users.c.role).where(users.c.name == name)).first()
    if row is None:
        raise NotFoundError(f"no user {name!r}")
    return User(row.name, row.role)


def recent_failures(engine: Engine, name: str, at: float | None = None) -> int:
    since = (at or time.time()) - WINDOW_S
    with engine.connect() as conn:
        return conn.execute(
            select(func.count()).select_from(login_attempts)
            .where(login_attempts.c.name == name, login_attempts.c.ok == 0, login_attempts.c.at >= since)
        ).scalar_one()


def locked_for(engine: Engine, name: str, at: float | None = None) -> float | None:
    """Seconds until `name` may log in again, or None when it is not locked out: the lockout
    ends when the MAX_FAILURES-th most recent failure leaves the window."""
    at = at or time.time()
    with engine.connect() as conn:
        times = conn.execute(
            select(login_attempts.c.at)
            .where(login_attempts.c.name == name.strip()[:100], login_attempts.c.ok == 0, login_attempts.c.at >= at - WINDOW_S)
            .order_by(login_attempts.c.at.desc()).limit(MAX_FAILURES)
        ).scalars().all()
    if len(times) < MAX_FAILURES:
        return None
    return max(0.0, times[-1] + WINDOW_S - at)


def verify_login(engine: Engine, name: str, password: str) -> bool:
    """Check a login; after MAX_FAILURES failures within WINDOW_S even the right password is
    refused until the window has passed. Every attempt is recorded."""
    at = time.time()
    name = name.strip()[:100]
    if recent_failures(engine, name, at) >= MAX_FAILURES:
        ok = False
    else:
        with engine.connect() as conn:
            stored = conn.execute(select(users.c.password_hash).where(users.c.name == name)).scalar_one_or_none()
        # hash even for unknown users so timing does not tell which names exist
        ok = check_password(password, stored or _dummy_hash()) and stored is not None
    with write_connection(engine) as conn, conn.begin():
        conn.execute(insert(login_attempts).values(name=name, at=at, ok=int(ok)))
        if ok:  # a success clears the failures that came before it
            conn.execute(delete(login_attempts).where(login_attempts.c.name == name, login_attempts.c.ok == 0))
    return ok


@functools.cache
def _dummy_hash() -> str:
    """Made at the first login, not at import: a scrypt hash costs ~50 ms of the server's start."""
    return hash_password(secrets.token_hex(8))
