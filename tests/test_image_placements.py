"""Which embedded picture each placement on a page shows: matched by size, by the order the page
draws them, or by PyMuPDF's pixel hashes; always what PyMuPDF's hashing says. And a page with no
picture is spared the search, while inline pictures and pictures inside forms are still found."""

from __future__ import annotations

import io

import numpy as np
import pymupdf
import pytest
from PIL import Image

from curation.extract.figures import _with_xrefs
from curation.extract.page_cache import images_in_drawing_order, page_image_info
from curation.sample_exam import write_sample_exam


def png(shade: int, size: tuple[int, int] = (40, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.full(size[::-1], shade, dtype=np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


def agrees_with_pymupdf(page: pymupdf.Page) -> None:
    infos = page_image_info(page)
    assert infos == page.get_image_info()
    assert [info["xref"] for info in _with_xrefs(page, infos)] == [info["xref"] for info in page.get_image_info(xrefs=True)]


@pytest.mark.parametrize("variant", [None, "glyphs", "three-column"])
def test_sample_exam_pages(tmp_path, variant):
    pdf, _ = write_sample_exam(tmp_path / "exam.pdf", variant=variant)
    for page in pymupdf.open(pdf):
        agrees_with_pymupdf(page)


def test_same_size_pictures_drawn_in_another_order_than_listed(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    for shade, y in ((30, 100), (120, 200), (220, 300)):
        page.insert_image(pymupdf.Rect(100, y, 140, y + 30), stream=png(shade))
    page.insert_image(pymupdf.Rect(300, 100, 340, 130), stream=png(30))  # the first picture again
    doc.save(tmp_path / "same.pdf")
    page = pymupdf.open(tmp_path / "same.pdf")[0]
    assert images_in_drawing_order(page) is not None
    agrees_with_pymupdf(page)


def test_inline_pictures_and_forms_are_found(tmp_path):
    source = pymupdf.open()
    source.new_page().insert_image(pymupdf.Rect(0, 0, 40, 30), stream=png(90))
    doc = pymupdf.open()
    doc.new_page().show_pdf_page(pymupdf.Rect(100, 100, 300, 300), source, 0)  # the picture, inside a form
    inline = doc.new_page()
    xref = doc.get_new_xref()
    doc.update_object(xref, "<<>>")
    doc.update_stream(xref, b"q 40 0 0 30 100 500 cm BI /W 2 /H 2 /CS /G /BPC 8 ID \x00\xff\xff\x00 EI Q")
    inline.set_contents(xref)
    doc.save(tmp_path / "hidden.pdf")
    in_form, inline_page = pymupdf.open(tmp_path / "hidden.pdf")
    assert images_in_drawing_order(in_form) is None and images_in_drawing_order(inline_page) is None
    assert len(page_image_info(in_form)) == 1 and len(page_image_info(inline_page)) == 1
    agrees_with_pymupdf(in_form)


def test_page_without_pictures_has_none(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "1. no pictures here ① BI EI")  # the operator's letters as text are not a picture
    page.draw_rect(pymupdf.Rect(50, 50, 200, 100))
    doc.save(tmp_path / "text.pdf")
    page = pymupdf.open(tmp_path / "text.pdf")[0]
    assert page_image_info(page) == [] == page.get_image_info()
