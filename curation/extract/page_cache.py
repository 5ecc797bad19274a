"""Per-page results that several extraction steps need, computed once per page object.

MuPDF's path list, its drawing clusters and image placements are expensive to build (each needs a pass over the
content stream); the gutter finder, the figure finder, the glyph-picture finder and the
blank-page test all read them.
"""

from __future__ import annotations

import re
from typing import Any

from curation.pymupdf_light import pymupdf


def page_drawings(page: pymupdf.Page) -> list[dict[str, Any]]:
    """`page.get_cdrawings()`: the paths with plain tuples for points and boxes ("rect" is
    (x0, y0, x1, y1)); `get_drawings` would wrap each in a Point, Rect or Quad object."""
    cached = getattr(page, "_benchsmith_drawings", None)
    if cached is None:
        cached = page.get_cdrawings()
        page._benchsmith_drawings = cached  # type: ignore[attr-defined]  # lives as long as the page object
    return cached


def page_drawing_clusters(page: pymupdf.Page) -> list[tuple[pymupdf.Rect, list[dict[str, Any]]]]:
    """MuPDF's clusters of nearby drawings, each with the drawings it holds."""
    cached = getattr(page, "_benchsmith_clusters", None)
    if cached is None:
        drawings = page_drawings(page)
        boxes = [d["rect"] for d in drawings]
        cached = []
        for x0, y0, x1, y1 in cluster_boxes(tuple(page.rect), boxes):
            cached.append((pymupdf.Rect(x0, y0, x1, y1), [d for d, (a, b, c, e) in zip(drawings, boxes, strict=True)
                                                          if x0 <= a <= c <= x1 and y0 <= b <= e <= y1]))  # as Rect.contains
        page._benchsmith_clusters = cached  # type: ignore[attr-defined]
    return cached


Box = tuple[float, float, float, float]


def cluster_boxes(area: Box, boxes: list[Box], tolerance: float = 3.0) -> list[Box]:
    """What `Page.cluster_drawings` returns, on plain tuples (its Rect arithmetic cost ~4 ms a page
    on a page of 175 drawings): each box grows by every box within `tolerance` of it, repeated until
    none is left; boxes no wider or taller than `tolerance` are dropped."""
    def by_bottom_then_left(box: Box) -> tuple[float, float]:
        return box[3], box[0]

    def neighbours(a: Box, b: list[float]) -> bool:
        ax0, ax1 = (a[0], a[2]) if a[2] > a[0] else (a[2], a[0])
        ay0, ay1 = (a[1], a[3]) if a[3] > a[1] else (a[3], a[1])
        bx0, bx1 = (b[0], b[2]) if b[2] > b[0] else (b[2], b[0])
        by0, by1 = (b[1], b[3]) if b[3] > b[1] else (b[3], b[1])
        return not (ax1 < bx0 - tolerance or ax0 > bx1 + tolerance or ay1 < by0 - tolerance or ay0 > by1 + tolerance)

    left, top, right, bottom = area
    pending = sorted([box for box in boxes if box[0] >= left and box[2] <= right and box[1] >= top and box[3] <= bottom],
                     key=by_bottom_then_left)
    joined: list[Box] = []
    while pending:
        grown = list(pending[0])
        repeat = True
        while repeat:
            repeat = False
            for index in range(len(pending) - 1, 0, -1):  # back to front, as PyMuPDF does
                box = pending[index]
                if neighbours(box, grown):
                    for x, y in ((box[0], box[1]), (box[2], box[3])):  # its corners, as Rect |= Point
                        grown = [min(grown[0], x), min(grown[1], y), max(grown[2], x), max(grown[3], y)]
                    del pending[index]
                    repeat = True
        joined.append((grown[0], grown[1], grown[2], grown[3]))
        del pending[0]
        pending = sorted(set(pending), key=by_bottom_then_left)
    return [box for box in sorted(set(joined), key=by_bottom_then_left)
            if box[2] - box[0] > tolerance and box[3] - box[1] > tolerance]


def page_image_info(page: pymupdf.Page) -> list[dict[str, Any]]:
    """Where each picture is placed (no digests: hashing decodes every image). A page with no
    picture in its resources, no form and no inline picture has none, and is spared the text pass
    MuPDF makes to find them."""
    cached = getattr(page, "_benchsmith_image_info", None)
    if cached is None:
        bare = not page_images(page) and not page.get_xobjects() and not _INLINE_IMAGE.search(page.read_contents())
        cached = [] if bare else page.get_image_info()
        page._benchsmith_image_info = cached  # type: ignore[attr-defined]
    return cached


def page_images(page: pymupdf.Page) -> list[tuple]:
    """`page.get_images(full=True)`: the pictures in the page's resources, forms' included."""
    cached = getattr(page, "_benchsmith_images", None)
    if cached is None:
        cached = page.get_images(full=True)
        page._benchsmith_images = cached  # type: ignore[attr-defined]
    return cached


_INLINE_IMAGE = re.compile(rb"(?<![^\s\]\[)(>}{/])BI\s")  # the operator that opens an inline picture
_IMAGE_DRAWN = re.compile(rb"/([^\s/\[\]()<>{}%]+)\s+Do(?![^\s\[\]()<>{}/%])")


def images_in_drawing_order(page: pymupdf.Page) -> list[int] | None:
    """The xrefs of the page's pictures in the order its content stream draws them (one per
    placement, as `get_image_info` lists them), or None when that order cannot be read from the
    page's own stream: pictures inside forms, or inline pictures."""
    images = page_images(page)
    if any(entry[9] != 0 for entry in images):  # drawn from inside a form
        return None
    contents = page.read_contents()
    if _INLINE_IMAGE.search(contents):
        return None
    by_name = {entry[7]: entry[0] for entry in images}
    return [by_name[name] for name in (match.decode("latin-1") for match in _IMAGE_DRAWN.findall(contents)) if name in by_name]
