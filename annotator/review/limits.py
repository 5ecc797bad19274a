"""Size limits on what a client may send the review server, from [annotator] in benchsmith.toml:

    [annotator]
    max_text_chars = 20000      # one text field (a stem, an option, a rationale, a reason)
    max_edit_kb = 256           # one edit payload: a save's or a draft's fields together, as JSON
    max_request_kb = 1024       # any request body (the gate refuses it before anything reads it)
    max_upload_mb = 10          # a file sent to Gradio's upload route

A request past a limit is refused with 413 (the gate) or a clear error (the save and draft
paths), and nothing is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from annotator.review.queue_specs import NotAllowed


@dataclass(frozen=True)
class Limits:
    text_chars: int = 20_000
    edit_bytes: int = 256 * 1024
    request_bytes: int = 1024 * 1024
    upload_bytes: int = 10 * 1024 * 1024


# the benchsmith.toml key of each limit, its unit in bytes (1 for counts) and the Limits field
KEYS = {"max_text_chars": (1, "text_chars"), "max_edit_kb": (1024, "edit_bytes"),
        "max_request_kb": (1024, "request_bytes"), "max_upload_mb": (1024 * 1024, "upload_bytes")}


class TooLarge(NotAllowed):
    """A field or payload past its limit: refused, nothing written."""


def too_large_message(what: str, size: int, limit: int, unit: str, key: str) -> str:
    return (f"너무 큽니다 · Too large: {what} is {size:,} {unit}; the limit is {limit:,} {unit} "
            f"(annotator.{key} in benchsmith.toml)")


def check_edits(limits: Limits, edits: dict[str, Any]) -> None:
    """Raise TooLarge when a text in `edits` (at any depth) or the whole payload passes its limit."""
    for path, value in edits.items():
        for text in _texts(value):
            if len(text) > limits.text_chars:
                raise TooLarge(too_large_message(f"field {path!r}", len(text), limits.text_chars, "characters",
                                                 "max_text_chars"))
    size = len(json.dumps(edits, ensure_ascii=False, default=str).encode())
    if size > limits.edit_bytes:
        raise TooLarge(too_large_message("the edit", size, limits.edit_bytes, "bytes", "max_edit_kb"))


def check_text(limits: Limits, what: str, text: str | None) -> None:
    """Raise TooLarge for one free-text input (a reason, a comment) past `max_text_chars`."""
    if text is not None and len(text) > limits.text_chars:
        raise TooLarge(too_large_message(what, len(text), limits.text_chars, "characters", "max_text_chars"))


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for inner in value.values() for text in _texts(inner)]
    if isinstance(value, list | tuple):
        return [text for inner in value for text in _texts(inner)]
    return []
