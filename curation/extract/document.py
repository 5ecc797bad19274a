"""Reading a whole PDF into one stream of lines and figures in reading order, page by page, with
the text layer where it is sound and OCR where it is not."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from curation.extract.figures import figure_labels, page_figures, region_of, render_crop
from curation.extract.furniture import drop_furniture, drop_furniture_figures
from curation.extract.glyph_pictures import GlyphReader, Placement, locate_glyph_pictures
from curation.extract.layout import Glyph, page_glyphs, page_lines
from curation.extract.lines import Figure, Line
from curation.extract.page_cache import page_drawings, page_image_info
from curation.extract.pdf_open import OpenedPdf, PdfError, load_page, page_error
from curation.extract.scan_figures import scan_figures
from curation.extract.tables import find_tables, tag_table_lines
from curation.extract.text_quality import text_layer_problem
from curation.pymupdf_light import pymupdf

ENGINES = ("auto", "pymupdf", "ocr", "mineru", "vlm")
GLYPH_WINDOW = 50  # pages whose glyph pictures are read together (their glyphs are held till then)


@dataclass
class ReadDocument:
    entries: list[Line | Figure]
    pages_without_text: list[int] = field(default_factory=list)
    ocr_pages: list[int] = field(default_factory=list)
    page_problems: dict[int, str] = field(default_factory=dict)
    furniture_dropped: int = 0
    furniture_figures_dropped: int = 0
    watermark_glyphs: int = 0
    figure_label_lines: int = 0
    warnings: list[str] = field(default_factory=list)


def read_document(opened: OpenedPdf, engine: str = "auto") -> ReadDocument:
    count = opened.doc.page_count
    pages_lines: list[list[Line]] = [[] for _ in range(count)]
    pages_figures: list[list[Figure]] = [[] for _ in range(count)]
    heights: list[float] = []
    result = ReadDocument([])
    reader = GlyphReader()
    for first in range(0, count, GLYPH_WINDOW):
        waiting: list[_TextPage] = []
        for index in range(first, min(first + GLYPH_WINDOW, count)):
            page = load_page(opened, index)
            with _page_errors(opened, index):
                text_page = _read_page(page, index, engine, result, pages_lines, pages_figures, heights)
                if text_page is not None:
                    reader.add(page, [(placement.rect, placement.digest) for placement in text_page.placements])
                    waiting.append(text_page)
        reader.start_reading()
        for text_page in sorted(waiting, key=lambda later: not reader.ready(later.placements)):  # while Tesseract reads
            with _page_errors(opened, text_page.index):
                _finish_text_page(text_page, reader, pages_lines, pages_figures, result)
    kept, result.furniture_dropped = drop_furniture(pages_lines, heights)
    kept_figures, result.furniture_figures_dropped = drop_furniture_figures(pages_figures, heights)
    _render_vector_figures(opened, kept_figures)
    for lines, figures in zip(kept, kept_figures, strict=True):
        result.entries += merge_in_reading_order(lines, figures)
    return result


@contextmanager
def _page_errors(opened: OpenedPdf, index: int) -> Iterator[None]:
    from curation.extract import ocr

    try:
        yield
    except (PdfError, ocr.OcrError):
        raise
    except Exception as error:  # MuPDF failing inside a damaged page's content
        raise page_error(opened, index, error) from None


def _render_vector_figures(opened: OpenedPdf, pages_figures: list[list[Figure]]) -> None:
    """Crops of the drawn figures, rendered only now that furniture is gone (`vector_figures`
    leaves them empty: a page-number frame on every page would cost a page render each)."""
    for figures in pages_figures:
        pending = [figure for figure in figures if not figure.png]
        if pending:
            page = load_page(opened, pending[0].page - 1)
            for figure in pending:
                figure.png = render_crop(page, pymupdf.Rect(figure.bbox))


@dataclass
class _TextPage:
    """A page read from its text layer, waiting for its glyph pictures' readings."""
    index: int
    page: pymupdf.Page
    glyphs: list[Glyph]
    placements: list[Placement]


def _read_page(page: pymupdf.Page, index: int, engine: str, result: ReadDocument, pages_lines: list[list[Line]],
               pages_figures: list[list[Figure]], heights: list[float]) -> _TextPage | None:
    """An OCR page read, or a text-layer page to finish once its glyph pictures are read."""
    from curation.extract import ocr

    number = index + 1
    heights.append(page.rect.height)
    glyphs = page_glyphs(page)
    result.watermark_glyphs += glyphs.dropped_watermark
    problem = "OCR requested" if engine == "ocr" else text_layer_problem(glyphs.glyphs)
    if problem is None:
        return _TextPage(index, page, glyphs.glyphs, locate_glyph_pictures(page, glyphs.glyphs))
    result.page_problems[number] = problem
    if problem != "OCR requested":
        result.pages_without_text.append(number)
    if engine == "pymupdf" or blank_page(page):
        return None
    if not ocr.available():
        result.warnings.append(f"page {number}: {problem}; OCR is not available ({ocr.MISSING_HINT})")
        return None
    lines, gutter_x = ocr.ocr_page_lines(page, number)
    result.ocr_pages.append(number)
    _keep_page(result, index, pages_lines, pages_figures, lines, scan_figures(page, number, gutter_x, lines), scanned=True)
    return None


def _finish_text_page(text_page: _TextPage, reader: GlyphReader, pages_lines: list[list[Line]],
                      pages_figures: list[list[Figure]], result: ReadDocument) -> None:
    page, number = text_page.page, text_page.index + 1
    pictures = reader.place(page, number, text_page.placements)
    glyphs = text_page.glyphs + pictures.glyphs
    lines, gutter = page_lines(page, number, glyphs)
    tag_table_lines(lines, find_tables(page, glyphs))
    gutter_xs = gutter.xs if gutter else None
    figures = page_figures(page, number, gutter_xs, lines, pictures.boxes)
    for figure in pictures.unread:
        figure.region = region_of(figure.bbox, gutter_xs)
    figures = sorted(figures + pictures.unread, key=lambda figure: (figure.bbox[1], figure.bbox[0]))
    _keep_page(result, text_page.index, pages_lines, pages_figures, lines, figures, scanned=False)


def _keep_page(result: ReadDocument, index: int, pages_lines: list[list[Line]], pages_figures: list[list[Figure]],
               lines: list[Line], figures: list[Figure], *, scanned: bool) -> None:
    """The page's lines and figures, less the lines that are labels inside a drawn figure (or, on a
    scan, inside any figure: OCR reads a picture's labels as junk)."""
    labels = {id(line) for figure in figures if scanned or figure.kind == "vector" for line in figure_labels(figure, lines)}
    result.figure_label_lines += len(labels)
    pages_lines[index] = [line for line in lines if id(line) not in labels]
    pages_figures[index] = figures


BLANK_DPI = 72
BLANK_DARK_SHARE = 0.0004  # share of dark pixels below which a page picture holds no text (a scan
# holding only a few lines has ~0.0015 at 72 dpi, a watermark with scanner dust ~0.00005)


def blank_page(page: pymupdf.Page) -> bool:
    """Nothing drawn at all, or only one page-sized near-uniform picture (a watermark or a blank
    scan): there is nothing to OCR, and Tesseract would spend seconds finding nothing."""
    images = page_image_info(page)
    if page_drawings(page) or len(images) > 1:
        return False
    if not images:
        return True
    rect = pymupdf.Rect(images[0]["bbox"]) & page.rect
    if rect.get_area() < 0.8 * page.rect.get_area():
        return False
    pixmap = page.get_pixmap(dpi=BLANK_DPI, colorspace=pymupdf.csGRAY, alpha=False)
    dark = int((np.frombuffer(pixmap.samples, dtype=np.uint8) < 128).sum())
    return dark < BLANK_DARK_SHARE * pixmap.width * pixmap.height


def merge_in_reading_order(lines: list[Line], figures: list[Figure]) -> list[Line | Figure]:
    """Put each figure right before the first line of its region that starts below the figure's top
    (after the region's last line when none does)."""
    if not figures:
        return list(lines)
    merged: list[Line | Figure] = list(lines)
    for figure in sorted(figures, key=lambda f: f.bbox[1]):
        position = None
        last_in_region = None
        for index, entry in enumerate(merged):
            if not isinstance(entry, Line):
                continue
            if entry.region == figure.region:
                last_in_region = index
                if entry.bbox[1] >= figure.bbox[1] - 1:
                    position = index
                    break
        if position is None:
            position = (last_in_region + 1) if last_in_region is not None else _full_width_slot(merged, figure)
        merged.insert(position, figure)
    return merged


def _full_width_slot(merged: list[Line | Figure], figure: Figure) -> int:
    for index, entry in enumerate(merged):
        if isinstance(entry, Line) and entry.bbox[1] >= figure.bbox[1]:
            return index
    return len(merged)
