"""The response cache: SQLite in the workspace (cache.db), keyed by a content hash.

Writes are buffered and committed in batches (a commit per response would dominate the
runner's per-item cost); a response lost from the buffer by a kill is still in the run's
JSONL log, which is written first and read on resume.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evaluation.backends.base import ChatRequest, Completion
from evaluation.models import ModelSpec

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    record TEXT NOT NULL
)
"""


def cache_key(spec: ModelSpec, request: ChatRequest, prompt_version: str) -> str:
    """sha256 of backend, model id and revision, the full request (image hashes, not bytes),
    decoding settings and prompt version."""
    material = {
        "model": spec.identity(),
        "request": request.key_material(),
        "decoding": spec.decoding.model_dump(exclude={"stream"}),
        "prompt": prompt_version,
    }
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, path: Path, *, flush_every: int = 256, flush_interval_s: float = 2.0):
        self.path = Path(path)
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self._db.commit()
        self._pending: dict[str, tuple[float, str, str, str]] = {}
        self._flush_every = flush_every
        self._flush_interval = flush_interval_s
        self._last_flush = time.monotonic()

    def get_many(self, keys: Iterable[str]) -> dict[str, Completion]:
        keys = list(keys)
        found: dict[str, Completion] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, record in self._db.execute(f"SELECT key, record FROM responses WHERE key IN ({marks})", chunk):
                found[key] = Completion.from_record(json.loads(record))
        for key in keys:
            if key in self._pending:
                found[key] = Completion.from_record(json.loads(self._pending[key][3]))
        return found

    def get(self, key: str) -> Completion | None:
        return self.get_many([key]).get(key)

    def put(self, key: str, completion: Completion, spec: ModelSpec) -> None:
        record: dict[str, Any] = completion.to_record()
        self._pending[key] = (time.time(), spec.backend, spec.model, json.dumps(record, ensure_ascii=False))
        if len(self._pending) >= self._flush_every or time.monotonic() - self._last_flush > self._flush_interval:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            rows = [(key, *values) for key, values in self._pending.items()]
            self._db.executemany("INSERT OR IGNORE INTO responses (key, created_at, backend, model, record) "
                                 "VALUES (?, ?, ?, ?, ?)", rows)
            self._db.commit()
            self._pending.clear()
        self._last_flush = time.monotonic()

    def count(self) -> int:
        return self._db.execute("SELECT count(*) FROM responses").fetchone()[0] + len(self._pending)

    def close(self) -> None:
        self.flush()
        self._db.close()
