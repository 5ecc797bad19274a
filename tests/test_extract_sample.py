"""Extraction of the project's own sample exam, checked against its ground truth."""

from __future__ import annotations

import pytest

from curation.core.workspace import init_workspace
from curation.extract.pipeline import ExtractOptions, extract_pdf

from .extract_truth import differences, load_truth


@pytest.fixture
def workspace(tmp_path):
    return init_workspace(tmp_path / "ws")


@pytest.mark.parametrize("name", ["sample.pdf", "interleaved.pdf"])
def test_every_question_option_answer_image_and_formula_recovered(sample_exam_dir, workspace, name):
    pdf = sample_exam_dir / name
    report = extract_pdf(pdf, workspace, ExtractOptions(exam="기상기사", session="sample-0"))
    truth = load_truth(pdf.with_suffix(".truth.jsonl"))
    got = {stored.item.source.number: stored for stored in workspace.store.iter_items()}
    assert sorted(got) == [item.source.number for item in truth]
    problems = [problem for item in truth for problem in differences(item, got[item.source.number].item)]
    assert problems == []
    assert report.questions == len(truth) and report.answers_merged == len(truth)
    short = [item.source.number for item in truth if not item.options]  # 단답형: a number or a word, with 배점
    assert report.numbering_gaps == [] and report.option_counts == {"0": len(short), "4": len(truth) - len(short)}
    assert report.short_answer == short and len(short) == 4
    assert any("1–4" in warning for warning in report.warnings)  # the cover's numbered instructions
    # rev 2 for the Korea-specific candidates: the tagging stage right after extraction
    assert all(stored.rev == (2 if stored.item.flags.korea_reasons else 1) and stored.item.status == "extracted"
               for stored in got.values())
    first = next(iter(got.values()))
    assert [revision.stage for revision in workspace.store.history(first.item.id)] == ["extract"]
    refs = {ref for stored in got.values() for ref in stored.item.blob_refs()}
    assert refs and all(workspace.blobs.exists(ref) for ref in refs)


def test_other_seeds_also_match(tmp_path, workspace):
    from curation.sample_exam import write_sample_exam

    pdf, truth_path = write_sample_exam(tmp_path / "seed3.pdf", seed=3)
    extract_pdf(pdf, workspace, ExtractOptions(exam="기상기사", session="sample-3"))
    got = {stored.item.source.number: stored.item for stored in workspace.store.iter_items()}
    assert [p for item in load_truth(truth_path) for p in differences(item, got[item.source.number])] == []


def test_same_pdf_twice_does_not_duplicate_and_force_rewrites(sample_exam_dir, workspace):
    pdf = sample_exam_dir / "sample.pdf"
    questions = len(load_truth(pdf.with_suffix(".truth.jsonl")))
    first = extract_pdf(pdf, workspace, ExtractOptions(exam="기상기사"))
    again = extract_pdf(pdf, workspace, ExtractOptions(exam="기상기사"))
    assert first.created == questions and again.created == 0 and again.skipped and "--force" in again.skipped
    assert sum(1 for _ in workspace.store.iter_items()) == questions
    forced = extract_pdf(pdf, workspace, ExtractOptions(exam="기상기사 2024", force=True))
    assert forced.updated == questions and sum(1 for _ in workspace.store.iter_items()) == questions
    item_id = next(workspace.store.iter_items()).item.id
    assert [revision.rev for revision in workspace.store.history(item_id)] == [1, 2]
