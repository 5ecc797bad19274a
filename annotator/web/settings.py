"""The review server's settings, from the [annotator] table of the workspace's benchsmith.toml:

    [annotator]
    session_idle_minutes = 720     # a session ends after 12 h without a request
    session_max_hours = 168        # and 7 days after login, however active
    login_backoff_seconds = 1.0    # the first wait after too many failed logins (then doubling)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from curation.errors import BenchsmithError


@dataclass(frozen=True)
class Settings:
    session_idle_s: float = 12 * 3600.0
    session_max_s: float = 7 * 24 * 3600.0
    login_backoff_s: float = 1.0


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
    return Settings(session_idle_s=float(values["session_idle_minutes"]) * 60,
                    session_max_s=float(values["session_max_hours"]) * 3600,
                    login_backoff_s=float(values["login_backoff_seconds"]))
