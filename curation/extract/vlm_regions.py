"""The parts of a PDF a vision model reads, rendered as pictures, and the way back from a pixel
box in a picture to a box in PDF points on its page.

A question the layout found is read in its own box (a little padded). A page whose text layer is
unusable has no layout: it is read column by column (the gutter from a drawn rule or the glyph
positions, which survive a broken font map; from the page picture for a scan), with the band
above the columns (a header, instructions) read on its own.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from curation.extract.figures import render_crop
from curation.extract.layout import find_gutter, page_glyphs
from curation.extract.lines import Box, rect_box, union
from curation.extract.page_cache import page_drawings, page_image_info
from curation.extract.segment import ExtractedQuestion
from curation.imaging import CROP_ZOOM
from curation.pymupdf_light import pymupdf

QUESTION_PAD = 4.0  # points around a question's box, so its first and last strokes are not cut
BAND_MIN = 12.0  # points: a band above or below the columns thinner than this holds nothing to read
GUTTER_DPI = 72  # the page picture a scan's gutter is looked for in


@dataclass(frozen=True)
class Region:
    key: str  # unique across PDFs: the PDF's sha256 prefix, the page and the region
    page: int  # 1-based
    box: Box  # PDF points
    label: str  # for people and the prompt: "17번 문항", "왼쪽 단" …
    png: bytes
    question: ExtractedQuestion | None = None  # the layout's question read here (None: no layout)

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the picture in pixels, from its PNG header."""
        width, height = struct.unpack(">II", self.png[16:24])
        return width, height

    def where(self) -> str:
        x0, y0, x1, y1 = self.box
        return f"{self.page}쪽 {self.label} (x {x0:.1f}–{x1:.1f}, y {y0:.1f}–{y1:.1f} pt)"

    def to_page(self, pixels: list[float]) -> Box:
        """A box in pixels of the picture as a box in PDF points, kept inside the region."""
        x0, y0, x1, y1 = self.box
        left, top, right, bottom = (value / CROP_ZOOM for value in pixels)
        return (min(x0 + left, x1), min(y0 + top, y1), min(x0 + right, x1), min(y0 + bottom, y1))


def question_region(page: pymupdf.Page, sha: str, question: ExtractedQuestion) -> Region:
    x0, y0, x1, y1 = question.bbox
    rect = pymupdf.Rect(x0 - QUESTION_PAD, y0 - QUESTION_PAD, x1 + QUESTION_PAD, y1 + QUESTION_PAD) & page.rect
    run = f"r{question.run + 1}-" if question.run else ""
    return Region(f"{sha[:12]}-p{question.page}-{run}q{question.number:03d}", question.page, rect_box(rect),
                  f"{question.number}번 문항", render_crop(page, rect), question)


def column_regions(page: pymupdf.Page, number: int, sha: str) -> list[Region]:
    """The page's content cut into its columns (and the bands above and below them)."""
    regions = []
    for index, (label, box) in enumerate(_column_boxes(page)):
        rect = pymupdf.Rect(box) & page.rect
        if rect.is_empty:
            continue
        regions.append(Region(f"{sha[:12]}-p{number}-c{index + 1}", number, rect_box(rect), label,
                              render_crop(page, rect)))
    return regions


def _column_boxes(page: pymupdf.Page) -> list[tuple[str, Box]]:
    glyphs = page_glyphs(page).glyphs
    marks = [(g.x0, g.y0, g.x1, g.y1) for g in glyphs] + [tuple(info["bbox"]) for info in page_image_info(page)]
    marks += [drawing["rect"] for drawing in page_drawings(page)]
    if not marks:
        return []
    left, top, right, bottom = rect_box(pymupdf.Rect(union(marks)) & page.rect)  # type: ignore[arg-type]
    gutter = find_gutter(page, glyphs) if glyphs else None
    if gutter is not None:
        xs, columns_top, columns_bottom = list(gutter.xs), gutter.top or top, gutter.bottom or bottom
    else:
        xs, columns_top, columns_bottom = _picture_gutter(page), top, bottom
    if not xs:
        return [("페이지 전체", (left, top, right, bottom))]
    names = ["왼쪽 단", "가운데 단", "오른쪽 단"] if len(xs) == 2 else ["왼쪽 단", "오른쪽 단"]
    edges = [left, *xs, right]
    boxes: list[tuple[str, Box]] = []
    if columns_top - top > BAND_MIN:
        boxes.append(("단 위 머리", (left, top, right, columns_top)))
    boxes += [(names[i] if i < len(names) else f"{i + 1}번째 단", (edges[i], columns_top, edges[i + 1], columns_bottom))
              for i in range(len(edges) - 1)]
    if bottom - columns_bottom > BAND_MIN:
        boxes.append(("단 아래", (left, columns_bottom, right, bottom)))
    return boxes


def _picture_gutter(page: pymupdf.Page) -> list[float]:
    """A scan's gutter from its picture (a drawn rule or an empty band near the middle)."""
    from curation.extract.ocr import find_picture_columns

    pixmap = page.get_pixmap(dpi=GUTTER_DPI, colorspace=pymupdf.csGRAY, alpha=False)
    dark = np.frombuffer(pixmap.samples, dtype=np.uint8).reshape(pixmap.height, pixmap.width) < 128
    found = find_picture_columns(dark)
    return [] if found.gutter is None else [found.gutter * page.rect.width / pixmap.width]
