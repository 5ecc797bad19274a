"""Per-page results that several extraction steps need, computed once per page object.

MuPDF's path list is expensive to build (every path of the content stream becomes Python
objects); the gutter finder, the figure finder and the blank-page test all read it.
"""

from __future__ import annotations

from typing import Any

import pymupdf


def page_drawings(page: pymupdf.Page) -> list[dict[str, Any]]:
    cached = getattr(page, "_benchsmith_drawings", None)
    if cached is None:
        cached = page.get_drawings()
        page._benchsmith_drawings = cached  # the page object lives as long as its reading
    return cached
