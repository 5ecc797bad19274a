"""Reading a JSONL file that people wrote: every bad line reported with its number, the rest kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curation.core.errors import BenchsmithError


def read_jsonl(path: Path, required: tuple[str, ...],
               error: type[BenchsmithError] = BenchsmithError) -> tuple[list[dict[str, Any]], list[str]]:
    """(records with every required key, one message per bad line); an unreadable file raises `error`."""
    records, errors = [], []
    try:
        lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as problem:
        raise error(f"{path}: cannot read: {problem}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as problem:
            errors.append(f"{path}:{number}: not JSON ({problem.msg})")
            continue
        missing = [key for key in required if not isinstance(record, dict) or record.get(key) in (None, "")]
        if missing:
            errors.append(f"{path}:{number}: missing {', '.join(missing)}")
            continue
        records.append(record)
    return records, errors
