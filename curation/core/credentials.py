"""Database credentials kept out of the world-readable config and out of everything printed.

`benchsmith.toml` holds the store URL without its password. The password comes from the
environment variable BENCHSMITH_DB_PASSWORD or from a file readable by its owner only
(mode 0600; `init --db` writes `.db-password` so). `mask_url` is what every message shows.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from curation.core.errors import WorkspaceError

PASSWORD_ENV = "BENCHSMITH_DB_PASSWORD"
PASSWORD_FILE = ".db-password"
_USERINFO_PASSWORD = re.compile(r"(?P<head>://[^:/@\s]*):(?P<password>[^@\s]*)@")


def mask_url(url: str) -> str:
    """The URL with any password replaced by ***."""
    return _USERINFO_PASSWORD.sub(r"\g<head>:***@", url)


def split_password(url: str) -> tuple[str, str | None]:
    """(the URL without its password, the password or None)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return url, None
    if parsed.password is None:
        return url, None
    return parsed._replace(password=None).render_as_string(hide_password=False), str(parsed.password)


def write_password_file(path: Path, password: str) -> None:
    """Write the password readable by the owner only (created 0600, never wider)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(password + "\n")


def read_password_file(path: Path) -> str:
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise WorkspaceError(f"{path}: the database password file is readable by others "
                             f"(mode {stat.filemode(mode)}): run `chmod 600 {path}`")
    return path.read_text(encoding="utf-8").strip()


def with_password(url: str, password_file: Path | None) -> str:
    """The URL to connect with: the password from BENCHSMITH_DB_PASSWORD, else from the file."""
    password = os.environ.get(PASSWORD_ENV) or None  # set but empty counts as unset
    if password is None and password_file is not None and password_file.is_file():
        password = read_password_file(password_file)
    if not password:
        return url
    from sqlalchemy.engine import make_url

    return make_url(url).set(password=password).render_as_string(hide_password=False)
