import json

import pymupdf

from curation.core.item import parse_item
from curation.sample_exam import blobs_dir_for, write_sample_exam
from curation.sample_exam.content import SHORT_ANSWERS, SUBJECTS
from scoring.keys import ChoiceKey, NumericKey, TextKey

# the questions the content declares for the default layout (no passage or table variant): each
# subject's multiple-choice questions, then the short-answer ones
CHOICE_QUESTIONS = sum(len(subject.questions) for subject in SUBJECTS)
QUESTIONS = CHOICE_QUESTIONS + len(SHORT_ANSWERS)


def _truth(path):
    return [parse_item(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()]


def test_same_arguments_give_the_same_bytes(tmp_path, sample_exam_dir):
    pdf, truth = write_sample_exam(tmp_path / "again.pdf")
    assert pdf.read_bytes() == (sample_exam_dir / "sample.pdf").read_bytes()
    assert truth.read_text(encoding="utf-8").replace("again.pdf", "sample.pdf") == \
        (sample_exam_dir / "sample.truth.jsonl").read_text(encoding="utf-8")
    other, _ = write_sample_exam(tmp_path / "seed1.pdf", seed=1)
    assert other.read_bytes() != pdf.read_bytes()


def test_truth_is_valid_items_covering_every_feature(sample_exam_dir):
    items = _truth(sample_exam_dir / "sample.truth.jsonl")
    assert (CHOICE_QUESTIONS, QUESTIONS) == (26, 30) and len(items) == QUESTIONS
    assert [item.source.number for item in items] == list(range(1, len(items) + 1))
    choice, short = items[:CHOICE_QUESTIONS], items[CHOICE_QUESTIONS:]
    assert all(len(item.options) == 4 and item.answer in [ChoiceKey(options=[n]) for n in range(1, 5)] for item in choice)
    # 단답형: three numbers and a word, no options; every question has its 배점
    assert [type(item.answer) for item in short] == [NumericKey, NumericKey, NumericKey, TextKey]
    assert all(not item.options for item in short) and short[0].answer == NumericKey(value="28.8")
    assert all(item.points in (2, 3, 4) for item in items) and {item.points for item in short} <= {3, 4}
    assert len({item.source.subject for item in items}) == 5
    assert any("〈보기〉\nㄱ." in item.stem for item in items)
    assert any("^{-5}" in item.stem for item in items) and any("_{d}" in item.stem for item in items)
    kinds = {image.kind for item in items for image in item.images}
    assert kinds == {"raster", "vector", "formula"}
    assert any(all(option.image is not None for option in item.options) for item in items)
    blob_dir = blobs_dir_for(sample_exam_dir / "sample.pdf")
    assert all((blob_dir / ref).is_file() for item in items for ref in item.blob_refs())
    assert any(item.flags.review_reasons for item in items)


def test_text_layer_reads_back_hangul_and_circled_digits(sample_exam_dir):
    doc = pymupdf.open(sample_exam_dir / "sample.pdf")
    text = "".join(page.get_text() for page in doc)
    items = _truth(sample_exam_dir / "sample.truth.jsonl")
    assert all(marker in text for marker in "①②③④")
    assert items[0].stem.split()[0] in text and "1과목 기상학개론" in text
    key_page = doc[-1].get_text()
    assert "정답표" in key_page and "배점" in key_page and "28.8" in key_page and "안개" in key_page
    assert "단답형" in text


def test_interleaved_stream_looks_the_same_but_is_ordered_differently(sample_exam_dir):
    normal = pymupdf.open(sample_exam_dir / "sample.pdf")
    mixed = pymupdf.open(sample_exam_dir / "interleaved.pdf")
    for a, b in zip(normal, mixed, strict=True):
        left, right = a.get_pixmap(dpi=40).samples, b.get_pixmap(dpi=40).samples
        differing = sum(1 for p, q in zip(left, right, strict=True) if abs(p - q) > 8)
        assert differing < len(left) / 1000  # anti-aliasing where glyphs touch may differ
    assert normal[0].get_text() != mixed[0].get_text()  # stream order shows through plain extraction


def test_scanned_variant_has_no_text_layer(tmp_path):
    pdf, truth = write_sample_exam(tmp_path / "scan.pdf", scanned=True)
    doc = pymupdf.open(pdf)
    assert all(not page.get_text().strip() for page in doc)
    assert all(len(page.get_images()) == 1 for page in doc)
    assert len(_truth(truth)) == QUESTIONS
