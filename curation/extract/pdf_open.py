"""Opening a PDF for extraction, refusing bad input with one line that names the file (and page)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from curation.core.errors import BenchsmithError
from curation.pymupdf_light import pymupdf

pymupdf.TOOLS.mupdf_display_errors(False)
pymupdf.TOOLS.mupdf_display_warnings(False)


class PdfError(BenchsmithError):
    """A PDF that cannot be extracted: missing, not a PDF, corrupt, encrypted, empty, unrenderable."""

    exit_code = 2


@dataclass
class OpenedPdf:
    path: Path
    doc: pymupdf.Document
    sha256: str


def open_pdf(path: Path) -> OpenedPdf:
    path = Path(path)
    if not path.is_file():
        raise PdfError(f"{path}: no such file")
    data = path.read_bytes()
    if not data.lstrip(b"\x00\t\n\r ").startswith(b"%PDF") and b"%PDF-" not in data[:1024]:
        raise PdfError(f"{path}: not a PDF (no %PDF header)")
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as error:  # MuPDF raises its own types for damaged files
        raise PdfError(f"{path}: corrupt PDF ({_reason(error)})") from None
    if doc.needs_pass or doc.is_encrypted:
        raise PdfError(f"{path}: encrypted PDF (a password is needed); decrypt it first, e.g. `qpdf --decrypt`")
    try:
        pages = doc.page_count
    except Exception as error:
        raise PdfError(f"{path}: corrupt PDF ({_reason(error)})") from None
    if pages == 0:
        raise PdfError(f"{path}: the PDF has no pages")
    return OpenedPdf(path, doc, hashlib.sha256(data).hexdigest())


def load_page(opened: OpenedPdf, index: int) -> pymupdf.Page:
    """A page; a failure names the file and the 1-based page."""
    try:
        return opened.doc.load_page(index)
    except Exception as error:
        raise page_error(opened, index, error) from None


def page_error(opened: OpenedPdf, index: int, error: Exception) -> PdfError:
    return PdfError(f"{opened.path}: page {index + 1}: cannot be read ({_reason(error)})")


def _reason(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0][:160] if text else type(error).__name__
