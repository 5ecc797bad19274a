"""Broken text layers are detected (private-use glyphs, garbled Latin-1, no text) and sent to OCR."""

from __future__ import annotations

import pymupdf
import pytest

from curation.extract import ocr
from curation.extract.layout import page_glyphs
from curation.extract.pipeline import ExtractOptions, extract_items
from curation.extract.text_quality import text_layer_problem


def _without_unicode_maps(source, target):
    """The same PDF with every font's ToUnicode map removed: glyphs no longer map to text."""
    doc = pymupdf.open(source)
    for xref in range(1, doc.xref_length()):
        if doc.xref_get_key(xref, "ToUnicode")[0] == "xref":
            doc.xref_set_key(xref, "ToUnicode", "null")
    doc.save(target)
    return target


def test_detection_of_each_kind_of_broken_text(sample_exam_dir, tmp_path):
    broken = pymupdf.open(_without_unicode_maps(sample_exam_dir / "sample.pdf", tmp_path / "broken.pdf"))
    assert text_layer_problem(page_glyphs(broken[1]).glyphs).startswith("private-use glyphs")
    garbled = pymupdf.open()
    page = garbled.new_page()
    for row in range(20):  # what CP949 text read as Latin-1 looks like
        page.insert_text((50, 60 + 20 * row), "±â»ó°üÃø ¹®Á¦ ÇØ¼³ Á¤´ä", fontname="helv", fontsize=11)
    assert text_layer_problem(page_glyphs(page).glyphs).startswith("garbled text")
    assert text_layer_problem(page_glyphs(garbled.new_page()).glyphs) == "no text layer"
    english = pymupdf.open(sample_exam_dir / "sample.pdf")  # real text is left alone
    assert text_layer_problem(page_glyphs(english[1]).glyphs) is None


def test_broken_pages_are_reported_and_not_read_as_text(sample_exam_dir, tmp_path):
    pdf = _without_unicode_maps(sample_exam_dir / "sample.pdf", tmp_path / "broken.pdf")
    extraction = extract_items(pdf, ExtractOptions(engine="pymupdf"))
    assert extraction.items == [] and extraction.report.pages_without_text == [1, 2, 3, 4]


@pytest.mark.ocr
@pytest.mark.skipif(not ocr.available(), reason="tesseract with Korean data is not installed")
def test_broken_pages_go_to_ocr_and_are_marked_for_review(sample_exam_dir, tmp_path):
    pdf = _without_unicode_maps(sample_exam_dir / "sample.pdf", tmp_path / "broken.pdf")
    extraction = extract_items(pdf, ExtractOptions())
    assert extraction.report.ocr_pages == [1, 2, 3, 4]
    assert len(extraction.items) >= 23
    assert all(any("private-use glyphs" in reason for reason in item.flags.review_reasons) for item in extraction.items)
