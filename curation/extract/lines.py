"""The unit every extraction engine produces and segmentation consumes: a line of text on a page.

A line knows its page, its region (full width, left or right column), its box in PDF points,
its text (formulas already as \\( LaTeX \\)), the cells it splits into at wide gaps, and where
its circled option markers sit. A `Figure` travels in the same stream, in reading order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pymupdf

FULL, LEFT, RIGHT = 0, 1, 2
CIRCLED_MARKERS = "①②③④⑤⑥⑦⑧⑨⑩"
OPTION_PLACEHOLDER = "\ue000"  # OCR: "a circled option marker was here" (Tesseract cannot read ①–⑩)

Box = tuple[float, float, float, float]


def rect_box(rect: pymupdf.Rect) -> Box:
    """A PyMuPDF rect as a plain (x0, y0, x1, y1) box: what `tuple(rect)` gives, typed."""
    return (rect.x0, rect.y0, rect.x1, rect.y1)


@dataclass
class Cell:
    x0: float
    x1: float
    text: str


@dataclass
class Line:
    page: int  # 1-based
    region: int
    bbox: Box
    text: str
    size: float = 10.0
    cells: list[Cell] = field(default_factory=list)
    markers: list[tuple[str, float, float]] = field(default_factory=list)  # (circled digit, x0, x1)
    source: str = "text"  # "text" | "ocr" | "mineru"
    pictures: bool = False  # some characters were read from small pictures of them
    table: Any = None  # the tables.Table this line sits in (segmentation writes the table once)

    @property
    def height(self) -> float:
        return self.bbox[3] - self.bbox[1]


@dataclass
class Figure:
    page: int
    region: int
    bbox: Box
    png: bytes  # a drawn figure's crop stays empty until read_document renders the figures it keeps
    kind: str  # raster | vector | formula | other
    glyph: bool = False  # a character drawn as a picture that could not be read

    @property
    def height(self) -> float:
        return self.bbox[3] - self.bbox[1]


def union(boxes: list[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def vertical_overlap(a: Box, b: Box) -> float:
    return max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
