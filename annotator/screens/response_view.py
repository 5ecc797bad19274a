"""A model's response as the Verdicts queue shows it: whole, scrollable, and with a repeated loop
folded and marked.

A response that degenerates into repeating the same stretch (until the token limit) is shown with
its first copy and the repeats folded under a marker saying how many there were: the person still
reads the whole response (the fold opens), and sees at once that it looped. A loop is a stretch of
at least `MIN_REPEATS` consecutive copies of one unit (up to `MAX_UNIT` characters) whose repeats
cover at least `MIN_FOLDED` characters; the longest such stretch is folded first, then the text
after it is searched again.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

import numpy as np

MAX_UNIT = 400
MIN_REPEATS = 3
MIN_FOLDED = 120
MAX_LOOPS = 4


@dataclass(frozen=True)
class Loop:
    start: int  # where the first copy starts
    unit: int  # its length
    copies: int  # consecutive copies, the first included

    @property
    def folded_from(self) -> int:
        return self.start + self.unit

    @property
    def end(self) -> int:
        return self.start + self.unit * self.copies


def _longest_run(equal: np.ndarray) -> tuple[int, int]:
    """(start, length) of the longest run of True (length 0 when none)."""
    if not equal.any():
        return 0, 0
    padded = np.concatenate(([0], equal.astype(np.int8), [0]))
    edges = np.flatnonzero(np.diff(padded))
    starts, ends = edges[::2], edges[1::2]
    best = int(np.argmax(ends - starts))
    return int(starts[best]), int(ends[best] - starts[best])


def find_loop(text: str) -> Loop | None:
    """The repeated stretch that folds the most characters, if any."""
    n = len(text)
    if n < MIN_FOLDED + MIN_REPEATS:
        return None
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    best: Loop | None = None
    for unit in range(1, min(MAX_UNIT, n // MIN_REPEATS) + 1):
        start, length = _longest_run(codes[unit:] == codes[:-unit])
        copies = (length + unit) // unit
        folded = (copies - 1) * unit
        if copies >= MIN_REPEATS and folded >= MIN_FOLDED and (best is None or folded > (best.copies - 1) * best.unit):
            best = Loop(start, unit, copies)
    return best


def find_loops(text: str) -> list[Loop]:
    """Non-overlapping loops, in text order."""
    loops: list[Loop] = []
    offset = 0
    while len(loops) < MAX_LOOPS:
        found = find_loop(text[offset:])
        if found is None:
            break
        loops.append(Loop(offset + found.start, found.unit, found.copies))
        offset += found.end
    return loops


def response_html(text: str | None, element_id: str = "") -> str:
    """The response, HTML-escaped, in a scrollable box; each loop's repeats folded under a marker."""
    if not text:
        return '<div class="bs-note">응답 없음 · No response text</div>'
    parts, at = [], 0
    for loop in find_loops(text):
        parts.append(escape(text[at:loop.folded_from]))
        repeats = loop.copies - 1
        folded = text[loop.folded_from:loop.end]
        parts.append(f'<details class="bs-loop" data-repeats="{repeats}" data-unit="{loop.unit}">'
                     f"<summary>⟳ 같은 내용 {repeats}회 더 반복 (접음) · the same {loop.unit} characters repeated "
                     f"{repeats} more times (folded, {len(folded)} characters)</summary>"
                     f'<span class="bs-loop-text">{escape(folded)}</span></details>')
        at = loop.end
    parts.append(escape(text[at:]))
    attribute = f' id="{escape(element_id)}"' if element_id else ""
    return (f'<div class="bs-response-text"{attribute} style="max-height: 32em; overflow-y: auto; '
            f'white-space: pre-wrap; border: 1px solid #ccc; padding: 0.5em">{"".join(parts)}</div>')
