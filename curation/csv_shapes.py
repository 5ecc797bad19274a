"""Recognising CSV files in the shapes users actually have: wrapped in a Markdown code fence
(pasted from a chat or a notebook), or a Q-Net export that lost its header row."""

from __future__ import annotations

import csv
import io
import re

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})[\w-]*\s*$")
_YEAR = re.compile(r"^(19|20)\d\d$")


def strip_code_fence(text: str) -> tuple[str, bool]:
    """The text between an opening ``` line and its closing line, if the file is fenced."""
    lines = text.splitlines()
    start = next((k for k, line in enumerate(lines) if line.strip()), None)
    if start is None or not _FENCE.match(lines[start]):
        return text, False
    end = len(lines)
    for k in range(len(lines) - 1, start, -1):
        if lines[k].strip():
            end = k if _FENCE.match(lines[k]) else k + 1
            break
    return "\n".join(lines[start + 1 : end]) + "\n", True


def headerless_qnet_columns(text: str, columns: tuple[str, ...]) -> list[str] | None:
    """The column names to read a header-less Q-Net CSV with, or None when row 1 is a header.

    A Q-Net row is `exam, year, session, subject, number, question, [image], 4 options, answer`:
    12 cells (11 without the image column), a 4-digit year and a question number.
    """
    first = next(csv.reader(io.StringIO(text)), [])
    cells = [cell.strip() for cell in first]
    if set(cells) & set(columns):
        return None
    if len(cells) not in (len(columns), len(columns) - 1):
        return None
    if not (_YEAR.match(cells[1]) and cells[4].isdigit() and cells[2].isdigit()):
        return None
    if len(cells) == len(columns):
        return list(columns)
    return [name for name in columns if name != "Question_image"]
