"""Guidelines per queue: a Markdown file in the workspace (`guidelines/<queue>.md`), starting
from the default text shipped in `annotator/review/guideline_defaults/`; admins edit it in the app."""

from __future__ import annotations

import os
from pathlib import Path

from annotator.review.queue_specs import QUEUES
from curation.core.errors import BenchsmithError

DEFAULTS = Path(__file__).resolve().parent / "guideline_defaults"
MAX_CHARS = 50_000


def guideline_path(root: Path, queue: str) -> Path:
    if queue not in QUEUES:
        raise BenchsmithError(f"queue {queue!r}: choose one of {', '.join(QUEUES)}")
    return Path(root) / "guidelines" / f"{queue}.md"


def read_guidelines(root: Path, queue: str) -> str:
    path = guideline_path(root, queue)
    source = path if path.is_file() else DEFAULTS / f"{queue}.md"
    return source.read_text(encoding="utf-8")


def write_guidelines(root: Path, queue: str, text: str) -> Path:
    """Replace the queue's guidelines (atomically: a reader never sees half a file)."""
    if len(text) > MAX_CHARS:
        raise BenchsmithError(f"guidelines for {queue}: at most {MAX_CHARS} characters, got {len(text)}")
    path = guideline_path(root, queue)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".md.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return path
