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


@pytest.fixture(scope="module")
def scanned_extraction(scanned_exam):
    return extract_items(scanned_exam[0], ExtractOptions(exam="기상기사"))


def test_without_ocr_the_pages_are_reported_not_guessed(scanned_exam):
    pdf, truth = scanned_exam
    extraction = extract_items(pdf, ExtractOptions(engine="pymupdf"))
    assert extraction.items == []
    assert extraction.report.pages_without_text == [1, 2, 3, 4]


@pytest.mark.ocr
@pytest.mark.skipif(not ocr.available(), reason="tesseract with Korean data is not installed")
def test_scanned_sample_exam_questions_and_options_recovered(scanned_exam, scanned_extraction):
    pdf, truth = scanned_exam
    extraction = scanned_extraction
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


@pytest.mark.ocr
@pytest.mark.skipif(not ocr.available(), reason="tesseract with Korean data is not installed")
def test_image_options_on_a_scanned_page_are_cropped(scanned_exam, scanned_extraction):
    pdf, truth = scanned_exam
    got = {item.source.number: item for item in scanned_extraction.items}
    image_questions = [item for item in truth if item.options and all(option.image for option in item.options)]
    assert image_questions
    for item in image_questions:
        options = got[item.source.number].options
        assert len(options) == len(item.options)
        for expected, option in zip(item.options, options, strict=True):
            assert option.image is not None and option.text == ""
            x0, y0, x1, y1 = option.image.provenance.bbox
            ex0, ey0, ex1, ey1 = expected.image.provenance.bbox
            assert x0 <= ex0 + 1 and y0 <= ey0 + 1 and x1 >= ex1 - 1 and y1 >= ey1 - 1  # the crop holds the picture


def _overlap_share(a: list[float], b: list[float]) -> float:
    """Intersection over union of two boxes."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


@pytest.mark.ocr
@pytest.mark.skipif(not ocr.available(), reason="tesseract with Korean data is not installed")
def test_question_figures_on_a_scanned_page_are_cropped(scanned_exam, scanned_extraction):
    pdf, truth = scanned_exam
    got = {item.source.number: item for item in scanned_extraction.items}
    pictured = {item.source.number: [image for image in item.images if image.kind != "formula"] for item in truth}
    assert sum(1 for images in pictured.values() if images) >= 2
    for number, expected in pictured.items():
        found = got[number].images if number in got else []
        if not expected:
            assert found == [], f"question {number}: no figure on the paper, {len(found)} cropped"
            continue
        assert len(found) == len(expected), f"question {number}"
        for want, image in zip(expected, found, strict=True):
            assert image.provenance.page == want.provenance.page
            assert _overlap_share(image.provenance.bbox, want.provenance.bbox) >= 0.6, (number, image.provenance.bbox)
            assert image.blob in scanned_extraction.blobs
    # what OCR reads off a drawing ("! A", "^") is the figure's, not the stem's: the stem ends as on the paper
    for item in truth:
        if pictured[item.source.number]:
            assert got[item.source.number].stem.split()[-1] == item.stem.split()[-1], got[item.source.number].stem


@pytest.mark.ocr
@pytest.mark.skipif(not ocr.available(), reason="tesseract with Korean data is not installed")
def test_hangul_words_are_mostly_not_cut_into_syllables(scanned_exam, scanned_extraction):
    """Tesseract cuts Korean words into syllables ("대 류 권 에 서"): the wider word gap between two
    Hangul words joins most cuts back. Counted against the truth, field by field: spaces the paper
    does not have, per character of the paper (0.150 with one gap for all words)."""
    pdf, truth = scanned_exam
    got = {item.source.number: item for item in scanned_extraction.items}
    extra = characters = 0
    for item in truth:
        if item.source.number not in got:
            continue
        found = got[item.source.number]
        for expected, read in zip([item.stem] + [o.text for o in item.options],
                                  [found.stem] + [o.text for o in found.options], strict=False):
            extra += max(0, read.count(" ") - expected.count(" "))
            characters += len(expected)
    assert extra / characters < 0.12
