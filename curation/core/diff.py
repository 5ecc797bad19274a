"""Field-level differences between two item records (dotted paths, 1-based list positions)."""

from __future__ import annotations

from typing import Any

_MISSING = object()
ATOMIC = frozenset({"answer"})  # top-level fields that change as one value (the typed answer key)


def changed_paths(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Dotted paths whose values differ, descending into dicts and same-length lists."""
    return [path for path, _, _ in field_changes(old, new)]


def field_changes(old: Any, new: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """(path, old value, new value) for every leaf that differs; a missing side is None."""
    if isinstance(old, dict) and isinstance(new, dict):
        changes = []
        for key in sorted(set(old) | set(new)):
            before, after = old.get(key, _MISSING), new.get(key, _MISSING)
            if before == after:
                continue
            path = f"{prefix}.{key}" if prefix else str(key)
            if before is _MISSING or after is _MISSING or path in ATOMIC:
                changes.append((path, None if before is _MISSING else before, None if after is _MISSING else after))
            else:
                changes.extend(field_changes(before, after, path))
        return changes
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new) and old and isinstance(old[0], dict):
        changes = []
        for position, (before, after) in enumerate(zip(old, new, strict=True), start=1):
            if before != after:
                changes.extend(field_changes(before, after, f"{prefix}.{position}"))
        return changes
    if old == new:
        return []
    return [(prefix or "(item)", old, new)]
