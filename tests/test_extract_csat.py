"""The official 2025 CSAT English booklet (real, third-party): every question with its five options."""

from __future__ import annotations

import pytest

from curation.extract.pipeline import ExtractOptions, extract_items

pytestmark = pytest.mark.realdata


def test_all_45_questions_with_five_options(realdata):
    booklet = realdata / "ksat2025_english" / "2025_english_questions_odd.pdf"
    extraction = extract_items(booklet, ExtractOptions(exam="2025 수능 영어"))
    numbers = [item.source.number for item in extraction.items]
    assert numbers == list(range(1, 46))
    assert [len(item.options) for item in extraction.items] == [5] * 45
    assert extraction.report.numbering_gaps == []
    listening = extraction.items[:17]
    assert all(item.stem and "고르시오" in item.stem for item in listening[:15])
    # question 4's options are numbered labels inside its picture: kept with the picture, flagged
    assert extraction.items[3].images and extraction.items[3].flags.review_reasons
    # the group instruction [41～42] reaches both questions
    assert extraction.items[40].stem.startswith("[41～42]") and extraction.items[41].stem.startswith("[41～42]")
    assert all(option.text.strip() for item in extraction.items for option in item.options)


def test_only_questions_with_pictures_carry_images(realdata):
    """The booklet prints pictures for questions 4 (listening), 18 (a letter), 25 (a chart), 27 and
    28 (notices). The frame round each page's number ("1/8") is furniture, not a picture."""
    booklet = realdata / "ksat2025_english" / "2025_english_questions_odd.pdf"
    extraction = extract_items(booklet, ExtractOptions(exam="2025 수능 영어"))
    assert [item.source.number for item in extraction.items if item.images] == [4, 18, 25, 27, 28]
    assert [item.source.number for item in extraction.items if item.multimodal] == [4, 18, 25, 27, 28]
    footer = 0.9 * 1191  # the booklet's pages are 1191 pt high
    assert all(image.provenance.bbox[1] < footer for item in extraction.items for image in item.images)
