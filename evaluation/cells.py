"""A run log as columns: the last record per item of `runs/RUN/responses.jsonl`, one row each.

The columns (`CELL_SCHEMA`) are what pool-scale readers need: the solve matrix, filters,
reports and item analysis read them, never the whole records. They are kept beside the log in
`runs/RUN/cells.parquet`, with the number of log bytes they cover; a later read parses only the
lines appended since (the log is append-only), so each line is validated once, ever. A line
torn by a kill or of another shape is skipped exactly as `read_jsonl_records` skips it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import ValidationError

from evaluation.records import AnswerRecord
from evaluation.runlog import RESPONSES

CELLS_FILE = "cells.parquet"
CELLS_VERSION = "2"  # 2: `decided_by` (a cells file of version 1 is rebuilt from the log when read)

CELL_SCHEMA = pa.schema([
    ("item_id", pa.string()),
    ("content_hash", pa.string()),
    ("outcome", pa.string()),
    ("answer", pa.string()),  # the extracted answer as JSON (a choice's option number or a list of them, …)
    ("choice", pa.int16()),  # the one option chosen, null for none or several
    ("latency_s", pa.float64()),
    ("tokens", pa.int64()),
    ("decided_by", pa.string()),  # the Score's: checker | judge | human (null: a record before typed scores)
])


def _tokens(usage: dict[str, Any] | None) -> int | None:
    if not isinstance(usage, dict) or not usage:
        return None
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [value for key, value in usage.items() if isinstance(value, int) and "token" in key]
    return sum(parts) if parts else None


Row = tuple[str, "str | None", str, Any, "float | None", "dict[str, Any] | None", "str | None"]


def _parse(lines: list[bytes]) -> pa.Table:
    """The valid records among complete log lines, the last per item."""
    rows: list[Row] = []
    for line in lines:
        try:
            r = AnswerRecord.model_validate_json(line.decode("utf-8", errors="replace"))
        except (ValidationError, ValueError):
            continue
        rows.append((r.item_id, r.content_hash, r.outcome, r.answer, r.latency_s, r.usage,
                     r.score.decided_by if r.score is not None else None))
    return _table(rows)


def _choice(answer: Any) -> int | None:
    return answer if isinstance(answer, int) and not isinstance(answer, bool) else None


def _answer_text(answer: Any) -> str | None:
    if answer is None:
        return None
    return str(answer) if _choice(answer) is not None else json.dumps(answer, ensure_ascii=False)


def _table(rows: list[Row]) -> pa.Table:
    """(item, hash, outcome, answer, latency, usage, decided by) per record, in log order → the last per item."""
    latest: dict[str, Row] = {}
    for row in rows:
        latest.pop(row[0], None)  # a later line supersedes: it moves to the end
        latest[row[0]] = row
    kept = list(latest.values())
    return pa.table({
        "item_id": [r[0] for r in kept],
        "content_hash": [r[1] for r in kept],
        "outcome": [r[2] for r in kept],
        "answer": [_answer_text(r[3]) for r in kept],
        "choice": [_choice(r[3]) for r in kept],
        "latency_s": [r[4] for r in kept],
        "tokens": [_tokens(r[5]) for r in kept],
        "decided_by": [r[6] for r in kept],
    }, schema=CELL_SCHEMA)


def _cached(path: Path) -> tuple[pa.Table, int] | None:
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException):
        return None
    metadata = table.schema.metadata or {}
    if metadata.get(b"version") != CELLS_VERSION.encode() or table.schema.remove_metadata() != CELL_SCHEMA:
        return None
    return table.replace_schema_metadata(None), int(metadata.get(b"log_bytes", b"0"))


def run_cells(run_dir: Path) -> pa.Table:
    """The run's last record per item as `CELL_SCHEMA` columns, brought up to date with its log."""
    log, cache_path = run_dir / RESPONSES, run_dir / CELLS_FILE
    size = log.stat().st_size if log.is_file() else 0
    cached = _cached(cache_path) if cache_path.is_file() else None
    table, covered = cached if cached and cached[1] <= size else (CELL_SCHEMA.empty_table(), 0)
    if covered == size:
        return table
    with log.open("rb") as handle:
        handle.seek(covered)
        added = handle.read(size - covered)
    end = added.rfind(b"\n") + 1  # a last line without its newline is still being written: next time
    if end == 0:
        return table
    table = _superseded(table, _parse(added[:end].splitlines()))
    _save(table, cache_path, covered + end)
    return table


def _superseded(table: pa.Table, new: pa.Table) -> pa.Table:
    if not new.num_rows:
        return table
    kept = table.filter(pc.invert(pc.is_in(table["item_id"], value_set=new["item_id"])))
    return pa.concat_tables([kept, new])


def note_appended(run_dir: Path, records: list[dict[str, Any]], log_span: tuple[int, int]) -> None:
    """The writer of `records` (valid `AnswerRecord`s, the log's bytes from `log_span[0]` to `log_span[1]`) brings the
    columns up to date without reading them back, when they covered the log up to where it began
    and nobody else has written to it since."""
    log, cache_path = run_dir / RESPONSES, run_dir / CELLS_FILE
    cached = _cached(cache_path) if cache_path.is_file() else None
    table, covered = cached if cached else (CELL_SCHEMA.empty_table(), 0)
    if covered == log_span[0] and log.stat().st_size == log_span[1]:
        rows = [(r["item_id"], r.get("content_hash"), r["outcome"], r.get("answer"), r.get("latency_s"), r.get("usage"),
                 _decided_by(r.get("score"))) for r in records]
        _save(_superseded(table, _table(rows)), cache_path, log_span[1])


def _decided_by(score: Any) -> str | None:
    if isinstance(score, dict):
        return str(score.get("decided_by") or "checker")
    return getattr(score, "decided_by", None)


def _save(table: pa.Table, path: Path, log_bytes: int) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        pq.write_table(table.replace_schema_metadata({"version": CELLS_VERSION, "log_bytes": str(log_bytes)}), tmp)
        os.replace(tmp, path)
    except OSError:  # a read-only run folder: the columns are rebuilt next time, nothing is lost
        tmp.unlink(missing_ok=True)
