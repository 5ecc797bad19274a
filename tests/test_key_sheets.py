"""Answer-key files read on their own (`benchsmith keys read`): forms, sections, formats, answers and
배점, from a generated CSAT-math-shaped table (text layer, outlines, scan) and the real CSAT keys;
`extract --answer-key` with electives (`--section`) and short-answer questions."""

from __future__ import annotations

import json

import pymupdf
import pytest

from curation.extract import ocr
from curation.extract.key_files import read_key_sheet_file
from curation.extract.key_sheet import AnswerKeyError
from curation.extract.pipeline import ExtractOptions, extract_items, load_answer_key
from curation.sample_exam.key_table import key_truth, write_booklet, write_key_table

from .conftest import run_cli

needs_ocr = pytest.mark.skipif(not ocr.available(), reason="tesseract with Korean data is not installed")


@pytest.fixture(scope="module")
def key_tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("key-tables")
    return {render: write_key_table(folder / f"key-{render}.pdf", seed=3, render=render)[0]
            for render in ("text", "outlines", "scan")}


def test_generated_key_table_truth_has_the_csat_math_shape():
    truth = key_truth(3)
    assert [form["form"] for form in truth["forms"]] == ["홀수", "짝수"]
    for form in truth["forms"]:
        common, *electives = form["sections"]
        assert common["name"] == "공통 과목" and [s["name"] for s in electives] == ["확률과 통계", "미적분"]
        assert [k["number"] for k in common["keys"]] == list(range(1, 23))
        assert {k["number"] for k in common["keys"] if k["format"] == "numeric"} == set(range(16, 23))
        for elective in electives:
            assert [k["number"] for k in elective["keys"]] == list(range(23, 31))
            assert {k["number"] for k in elective["keys"] if k["format"] == "numeric"} == {29, 30}
        keys = [k for s in form["sections"] for k in s["keys"]]
        assert all(k["points"] in (2, 3, 4) for k in keys)
        assert all(0 <= int(k["answer"]) <= 999 and isinstance(k["answer"], str) for k in keys if k["format"] == "numeric")
        assert all(1 <= k["answer"] <= 5 for k in keys if k["format"] == "choice")


def test_keys_read_returns_exactly_the_generated_keys_from_the_text_layer(key_tables):
    done = run_cli("keys", "read", str(key_tables["text"]), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == key_truth(3)
    table = run_cli("keys", "read", str(key_tables["text"]))
    assert table.returncode == 0 and "form 홀수, page 1" in table.stdout and "미적분: 8 keys, 2 numeric" in table.stdout


def test_keys_sample_writes_the_table_and_its_truth(tmp_path):
    done = run_cli("keys", "sample", str(tmp_path / "key.pdf"), "--seed", "5", "--render", "outlines")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "key.keys.json").read_text(encoding="utf-8")) == key_truth(5)
    assert pymupdf.open(tmp_path / "key.pdf").page_count == 2
    bad = run_cli("keys", "sample", str(tmp_path / "other.pdf"), "--render", "photo")
    assert bad.returncode == 1 and "--render 'photo': choose one of text, outlines, scan" in bad.stderr


@pytest.mark.ocr
@needs_ocr
@pytest.mark.parametrize("render", ["outlines", "scan"])
def test_keys_read_returns_exactly_the_generated_keys_without_a_text_layer(key_tables, render):
    pdf = key_tables[render]
    assert pymupdf.open(pdf)[0].get_text().strip() == ""  # nothing to read but the drawing
    assert read_key_sheet_file(pdf).to_json() == key_truth(3)


@pytest.mark.realdata
@pytest.mark.ocr
@needs_ocr
def test_csat_english_key_reads_45_of_45_through_keys_read(realdata):
    folder = realdata / "ksat2025_english"
    gold = {int(n): a for n, a in json.loads((folder / "english_answers_gold.json").read_text(encoding="utf-8"))["answers"].items()}
    done = run_cli("keys", "read", str(folder / "2025_english_answerkey.pdf"), "--json")
    assert done.returncode == 0, done.stderr
    forms = json.loads(done.stdout)["forms"]
    assert [(form["form"], form["page"]) for form in forms] == [("홀수", 1), ("짝수", 2)]
    for form in forms:
        (section,) = form["sections"]
        assert [key["number"] for key in section["keys"]] == list(range(1, 46))
        assert all(key["format"] == "choice" and key["points"] in (2, 3) for key in section["keys"])
    odd = {key["number"]: key["answer"] for key in forms[0]["sections"][0]["keys"]}
    assert odd == gold


@pytest.mark.realdata
@pytest.mark.ocr
@needs_ocr
def test_csat_korean_key_reads_the_common_section_and_both_electives(realdata):
    sheet = read_key_sheet_file(realdata / "ksat2025_english" / "2025_korean_answerkey.pdf")
    assert [form.form for form in sheet.forms] == ["홀수", "짝수"]
    for form in sheet.forms:
        assert [(s.name, sorted(s.numbers())) for s in form.sections] == [
            ("공통 과목", list(range(1, 35))), ("화법과 작문", list(range(35, 46))), ("언어와 매체", list(range(35, 46)))]
        keys = [key for section in form.sections for key in section.keys]
        assert all(key.format == "choice" and 1 <= key.answer <= 5 and key.points in (2, 3) for key in keys)


# -- extract --answer-key with electives and short answers ------------------------------------------
@pytest.fixture(scope="module")
def math_papers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("math-papers")
    return {
        "key": write_key_table(folder / "key.pdf", seed=3)[0],
        "calculus": write_booklet(folder / "calculus.pdf", seed=3, elective="미적분"),
        "even": write_booklet(folder / "even.pdf", seed=3, form="짝수", elective="확률과 통계"),
        "unlabelled": write_booklet(folder / "unlabelled.pdf", seed=3, elective="미적분", labels=False),
    }


def _keys(seed: int, form: str, elective: str) -> dict[int, dict]:
    chosen = next(f for f in key_truth(seed)["forms"] if f["form"] == form)
    return {k["number"]: k for s in chosen["sections"] if s["name"] in ("공통 과목", elective) for k in s["keys"]}


def _typed(key: dict) -> dict:
    if key["format"] == "choice":
        return {"format": "choice", "options": [key["answer"]], "require_all": False}
    return {"format": "numeric", "value": key["answer"], "tolerance": None, "relative_tolerance": None, "unit": None}


def test_a_paper_with_elective_questions_needs_a_section(math_papers):
    key = load_answer_key(math_papers["key"])
    with pytest.raises(AnswerKeyError, match=r"calculus.pdf: questions 23–30 have keys in several sections .*"
                                             r"\(확률과 통계, 미적분\): choose one with --section"):
        extract_items(math_papers["calculus"], ExtractOptions(), key)
    with pytest.raises(AnswerKeyError, match=r"no section '기하' in the answer key \(sections: 공통 과목, 확률과 통계, 미적분\)"):
        load_answer_key(math_papers["key"], section="기하")


@pytest.mark.parametrize("paper, form, elective", [("calculus", "홀수", "미적분"), ("even", "짝수", "확률과 통계"),
                                                    ("unlabelled", "홀수", "미적분")])
def test_section_keys_merge_with_their_format_and_points(math_papers, paper, form, elective):
    extraction = extract_items(math_papers[paper], ExtractOptions(), load_answer_key(math_papers["key"], section=elective))
    expected = _keys(3, form, elective)
    report = extraction.report
    assert report.numbers == list(range(1, 31)) and report.answers_merged == 30
    assert report.keys_without_question == [] and report.questions_without_key == []
    assert report.short_answer == [n for n, k in expected.items() if k["format"] == "numeric"] == [16, 17, 18, 19, 20, 21, 22, 29, 30]
    assert not [w for w in report.warnings if "options (the paper has" in w or "left empty" in w]
    assert f"the paper says {form}형: the answer key's {form} form is used" in report.warnings  # read off the booklet
    for item in extraction.items:
        key = expected[item.source.number]
        assert item.answer is not None and item.answer.as_dict() == _typed(key)
        assert item.points == key["points"]
        assert len(item.options) == (5 if key["format"] == "choice" else 0)
        assert not item.flags.review_reasons


def test_short_answer_labels_without_a_key_and_the_warning_where_nothing_tells(math_papers):
    labelled = extract_items(math_papers["calculus"], ExtractOptions()).report
    assert labelled.short_answer == [16, 17, 18, 19, 20, 21, 22, 29, 30]
    assert not [w for w in labelled.warnings if "options (the paper has" in w]
    unlabelled = extract_items(math_papers["unlabelled"], ExtractOptions()).report
    assert unlabelled.short_answer == []
    assert "question 16: 0 options (the paper has 5)" in unlabelled.warnings


def test_extract_command_asks_for_a_section_and_writes_nothing(math_papers, tmp_path):
    workspace = tmp_path / "ws"
    assert run_cli("init", str(workspace)).returncode == 0
    refused = run_cli("extract", str(math_papers["calculus"]), "--answer-key", str(math_papers["key"]), "-w", str(workspace))
    assert refused.returncode != 0 and "Traceback" not in refused.stdout + refused.stderr
    assert "choose one with --section" in refused.stdout + refused.stderr
    assert "확률과 통계, 미적분" in refused.stdout + refused.stderr
    unknown = run_cli("extract", str(math_papers["calculus"]), "--answer-key", str(math_papers["key"]),
                      "--section", "기하", "-w", str(workspace))
    assert unknown.returncode == 2 and "no section '기하'" in unknown.stderr and "Traceback" not in unknown.stderr
    stats = json.loads(run_cli("items", "stats", "--json", "-w", str(workspace)).stdout)
    assert stats["items"] == 0
    done = run_cli("extract", str(math_papers["calculus"]), "--answer-key", str(math_papers["key"]), "--section", "미적분",
                   "--json", "-w", str(workspace))
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)
    assert report["created"] == 30 and report["answers_merged"] == 30 and report["short_answer"][-2:] == [29, 30]


# -- bad input ----------------------------------------------------------------------------------------
def _one_clear_line(done) -> str:  # noqa: ANN001
    assert done.returncode != 0 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def test_keys_read_refuses_bad_files_with_one_line(tmp_path):
    corrupt = tmp_path / "corrupt.pdf"
    corrupt.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\nendobj\n" + b"\x00garbage" * 50)
    assert "corrupt.pdf" in _one_clear_line(run_cli("keys", "read", str(corrupt)))

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "1 2 3", fontsize=12)
    encrypted = tmp_path / "encrypted.pdf"
    doc.save(encrypted, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    assert "encrypted.pdf: encrypted PDF" in _one_clear_line(run_cli("keys", "read", str(encrypted), "--json"))

    no_key = tmp_path / "letter.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_font(fontname="kr", fontbuffer=pymupdf.Font("korea").buffer)
    page.insert_text((72, 100), "안내문: 시험 일정은 추후 공지합니다. 문의는 교무실로 하십시오.", fontname="kr", fontsize=11)
    page.draw_rect(pymupdf.Rect(60, 80, 500, 120))
    doc.save(no_key)
    assert "letter.pdf: no answer-key table found" in _one_clear_line(run_cli("keys", "read", str(no_key)))


# -- CSV and JSON keys: numbers, 배점 ------------------------------------------------------------------
def test_csv_and_json_keys_carry_numeric_answers_and_points(tmp_path):
    csv_key = tmp_path / "key.csv"
    csv_key.write_text("번호,정답,배점\n1,③,2\n2,4,3\n3,120,4\n4,0.5,4\n", encoding="utf-8")
    keys = {entry.number: entry for entry in read_key_sheet_file(csv_key).forms[0].sections[0].keys}
    assert [(k.format, k.answer, k.points, k.explicit) for k in keys.values()] == [
        ("choice", 3, 2.0, True), ("choice", 4, 3.0, False), ("numeric", "120", 4.0, True), ("numeric", "0.5", 4.0, True)]
    json_key = tmp_path / "key.json"
    json_key.write_text(json.dumps({"answers": {"1": "③", "2": 17, "3": {"format": "numeric", "value": "1/2"}}}),
                        encoding="utf-8")
    read = run_cli("keys", "read", str(json_key), "--json")
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["forms"][0]["sections"][0]["keys"] == [
        {"number": 1, "format": "choice", "answer": 3, "points": None},
        {"number": 2, "format": "numeric", "answer": "17", "points": None},
        {"number": 3, "format": "numeric", "answer": "1/2", "points": None}]


def test_an_answer_blank_marks_a_short_answer_question(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_font(fontname="kr", fontbuffer=pymupdf.Font("korea").buffer)
    lines = [(72, "1. 대기의 주성분은?"), (84, "① 질소   ② 헬륨   ③ 네온   ④ 수소"),
             (72, "2. 지균풍은 어떤 힘의 평형인가?"), (84, "① 기압경도력과 전향력   ② 마찰력   ③ 원심력   ④ 중력"),
             (72, "3. 해수면 기압이 1013 hPa일 때 500 hPa 고도는 약 몇 m인가?"), (84, "답: ________ m"),
             (72, "4. 온난 전선이 지나간 뒤 기온은 어떻게 되는가?"), (84, "① 오른다   ② 내린다   ③ 같다   ④ 알 수 없다")]
    for index, (x, text) in enumerate(lines):
        page.insert_text((x, 200 + 22 * index), text, fontname="kr", fontsize=11)
    doc.save(tmp_path / "blank.pdf")
    unkeyed = extract_items(tmp_path / "blank.pdf", ExtractOptions()).report  # the blank alone tells
    assert unkeyed.short_answer == [3] and not [w for w in unkeyed.warnings if "options" in w]
    extraction = extract_items(tmp_path / "blank.pdf", ExtractOptions(), {3: "5500", 1: 1, 2: 1, 4: 1})
    report = extraction.report
    assert report.numbers == [1, 2, 3, 4] and report.short_answer == [3] and report.answers_merged == 4
    assert not [w for w in report.warnings if "options" in w]
    third = extraction.items[2]
    assert third.options == [] and third.answer is not None and third.answer.as_dict()["value"] == "5500"
