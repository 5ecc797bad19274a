"""Source PDF pages and crops, rendered from the workspace blob store.

Contract with extraction: a source PDF is stored in the blob store as `<sha256>.pdf`
(`BlobStore.put(pdf_bytes, "pdf")`), and items point at it with `source.pdf_sha256`,
`source.page` (1-based) and `source.bbox` in PDF points (x0, y0, x1, y1, origin top-left,
as PyMuPDF reports them). Crops are PNG blobs with the same provenance.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from curation.core.blobs import BlobStore
from curation.core.errors import BenchsmithError, NotFoundError
from curation.core.item import ImageKind, ImageRef, PdfLocation

PAGE_ZOOM = 1.5
CROP_ZOOM = 3.0
_SHA = re.compile(r"^[0-9a-f]{64}$")

if TYPE_CHECKING:
    import pymupdf as fitz


def pymupdf() -> Any:
    """PyMuPDF, imported when first needed: it costs 1-1.5 s of the server's start."""
    return importlib.import_module("curation.pymupdf_light").pymupdf


def warm_up() -> None:
    """Import PyMuPDF in the background, so the first page rendered does not wait for it."""
    threading.Thread(target=pymupdf, name="pymupdf-import", daemon=True).start()


class RenderError(BenchsmithError):
    """A page or box that cannot be rendered (no such page, a box outside the page)."""


@dataclass(frozen=True)
class PageInfo:
    width: float
    height: float
    pages: int


class PdfRenderer:
    """Renders pages and crops from the blob store; keeps a small cache of page PNGs.
    One per app (never module-level), safe to share between request threads."""

    def __init__(self, blobs: BlobStore, cache_size: int = 64):
        self.blobs = blobs
        self._cache: OrderedDict[tuple[str, int], bytes] = OrderedDict()
        self._info: dict[tuple[str, int], PageInfo] = {}
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _open(self, pdf_sha256: str) -> fitz.Document:
        if not _SHA.match(pdf_sha256 or ""):
            raise NotFoundError(f"not a PDF hash: {pdf_sha256!r}")
        return pymupdf().open(self.blobs.path(f"{pdf_sha256}.pdf"))

    def _page(self, document: fitz.Document, page: int) -> fitz.Page:
        if not 1 <= page <= document.page_count:
            raise RenderError(f"page {page} is not in the PDF (1..{document.page_count})")
        return document[page - 1]

    def has_pdf(self, pdf_sha256: str | None) -> bool:
        return bool(pdf_sha256) and self.blobs.exists(f"{pdf_sha256}.pdf")

    def page_info(self, pdf_sha256: str, page: int) -> PageInfo:
        key = (pdf_sha256, page)
        if key not in self._info:
            with self._open(pdf_sha256) as document:
                rect = self._page(document, page).rect
                self._info[key] = PageInfo(rect.width, rect.height, document.page_count)
        return self._info[key]

    def page_png(self, pdf_sha256: str, page: int) -> bytes:
        key = (pdf_sha256, page)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        with self._open(pdf_sha256) as document:
            png = self._page(document, page).get_pixmap(matrix=pymupdf().Matrix(PAGE_ZOOM, PAGE_ZOOM)).tobytes("png")
        with self._lock:
            self._cache[key] = png
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return png

    def crop(self, pdf_sha256: str, page: int, bbox: list[float], kind: ImageKind = "raster") -> ImageRef:
        """Render the box from the PDF into a new PNG blob; the ImageRef carries its provenance."""
        if len(bbox) != 4 or bbox[2] <= bbox[0] or bbox[3] <= bbox[1]:
            raise RenderError(f"box {bbox}: need x0 < x1 and y0 < y1 (PDF points)")
        with self._open(pdf_sha256) as document:
            pdf_page = self._page(document, page)
            fitz = pymupdf()
            clip = fitz.Rect(bbox)
            if not pdf_page.rect.contains(clip):
                r = pdf_page.rect
                raise RenderError(f"box {bbox} is outside page {page} (0, 0, {r.width:g}, {r.height:g})")
            png = pdf_page.get_pixmap(matrix=fitz.Matrix(CROP_ZOOM, CROP_ZOOM), clip=clip).tobytes("png")
        ref = self.blobs.put(png, "png")
        location = PdfLocation(pdf_sha256=pdf_sha256, page=page, bbox=[float(v) for v in bbox])
        return ImageRef(blob=ref, kind=kind, provenance=location)
