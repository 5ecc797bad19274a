"""Figures on a scanned page: the ink that OCR did not read as text, grouped into pictures.

A page picture has no drawing list and no embedded figures to find, so the page is rendered at
two pixels a point, the boxes of the OCR lines are blanked, and what ink is left is
grouped (after a small dilation, so a chart's axes, curves and labels stay one piece). A group
big enough to be a figure, outside the page's header and footer bands, that is not a frame
around text (ink only along its border) or a column rule, is cropped from the page at
CROP_ZOOM. Lines lying inside a figure are its labels (read by OCR as junk) and are dropped by
the caller, as for vector figures on born-digital pages.
"""

from __future__ import annotations

import numpy as np

from curation.extract.figures import DECORATION_BOTTOM, DECORATION_TOP, GutterXs, region_of, render_crop
from curation.extract.lines import Box, Figure, Line
from curation.pymupdf_light import pymupdf

DARK = 190  # gray level below which a pixel is ink (light enough for thin axes, dark enough to skip a light watermark)
SCALE = 2  # pixels a point: thin strokes stay dark
TEXT_MARGIN = 2  # points around an OCR line's box that belong to its text
JOIN = 4  # points: ink closer than this is one figure
MIN_WIDTH, MIN_HEIGHT = 30, 20  # points: anything smaller is a stray mark or an unread word
FRAME_BORDER = 4  # points: a frame's ink lies within this band along its box
FRAME_INK = 0.004  # share of a box's interior inked, below which the box is a frame around text


def scan_figures(page: pymupdf.Page, page_number: int, gutter_x: GutterXs, lines: list[Line]) -> list[Figure]:
    from scipy import ndimage  # only scanned pages need it (a tenth of a second to import)

    ink = _ink_outside_text(page, lines)
    labels, _ = ndimage.label(ndimage.binary_dilation(ink, iterations=JOIN * SCALE))
    boxes: list[Box] = []
    for index, found in enumerate(ndimage.find_objects(labels), start=1):
        if found is None:
            continue
        rows, cols = found
        own = (labels[found] == index) & ink[found]  # the group's own ink, without the dilation
        if not own.any():
            continue
        ys, xs = np.nonzero(own)
        box: Box = ((cols.start + xs.min()) / SCALE, (rows.start + ys.min()) / SCALE,
                    (cols.start + xs.max() + 1) / SCALE, (rows.start + ys.max() + 1) / SCALE)
        if _wanted(box, own[ys.min():ys.max() + 1, xs.min():xs.max() + 1], page):
            boxes.append(box)
    return [Figure(page_number, region_of(box, gutter_x), box, render_crop(page, pymupdf.Rect(box)), "raster")
            for box in sorted(_merge_overlapping(boxes), key=lambda box: (box[1], box[0]))]


def _merge_overlapping(boxes: list[Box]) -> list[Box]:
    """One box for groups that overlap (an arrow inside a drawing's box is part of the drawing)."""
    merged: list[Box] = []
    for box in sorted(boxes):
        for index, other in enumerate(merged):
            if box[0] < other[2] and other[0] < box[2] and box[1] < other[3] and other[1] < box[3]:
                merged[index] = (min(box[0], other[0]), min(box[1], other[1]), max(box[2], other[2]), max(box[3], other[3]))
                break
        else:
            merged.append(box)
    return merged


def _ink_outside_text(page: pymupdf.Page, lines: list[Line]) -> np.ndarray:
    pixmap = page.get_pixmap(matrix=pymupdf.Matrix(SCALE, SCALE), colorspace=pymupdf.csGRAY, alpha=False)
    gray = np.frombuffer(pixmap.samples, dtype=np.uint8).reshape(pixmap.height, pixmap.width)
    ink = gray < DARK
    for line in lines:
        if _picture_junk(line):
            continue  # a picture's strokes read as "! A" or "^": they stay ink of the figure
        x0, y0, x1, y1 = (int(v * SCALE) for v in line.bbox)
        margin = TEXT_MARGIN * SCALE
        ink[max(0, y0 - margin):y1 + margin + 1, max(0, x0 - margin):x1 + margin + 1] = False
    return ink


def _picture_junk(line: Line) -> bool:
    """What OCR reads off a drawing: no Hangul, no option marker, fewer than three letters or digits."""
    text = line.text
    return (not line.markers and not any("\uac00" <= char <= "\ud7a3" for char in text)
            and sum(char.isalnum() for char in text) < 3)


def _wanted(box: Box, ink: np.ndarray, page: pymupdf.Page) -> bool:
    width, height = box[2] - box[0], box[3] - box[1]
    page_height = page.rect.height
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        return False
    if box[3] < DECORATION_TOP * page_height or box[1] > DECORATION_BOTTOM * page_height:
        return False  # header and footer bands
    if width < 6 and height > 0.3 * page_height:
        return False  # the column rule
    border = FRAME_BORDER * SCALE
    interior = ink[border:-border, border:-border]
    return interior.size > 0 and interior.mean() >= FRAME_INK
