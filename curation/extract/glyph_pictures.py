"""Characters drawn as small pictures inside a text line (a digit, a circled option marker, a
final "."): read in place and put back into the line as glyphs, or kept as a picture.

A picture is a glyph picture when it is about one text line high and sits on a line of real
text (a text glyph beside it on the same band). It is rendered at OCR_DPI and read by shape
first (a lone dot is "."; a closed ring round a digit is that circled digit, the digit read by
Tesseract inside the ring) and otherwise by Tesseract with a digit/punctuation whitelist. What
is read becomes glyphs of the line's size on its baseline, flagged, so the line, its option
markers and its formulas are built as if it had been text. A picture that cannot be read stays a
picture (a `Figure`): on an option line it becomes the option's image.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pymupdf

from curation.extract.figures import render_crop
from curation.extract.layout import Glyph, core_top_of
from curation.extract.lines import CIRCLED_MARKERS, Figure
from curation.extract.page_cache import page_image_info

GLYPH_DPI = 300
WHITELIST = "0123456789.,()%+-/"
ATTEMPTS = ((2, 7), (1, 7), (1, 10), (3, 10))  # (enlargement, Tesseract page segmentation mode)


@dataclass
class GlyphPictures:
    glyphs: list[Glyph] = field(default_factory=list)  # what was read, as glyphs of their line
    unread: list[Figure] = field(default_factory=list)  # pictures that could not be read
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)  # every glyph picture


def find_glyph_pictures(page: pymupdf.Page, page_number: int, glyphs: list[Glyph], cache: dict[str, str | None],
                        available: bool) -> GlyphPictures:
    """Glyph pictures of a page, read (`cache` maps an image digest to its reading across pages)."""
    found = GlyphPictures()
    infos = page_image_info(page)
    text = glyphs if infos else []
    if not text:
        return found
    heights = sorted(g.y1 - g.y0 for g in text)
    typical = heights[len(heights) // 2]
    placed = [(index, pymupdf.Rect(info["bbox"]) & page.rect) for index, info in enumerate(infos)
              if info["bbox"][3] - info["bbox"][1] <= 2 * typical]  # figures are never glyph pictures
    candidates: list[tuple[int, pymupdf.Rect, Glyph]] = []
    for index, rect in placed:
        neighbour = None if rect.is_empty else _line_neighbour(rect, text)
        if neighbour is not None:
            candidates.append((index, rect, neighbour))
    if not candidates:
        return found
    infos = page.get_image_info(hashes=True)  # digests only now: hashing decodes every image
    for index, rect, neighbour in candidates:
        found.boxes.append((rect.x0, rect.y0, rect.x1, rect.y1))
        digest = infos[index]["digest"].hex()
        if digest not in cache:
            cache[digest] = read_glyph_picture(page, rect) if available else None
        reading = cache[digest]
        if reading:
            found.glyphs += _as_glyphs(reading, rect, neighbour, line_id=-len(found.boxes))
        else:
            found.unread.append(Figure(page_number, 0, (rect.x0, rect.y0, rect.x1, rect.y1), render_crop(page, rect), "other", glyph=True))
    return found


def _line_neighbour(rect: pymupdf.Rect, text: list[Glyph]) -> Glyph | None:
    """A text glyph on the same line band, near the picture, whose size the picture fits."""
    best: tuple[float, Glyph] | None = None
    for glyph in text:
        height = glyph.y1 - glyph.y0
        if not (0.2 * height <= rect.height <= 1.6 * height) or rect.width > 8 * height:
            continue
        overlap = min(rect.y1, glyph.y1) - max(rect.y0, glyph.y0)
        gap = max(glyph.x0 - rect.x1, rect.x0 - glyph.x1, 0.0)
        if overlap >= 0.5 * min(rect.height, height) and gap <= 3 * glyph.size:
            if best is None or gap < best[0]:
                best = (gap, glyph)
    return best[1] if best else None


def _as_glyphs(reading: str, rect: pymupdf.Rect, neighbour: Glyph, line_id: int) -> list[Glyph]:
    step = rect.width / len(reading)
    core_top = core_top_of(neighbour.baseline, neighbour.size)
    return [Glyph(char, rect.x0 + index * step, neighbour.y0, rect.x0 + (index + 1) * step, neighbour.y1,
                  neighbour.size, neighbour.baseline, line_id, core_top, core_top + neighbour.baseline,
                  picture=True)
            for index, char in enumerate(reading)]


def read_glyph_picture(page: pymupdf.Page, rect: pymupdf.Rect) -> str | None:
    """The characters a small picture shows, or None when they cannot be read."""
    from curation.extract.ocr import OcrError, find_rings, render_gray, thicken

    gray = render_gray(page, GLYPH_DPI, clip=rect)
    dark = gray < 140
    if not dark.any():
        return None
    ys, xs = np.nonzero(dark)
    y0, y1, x0, x1 = ys.min(), ys.max(), xs.min(), xs.max()
    ink_height, ink_width = y1 - y0 + 1, x1 - x0 + 1
    if ink_height <= 0.3 * gray.shape[0] and ink_width <= 0.3 * gray.shape[0] and y0 >= 0.45 * gray.shape[0]:
        return "."  # a lone dot on the baseline
    try:
        if 0.8 <= ink_width / ink_height <= 1.25 and find_rings(thicken(dark), dark, (x0, y0, x1, y1), ink_height / 0.85,
                                                                 [(x0, x1 + 1)], min_ring=0.8):
            digits = _tesseract_text(_inside_ring(gray, (x0, y0, x1, y1)), psm=10, whitelist="0123456789", scale=2)
            return CIRCLED_MARKERS[int(digits) - 1] if digits.isdigit() and 1 <= int(digits) <= 10 else None
        for scale, psm in ATTEMPTS:  # Tesseract misses lone characters at one scale and reads them at another
            reading = _tesseract_text(gray, psm=psm, whitelist=WHITELIST, scale=scale).replace(" ", "")
            if reading:
                return reading
    except OcrError:
        return None
    return None


def _inside_ring(gray: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """The picture with the ring whitened: only the digit inside is left (Tesseract misreads rings)."""
    x0, y0, x1, y1 = box
    cx, cy, radius = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2
    yy, xx = np.mgrid[:gray.shape[0], :gray.shape[1]]
    return np.where((xx - cx) ** 2 + (yy - cy) ** 2 <= (0.72 * radius) ** 2, gray, 255).astype(np.uint8)


def _tesseract_text(gray: np.ndarray, psm: int, whitelist: str, scale: int) -> str:
    """Tesseract's reading of a small picture, enlarged `scale` times and framed in white."""
    from curation.extract.ocr import run_tesseract

    big = np.kron(gray, np.ones((scale, scale), dtype=np.uint8))
    pad = 15 * scale
    framed = np.full((big.shape[0] + 2 * pad, big.shape[1] + 2 * pad), 255, dtype=np.uint8)
    framed[pad:-pad, pad:-pad] = big
    words = run_tesseract(framed, psm=psm, extra=("-c", f"tessedit_char_whitelist={whitelist}"), languages="eng")
    return "".join(word.text for word in words)
