"""Append-only JSONL run logs: `runs/RUN_ID/manifest.json` (written once) and
`runs/RUN_ID/responses.jsonl` (one line per finished request, never rewritten).

Each line goes out in a single `write` on an O_APPEND descriptor before the runner moves
on, so a kill -9 loses at most the line being written; a torn last line is ignored on
reading and its item is simply done again.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from curation.core.errors import BenchsmithError, NotFoundError, WorkspaceError
from evaluation.records import GenerationManifest, RunManifest, manifest_from_json, manifest_json

MANIFEST = "manifest.json"
RESPONSES = "responses.jsonl"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class RunLog:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        size = os.fstat(self._fd).st_size
        if size:
            with self.path.open("rb") as handle:
                handle.seek(size - 1)
                if handle.read(1) != b"\n":  # a line torn by a kill: end it so ours start clean
                    os.write(self._fd, b"\n")

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        os.write(self._fd, line.encode("utf-8"))

    def append_many(self, records: list[dict[str, Any]]) -> int:
        """Several lines in one write (a kill may tear the last of them, which a reader skips); the bytes written."""
        text = "".join(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n" for record in records)
        data = text.encode("utf-8")
        written = len(data)
        while data:
            data = data[os.write(self._fd, data):]
        return written

    def close(self) -> None:
        os.close(self._fd)


def read_records(path: Path, key: str = "item_id") -> dict[str, dict[str, Any]]:
    """The last complete record per item (a later line supersedes an earlier one)."""
    records: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return records
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and key in record:
                records[record[key]] = record
    return records


def write_manifest(run_dir: Path, manifest: RunManifest | GenerationManifest) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / f"{MANIFEST}.tmp"
    tmp.write_text(manifest_json(manifest), encoding="utf-8")
    os.replace(tmp, run_dir / MANIFEST)


def read_manifest(run_dir: Path) -> RunManifest | GenerationManifest:
    """The manifest of a run folder, answer run or curation model step's log."""
    path = run_dir / MANIFEST
    if not path.is_file():
        raise NotFoundError(f"{run_dir} is not a run (no {MANIFEST})")
    try:
        return manifest_from_json(json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as error:
        raise WorkspaceError(f"{path}: malformed run manifest: {error.msg}") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise WorkspaceError(f"{path}: malformed run manifest: {where}: {first['msg']}") from None


def read_answer_manifest(run_dir: Path) -> RunManifest:
    """The manifest of an answer run; a curation model step's log is refused by name."""
    manifest = read_manifest(run_dir)
    if not isinstance(manifest, RunManifest):
        raise BenchsmithError(f"run {manifest.run_id!r} is the log of a curation model step ({manifest.purpose}), "
                              "not an answer run")
    return manifest


def find_run(runs_dir: Path, name: str) -> Path:
    """A run by id (folder under runs/) or by path."""
    for candidate in (Path(name), runs_dir / name):
        if (candidate / MANIFEST).is_file():
            return candidate
    known = sorted(p.name for p in runs_dir.glob("*") if (p / MANIFEST).is_file()) if runs_dir.is_dir() else []
    hint = f" (runs: {', '.join(known[:8])}{' …' if len(known) > 8 else ''})" if known else ""
    raise NotFoundError(f"no run {name!r} in {runs_dir}{hint}")
