"""Errors a user can cause. The CLI prints their message as one line; nothing else is needed."""

from __future__ import annotations


class BenchsmithError(Exception):
    """Base for errors that end a command with a clear message instead of a traceback."""

    exit_code = 1


class WorkspaceError(BenchsmithError):
    """A missing, malformed or unusable workspace or config."""


class NotFoundError(BenchsmithError):
    exit_code = 4


class ConflictError(BenchsmithError):
    """A write named a revision that is no longer the current one."""

    exit_code = 3

    def __init__(self, item_id: str, expected_rev: int, current_rev: int, since: list[str]):
        self.item_id = item_id
        self.expected_rev = expected_rev
        self.current_rev = current_rev
        self.since = since
        changes = "; ".join(since) if since else "no revision details"
        super().__init__(
            f"conflict on item {item_id!r}: you edited revision {expected_rev}, "
            f"but it is now at revision {current_rev} ({changes})"
        )


class MissingExtraError(BenchsmithError):
    def __init__(self, extra: str, module: str):
        super().__init__(f"{module} is not installed: pip install 'benchsmith[{extra}]'")


def require_extra(module: str, extra: str):
    """Import an optional heavy dependency or fail with the one line that names its extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(extra, module) from None
