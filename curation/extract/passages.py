"""Shared passages: questions printed under `[27～28] …` share the passage text (put before each
stem) and one group id, so curation and review can keep them together."""

from __future__ import annotations

EXTRA_KEY = "passage_group"


def passage_group(pdf_sha256: str, first: int, last: int) -> str:
    """The group id of the passage for questions first–last of a PDF."""
    return f"pdf-{pdf_sha256[:12]}-p{first:03d}-{last:03d}"
