"""Page furniture: running headers, footers and page numbers, dropped before segmentation.

A line in the top or bottom margin band is furniture when it is a page number (`3`, `- 3 -`,
`3 / 8`, `3쪽`) or when its text, digits masked and words sorted, repeats on at least half of the
pages (and on two or more). A figure in a margin band is furniture when a figure of the same
kind sits in the same place on at least half of the pages (and on two or more): the drawn frame
round a CSAT page number, a logo. Watermarks never get this far (layout drops rotated and pale text).
"""

from __future__ import annotations

import re
from collections import Counter

from curation.extract.lines import Figure, Line

TOP_BAND, BOTTOM_BAND = 0.16, 0.10
_PAGE_NUMBER = re.compile(r"^[-–—\s(]*\d{1,4}[)\s]*(/\s*\d{1,4})?\s*(쪽|면|page|p\.)?[-–—\s]*$", re.IGNORECASE)


def _signature(text: str) -> str:
    return " ".join(sorted(re.sub(r"\d+", "#", text).split()))


def in_margin(entry: Line | Figure, page_height: float) -> bool:
    return entry.bbox[3] <= TOP_BAND * page_height or entry.bbox[1] >= (1 - BOTTOM_BAND) * page_height


def drop_furniture(pages: list[list[Line]], page_heights: list[float]) -> tuple[list[list[Line]], int]:
    """The pages' lines without headers, footers and page numbers; and how many were dropped."""
    counts: Counter[str] = Counter()
    for lines, height in zip(pages, page_heights, strict=True):
        counts.update({_signature(line.text) for line in lines if in_margin(line, height)})
    repeated = {sig for sig, count in counts.items() if count >= 2 and count >= 0.5 * len(pages)}
    kept_pages, dropped = [], 0
    for lines, height in zip(pages, page_heights, strict=True):
        kept = []
        for line in lines:
            if in_margin(line, height) and (_PAGE_NUMBER.match(line.text) or _signature(line.text) in repeated):
                dropped += 1
                continue
            kept.append(line)
        kept_pages.append(kept)
    return kept_pages, dropped


def drop_furniture_figures(pages: list[list[Figure]], page_heights: list[float]) -> tuple[list[list[Figure]], int]:
    """The pages' figures without those repeated in a margin band; and how many were dropped."""
    def place(figure: Figure) -> tuple[str, tuple[int, ...]]:
        return figure.kind, tuple(round(value) for value in figure.bbox)

    counts: Counter[tuple[str, tuple[int, ...]]] = Counter()
    for figures, height in zip(pages, page_heights, strict=True):
        counts.update({place(figure) for figure in figures if in_margin(figure, height)})
    repeated = {key for key, count in counts.items() if count >= 2 and count >= 0.5 * len(pages)}
    kept = [[figure for figure in figures if not (in_margin(figure, height) and place(figure) in repeated)]
            for figures, height in zip(pages, page_heights, strict=True)]
    return kept, sum(map(len, pages)) - sum(map(len, kept))
