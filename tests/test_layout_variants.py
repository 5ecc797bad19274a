"""Each layout variant of the sample exam (numbering forms, a shared passage, a table …) extracts
to its own ground truth exactly, and every formula in it parses."""

from __future__ import annotations

import pytest

from curation.extract.latex_check import text_problems
from curation.extract.pipeline import ExtractOptions, extract_items
from curation.sample_exam import write_sample_exam
from curation.sample_exam.variants import VARIANTS, variant_named

from .extract_truth import differences, load_truth

# glyphs: test_glyph_pictures.py; broken-font (no text to read): test_vlm_engine.py
TEXT_LAYER_VARIANTS = sorted(name for name in VARIANTS if name not in ("glyphs", "broken-font"))


@pytest.fixture(scope="module", params=TEXT_LAYER_VARIANTS)
def variant(request, tmp_path_factory):
    pdf, truth = write_sample_exam(tmp_path_factory.mktemp(request.param) / f"{request.param}.pdf", variant=request.param)
    return request.param, pdf, load_truth(truth), extract_items(pdf, ExtractOptions(exam="기상기사", session="sample-0"))


def test_variant_extracts_to_its_ground_truth(variant):
    name, _, truth, extraction = variant
    got = {item.source.number: item for item in extraction.items}
    assert sorted(got) == [item.source.number for item in truth]
    assert [problem for item in truth for problem in differences(item, got[item.source.number])] == []
    fields = [text for item in truth + extraction.items for text in [item.stem] + [o.text for o in item.options]]
    assert [problem for text in fields for problem in text_problems(text)] == []


def test_numbering_forms_are_printed_as_named(variant):
    name, pdf, truth, _ = variant
    import pymupdf

    text = "".join(page.get_text() for page in pymupdf.open(pdf))
    numbering = variant_named(name).numbering
    assert all(numbering.format(n=item.source.number).strip() in text for item in truth)


def test_questions_sharing_a_passage_share_its_text_and_group(variant):
    name, _, truth, extraction = variant
    if not variant_named(name).passage:
        pytest.skip("no passage in this variant")
    grouped = [item for item in extraction.items if "passage_group" in item.extra]
    assert len(grouped) == 2 and len({item.extra["passage_group"] for item in grouped}) == 1
    passage = grouped[0].stem.split("\n")[0]
    assert "㉠" in passage and "[A]" in passage and "[B]" in passage
    assert all(item.stem.startswith(passage + "\n") for item in grouped)


def test_unknown_variant_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no sample-exam variant 'nope'"):
        write_sample_exam(tmp_path / "x.pdf", variant="nope")


def test_cli_writes_a_named_variant_and_refuses_an_unknown_one(tmp_path):
    from .conftest import run_cli

    done = run_cli("sample-exam", str(tmp_path / "passage.pdf"), "--variant", "passage")
    assert done.returncode == 0, done.stderr
    assert len(load_truth(tmp_path / "passage.truth.jsonl")) == 28
    refused = run_cli("sample-exam", str(tmp_path / "nope.pdf"), "--variant", "nope")
    assert refused.returncode == 1 and "no sample-exam variant 'nope'" in refused.stderr + refused.stdout
    assert len((refused.stderr + refused.stdout).strip().splitlines()) == 1
    assert not (tmp_path / "nope.pdf").exists()
