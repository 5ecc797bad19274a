"""Answer keys from every source: in the exam PDF, a separate PDF (text or outlines), CSV, JSON."""

from __future__ import annotations

import json

import pymupdf
import pytest

from curation.answers import CIRCLED
from curation.extract import ocr
from curation.extract.answer_keys import AnswerKeyError
from curation.extract.key_files import read_key_file, read_key_sheet_file
from curation.extract.pipeline import ExtractOptions, extract_items

from .extract_truth import load_truth


@pytest.fixture
def split_sample(sample_exam_dir, tmp_path):
    """The sample exam without its key page, and the key page as a PDF of its own."""
    source = pymupdf.open(sample_exam_dir / "sample.pdf")
    questions, key = pymupdf.open(), pymupdf.open()
    questions.insert_pdf(source, from_page=0, to_page=source.page_count - 2)
    key.insert_pdf(source, from_page=source.page_count - 1, to_page=source.page_count - 1)
    questions.save(tmp_path / "questions.pdf")
    key.save(tmp_path / "key.pdf")
    truth = {item.source.number: item.answer_list()[0] for item in load_truth(sample_exam_dir / "sample.truth.jsonl")
             if item.answer_list()}  # the option numbers of the multiple-choice questions
    return tmp_path / "questions.pdf", tmp_path / "key.pdf", truth


def test_key_pdf_with_text_layer(split_sample, sample_exam_dir):
    _, key_pdf, truth = split_sample
    items = load_truth(sample_exam_dir / "sample.truth.jsonl")
    short = {item.source.number: item.answer.text() for item in items if not item.options}
    assert short == {27: "28.8", 28: "7", 29: "60", 30: "안개"}
    assert read_key_file(key_pdf) == truth | short  # option numbers; a short answer's number or word as written
    sheet = read_key_sheet_file(key_pdf)  # every key with its format and 배점
    keys = {entry.number: entry for entry in sheet.forms[0].sections[0].keys}
    assert {n: (entry.format, entry.points) for n, entry in keys.items()} == {
        item.source.number: ({"choice": "choice", "numeric": "numeric", "text": "text"}[item.answer.format], item.points)
        for item in items}


def test_csv_with_circled_digits_and_json_with_plain_digits(split_sample, tmp_path):
    questions, _, truth = split_sample
    csv_key = tmp_path / "key.csv"
    csv_key.write_text("번호,정답\n" + "".join(f"{n},{CIRCLED[a - 1]}\n" for n, a in truth.items()), encoding="utf-8")
    json_key = tmp_path / "key.json"
    json_key.write_text(json.dumps({"answers": {str(n): a for n, a in truth.items()}}), encoding="utf-8")
    assert read_key_file(csv_key) == truth == read_key_file(json_key)
    extraction = extract_items(questions, ExtractOptions(), key=read_key_file(csv_key))
    assert {item.source.number: item.answer_list()[0] for item in extraction.items if item.options} == truth
    assert all(item.answer_format == "choice" for item in extraction.items if item.answer is not None)


def test_missing_and_extra_keys_are_reported(split_sample, tmp_path):
    questions, _, truth = split_sample
    beyond = max(truth) + 10  # no such question: the paper ends with its short-answer questions
    partial = {n: a for n, a in truth.items() if n != 5} | {beyond: 1}
    extraction = extract_items(questions, ExtractOptions(), key=partial)
    assert extraction.report.keys_without_question == [beyond]
    short = [item.source.number for item in extraction.items if not item.options]  # the key file has none of them
    assert extraction.report.questions_without_key == [5, *short] and len(short) == 4
    assert next(item for item in extraction.items if item.source.number == 5).answer is None


def test_bad_key_files_fail_with_one_line(tmp_path):
    bad = tmp_path / "key.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(AnswerKeyError, match="key.json"):
        read_key_file(bad)
    odd = tmp_path / "key.csv"
    odd.write_text("번호,정답\n1,⑦⑦x\n", encoding="utf-8")
    with pytest.raises(AnswerKeyError, match="row 2"):
        read_key_file(odd)
    with pytest.raises(AnswerKeyError, match="no such"):
        read_key_file(tmp_path / "missing.csv")


@pytest.mark.parametrize("number", [None, [1], {"n": 1}])
def test_json_key_row_whose_number_is_not_a_number_fails_with_one_line(tmp_path, number):
    key = tmp_path / "key.json"
    key.write_text(json.dumps([{"number": 1, "answer": 2}, {"number": number, "answer": 3}]), encoding="utf-8")
    with pytest.raises(AnswerKeyError, match="key.json: question number .* is not a number"):
        read_key_file(key)


@pytest.mark.realdata
@pytest.mark.ocr
@pytest.mark.skipif(not ocr.available(), reason="tesseract with Korean data is not installed")
def test_csat_key_drawn_as_outlines_is_read_by_ocr(realdata):
    gold = json.loads((realdata / "ksat2025_english" / "english_answers_gold.json").read_text(encoding="utf-8"))
    gold = {int(number): answer for number, answer in gold["answers"].items()}
    key = read_key_file(realdata / "ksat2025_english" / "2025_english_answerkey.pdf")
    assert sum(1 for number, answer in gold.items() if key.get(number) == answer) >= 44
    booklet = realdata / "ksat2025_english" / "2025_english_questions_odd.pdf"
    extraction = extract_items(booklet, ExtractOptions(), key=key)
    assert extraction.report.answers_merged == 45 and extraction.report.questions_without_key == []


def _picture_key_pdf(path, answers: dict[int, int]):
    """A key table (번호 | 정답 column pairs, plain digit answers) that exists only as a picture."""
    import pymupdf

    font = pymupdf.Font("korea")
    drawn = pymupdf.open()
    page = drawn.new_page(width=595, height=842)
    pairs, rows = 3, (len(answers) + 2) // 3
    left, top, cell, height = 60.0, 80.0, 78.0, 24.0
    writer = pymupdf.TextWriter(page.rect)
    for pair in range(pairs):
        for row in range(rows + 1):
            number = pair * rows + row
            texts = ("번호", "정답") if row == 0 else (str(number), str(answers[number])) if number in answers else ("", "")
            for offset, text in enumerate(texts):
                writer.append((left + (2 * pair + offset) * cell + 30, top + row * height + 17), text, font=font, fontsize=12)
    writer.write_text(page)
    for row in range(rows + 2):
        page.draw_line((left, top + row * height), (left + 2 * pairs * cell, top + row * height), width=1.2)
    for column in range(2 * pairs + 1):
        page.draw_line((left + column * cell, top), (left + column * cell, top + (rows + 1) * height), width=1.2)
    picture = pymupdf.open()
    scan = picture.new_page(width=595, height=842)
    scan.insert_image(scan.rect, pixmap=page.get_pixmap(dpi=200, colorspace=pymupdf.csGRAY))
    picture.save(path)
    return path


@pytest.mark.ocr
@pytest.mark.skipif(not ocr.available(), reason="tesseract with Korean data is not installed")
def test_outline_only_key_with_plain_digit_answers(tmp_path):
    import random

    answers = {number: random.Random(number).randint(1, 4) for number in range(1, 25)}
    key = read_key_file(_picture_key_pdf(tmp_path / "digits-key.pdf", answers))
    assert sum(1 for number, answer in answers.items() if key.get(number) == answer) >= 23
    assert set(key) <= set(answers)
