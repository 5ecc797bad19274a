"""The review server's settings, from the [annotator] table of the workspace's benchsmith.toml:

    [annotator]
    session_idle_minutes = 720     # a session ends after 12 h without a request
    session_max_hours = 168        # and 7 days after login, however active
    login_backoff_seconds = 1.0    # the first wait after too many failed logins (then doubling)
    page_sessions = 500            # page loads whose state the server keeps, all users together
    page_sessions_per_user = 20    # and per user (one account cannot push another's pages out)
    reservation_idle_minutes = 5   # an item reserved by an edit is released after this long without one
    reservations_per_user = 3      # items one user may hold at once (their oldest is released first)
    allowed_hosts = ["127.0.0.1", "localhost"]  # Host headers served (default: these and the bind address)
    # size limits (limits.py): max_text_chars, max_edit_kb, max_request_kb, max_upload_mb
"""

from __future__ import annotations

import socket
import tomllib
from dataclasses import dataclass
from pathlib import Path

from annotator.review.limits import KEYS as LIMIT_KEYS
from annotator.review.limits import Limits
from curation.core.errors import BenchsmithError

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
WILDCARDS = ("0.0.0.0", "::", "")


@dataclass(frozen=True)
class Settings:
    session_idle_s: float = 12 * 3600.0
    session_max_s: float = 7 * 24 * 3600.0
    login_backoff_s: float = 1.0
    page_sessions: int = 500
    page_sessions_per_user: int = 20
    reservation_idle_s: float = 300.0
    reservations_per_user: int = 3
    allowed_hosts: tuple[str, ...] = ()  # () = LOCAL_HOSTS and the address the server binds
    limits: Limits = Limits()

    def hosts(self, bind: str) -> frozenset[str]:
        """The Host names served: the configured ones, else the local names and `bind` (for a
        wildcard bind, this machine's own names and addresses)."""
        return frozenset(host.lower() for host in (self.allowed_hosts or (*LOCAL_HOSTS, bind, *_own_names(bind))))


def _own_names(bind: str) -> list[str]:
    if bind not in WILDCARDS:
        return []
    names = [socket.gethostname(), socket.getfqdn()]
    try:
        names += [str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)]
    except OSError:
        pass
    return names


def read_settings(config: Path, *, session_idle_minutes: float | None = None) -> Settings:
    """`session_idle_minutes` (a CLI flag) wins over the file."""
    data = tomllib.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
    section = data.get("annotator", {})
    if not isinstance(section, dict):
        raise BenchsmithError(f"{config}: [annotator] must be a table")
    default = Settings()
    values = {"session_idle_minutes": section.get("session_idle_minutes", default.session_idle_s / 60),
              "session_max_hours": section.get("session_max_hours", default.session_max_s / 3600),
              "login_backoff_seconds": section.get("login_backoff_seconds", default.login_backoff_s)}
    if session_idle_minutes is not None:
        values["session_idle_minutes"] = session_idle_minutes
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise BenchsmithError(f"{config}: annotator.{key} must be a positive number, not {value!r}")
    counts = {"page_sessions": section.get("page_sessions", default.page_sessions),
              "page_sessions_per_user": section.get("page_sessions_per_user", default.page_sessions_per_user),
              "reservations_per_user": section.get("reservations_per_user", default.reservations_per_user),
              **{key: section.get(key, getattr(default.limits, field) // unit)
                 for key, (unit, field) in LIMIT_KEYS.items()}}
    for key, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise BenchsmithError(f"{config}: annotator.{key} must be a positive whole number, not {value!r}")
    idle = section.get("reservation_idle_minutes", default.reservation_idle_s / 60)
    if isinstance(idle, bool) or not isinstance(idle, int | float) or idle <= 0:
        raise BenchsmithError(f"{config}: annotator.reservation_idle_minutes must be a positive number, not {idle!r}")
    hosts = section.get("allowed_hosts", [])
    if not isinstance(hosts, list) or not all(isinstance(host, str) and host for host in hosts):
        raise BenchsmithError(f"{config}: annotator.allowed_hosts must be a list of host names, not {hosts!r}")
    limits = Limits(**{field: counts[key] * unit for key, (unit, field) in LIMIT_KEYS.items()})
    return Settings(session_idle_s=float(values["session_idle_minutes"]) * 60,
                    session_max_s=float(values["session_max_hours"]) * 3600,
                    login_backoff_s=float(values["login_backoff_seconds"]),
                    page_sessions=counts["page_sessions"], page_sessions_per_user=counts["page_sessions_per_user"],
                    reservation_idle_s=float(idle) * 60, reservations_per_user=counts["reservations_per_user"],
                    allowed_hosts=tuple(hosts), limits=limits)
