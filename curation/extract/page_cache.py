"""Per-page results that several extraction steps need, computed once per page object.

MuPDF's path list, its drawing clusters and image placements are expensive to build (each needs a pass over the
content stream); the gutter finder, the figure finder, the glyph-picture finder and the
blank-page test all read them.
"""

from __future__ import annotations

from typing import Any

import pymupdf


def page_drawings(page: pymupdf.Page) -> list[dict[str, Any]]:
    cached = getattr(page, "_benchsmith_drawings", None)
    if cached is None:
        cached = page.get_drawings()
        page._benchsmith_drawings = cached  # type: ignore[attr-defined]  # lives as long as the page object
    return cached


def page_drawing_clusters(page: pymupdf.Page) -> list[tuple[pymupdf.Rect, list[dict[str, Any]]]]:
    """MuPDF's clusters of nearby drawings, each with the drawings it holds."""
    cached = getattr(page, "_benchsmith_clusters", None)
    if cached is None:
        drawings = page_drawings(page)
        clusters = page.cluster_drawings(drawings=drawings) if drawings else []
        boxes = [tuple(d["rect"]) for d in drawings]
        cached = []
        for cluster in clusters:
            x0, y0, x1, y1 = cluster
            cached.append((cluster, [d for d, (a, b, c, e) in zip(drawings, boxes, strict=True)
                                     if x0 <= a <= c <= x1 and y0 <= b <= e <= y1]))  # as Rect.contains
        page._benchsmith_clusters = cached  # type: ignore[attr-defined]
    return cached


def page_image_info(page: pymupdf.Page) -> list[dict[str, Any]]:
    """Where each picture is placed (no digests: hashing decodes every image)."""
    cached = getattr(page, "_benchsmith_image_info", None)
    if cached is None:
        cached = page.get_image_info()
        page._benchsmith_image_info = cached  # type: ignore[attr-defined]
    return cached
