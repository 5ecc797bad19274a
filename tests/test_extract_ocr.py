"""Scanned pages (no text layer) go through Tesseract; option markers are found by position."""

from __future__ import annotations

import pytest

from curation.extract import ocr
from curation.extract.pipeline import ExtractOptions, extract_items
from curation.sample_exam import write_sample_exam

from .extract_truth import load_truth


@pytest.fixture(scope="module")
def scanned_exam(tmp_path_factory):
    pdf, truth = write_sample_exam(tmp_path_factory.mktemp("scan") / "scanned.pdf", scanned=True)
    return pdf, load_truth(truth)


def test_without_ocr_the_pages_are_reported_not_guessed(scanned_exam):
    pdf, truth = scanned_exam
    extraction = extract_items(pdf, ExtractOptions(engine="pymupdf"))
    assert extraction.items == []
    assert extraction.report.pages_without_text == [1, 2, 3, 4]


@pytest.mark.ocr
@pytest.mark.skipif(not ocr.available(), reason="tesseract with Korean data is not installed")
def test_scanned_sample_exam_questions_and_options_recovered(scanned_exam):
    pdf, truth = scanned_exam
    extraction = extract_items(pdf, ExtractOptions(exam="기상기사"))
    got = {item.source.number: item for item in extraction.items}
    complete = [item.source.number for item in truth
                if item.source.number in got and len(got[item.source.number].options) == len(item.options)]
    assert len(complete) >= 0.9 * len(truth), f"complete: {complete}"
    assert extraction.report.ocr_pages == [1, 2, 3, 4]
    assert all(any("OCR" in reason for reason in item.flags.review_reasons) for item in extraction.items)
    # Hangul comes through: most stems share their first word with the truth
    same_start = sum(1 for item in truth if item.source.number in got
                     and got[item.source.number].stem.split()[0] == item.stem.split()[0])
    assert same_start >= len(truth) // 2
