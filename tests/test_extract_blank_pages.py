"""A page whose only content is one page-sized near-uniform picture (a watermark, a blank scan)
is blank: it is reported as a page without text and never sent to OCR."""

from __future__ import annotations

import io

import pymupdf
from PIL import Image, ImageDraw

from curation.extract.document import blank_page
from curation.extract.pipeline import ExtractOptions, extract_items


def _picture(text_gray: int, lines: int) -> bytes:
    """A 150-dpi A4 picture with `lines` rows of text in gray level `text_gray` on white."""
    image = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(image)
    for row in range(lines):
        for column in range(30):
            draw.rectangle([100 + 35 * column, 150 + 40 * row, 125 + 35 * column, 175 + 40 * row], fill=text_gray)
    for speck in range(40):  # scanner dust: a few dark pixels on every page
        x, y = 97 * speck % 1200 + 20, 331 * speck % 1700 + 20
        draw.rectangle([x, y, x + 2, y + 2], fill=60)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _pdf(path, *pictures: bytes):
    doc = pymupdf.open()
    for png in pictures:
        page = doc.new_page(width=595, height=842)
        page.insert_image(page.rect, stream=png)
    doc.save(path)
    return path


def test_watermark_and_blank_scans_are_blank_but_a_scanned_text_page_is_not(tmp_path):
    doc = pymupdf.open(_pdf(tmp_path / "pages.pdf", _picture(225, 6), _picture(255, 0), _picture(20, 30), _picture(20, 1)))
    assert [blank_page(page) for page in doc] == [True, True, False, False]  # one line of text is not blank


def test_a_small_picture_or_a_drawing_is_not_a_blank_page(tmp_path):
    doc = pymupdf.open()
    small = doc.new_page(width=595, height=842)
    small.insert_image(pymupdf.Rect(100, 100, 300, 300), stream=_picture(255, 0))
    drawn = doc.new_page(width=595, height=842)
    drawn.insert_image(drawn.rect, stream=_picture(255, 0))
    drawn.draw_line((100, 100), (400, 100))
    assert [blank_page(page) for page in doc] == [False, False]


def test_watermark_pages_are_reported_without_ocr(tmp_path):
    pdf = _pdf(tmp_path / "watermarks.pdf", _picture(225, 6), _picture(240, 20))
    extraction = extract_items(pdf, ExtractOptions())
    assert extraction.items == []
    assert extraction.report.pages_without_text == [1, 2] and extraction.report.ocr_pages == []
