"""Users, roles and passwords: scrypt password hashes (hashlib), active or deactivated users.
How often a login may be tried is throttle.py's; sessions are sessions.py's."""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import Engine, delete, func, insert, select, update

from annotator.review.tables import inactive_users, now, sessions, users, write_connection
from curation.core.errors import BenchsmithError, NotFoundError

ROLES: tuple[str, ...] = ("annotator", "expert", "admin")
USER_NAME = re.compile(r"^[A-Za-z0-9가-힣][A-Za-z0-9가-힣._\-]{0,63}$")
MIN_PASSWORD = 8

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
        if exists:  # a new password: the sessions opened with the old one end
            conn.execute(update(users).where(users.c.name == name).values(**row))
            conn.execute(delete(sessions).where(sessions.c.user == name))
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


def password_version(password_hash: str) -> str:
    """A short fingerprint of the stored hash: it changes with every new password (a new salt),
    so a session opened with the old one no longer matches."""
    return hashlib.sha256(password_hash.encode()).hexdigest()[:32]


def is_active(engine: Engine, name: str) -> bool:
    with engine.connect() as conn:
        return conn.execute(select(inactive_users.c.name).where(inactive_users.c.name == name)).first() is None


def set_active(engine: Engine, name: str, active: bool) -> None:
    """Deactivate (no login, every session ended) or reactivate a user."""
    get_user(engine, name)
    with write_connection(engine) as conn, conn.begin():
        conn.execute(delete(inactive_users).where(inactive_users.c.name == name))
        if not active:
            conn.execute(insert(inactive_users).values(name=name, since=now()))
            conn.execute(delete(sessions).where(sessions.c.user == name))


def check_login(engine: Engine, name: str, password: str) -> bool:
    """The password is right and the user is active. Hashes even for unknown users, so timing
    does not tell which names exist."""
    with engine.connect() as conn:
        stored = conn.execute(select(users.c.password_hash).where(users.c.name == name)).scalar_one_or_none()
    ok = check_password(password, stored or _dummy_hash()) and stored is not None
    return ok and is_active(engine, name)


@functools.cache
def _dummy_hash() -> str:
    """Made at the first login, not at import: a scrypt hash costs ~50 ms of the server's start."""
    return hash_password(secrets.token_hex(8))
