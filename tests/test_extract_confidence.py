"""Every extracted item carries its extraction confidence: the signals seen and a score from them."""

from __future__ import annotations

import pydantic
import pytest

from curation.extract.confidence import EXTRA_KEY, PENALTY, confidence, read_confidence
from curation.extract.latex_check import repair
from curation.extract.pipeline import ExtractOptions, extract_items


def test_score_is_one_minus_the_penalties_and_never_below_zero():
    assert confidence(set()).score == 1.0
    assert confidence({"ocr", "latex_repaired"}).score == pytest.approx(1 - PENALTY["ocr"] - PENALTY["latex_repaired"])
    assert confidence(set(PENALTY)).score == 0.0
    assert confidence({"vlm", "ocr"}).signals == ["ocr", "vlm"]


def test_stored_confidence_is_validated_on_read():
    assert read_confidence({}) is None
    assert read_confidence({EXTRA_KEY: {"version": 1, "score": 0.7, "signals": ["ocr"]}}).signals == ["ocr"]
    with pytest.raises(pydantic.ValidationError):
        read_confidence({EXTRA_KEY: {"version": 1, "score": 1.5, "signals": []}})
    with pytest.raises(pydantic.ValidationError):
        read_confidence({EXTRA_KEY: {"version": 1, "score": 0.5, "signals": ["guess"]}})


def test_sample_exam_items_carry_signals_that_match_their_review_reasons(sample_exam_dir):
    items = extract_items(sample_exam_dir / "sample.pdf", ExtractOptions()).items
    for item in items:
        stored = read_confidence(item.extra)
        assert stored is not None
        expected = {"formula_image"} if any(image.kind == "formula" for image in item.images) else set()
        assert set(stored.signals) == expected and stored.score == confidence(expected).score
    assert any(read_confidence(item.extra).signals for item in items)


def test_a_formula_that_does_not_parse_is_kept_as_plain_text_and_flagged():
    assert repair(r"[CaMg(\(\mathrm{CO_{3}})_{2}\)]") == ("[CaMg(CO_3)_2]", True)
    assert repair(r"\(x^{2}\) 와 \(a^{\)") == (r"\(x^{2}\) 와 a^", True)
    assert repair(r"\(x^{2}\)") == (r"\(x^{2}\)", False)
