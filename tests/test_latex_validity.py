"""Every formula the extractor writes parses: the validator itself, scripts on tight leading,
brackets around formulas, and a sweep over every text field of every ground truth and extraction."""

from __future__ import annotations

import pymupdf
import pytest

from curation.extract.latex_check import formula_problems, formulas, text_problems
from curation.extract.layout import page_glyphs, page_lines
from curation.extract.pipeline import ExtractOptions, extract_items

from .conftest import realdata_dir
from .extract_truth import load_truth


def test_validator_accepts_what_renders_and_names_what_does_not():
    assert text_problems(r"값은 \(7.29\times 10^{-5}\,\mathrm{s^{-1}}\)이고 $$\frac{1}{2}\alpha$$ 이다") == []
    assert text_problems(r"\(\{x\}\) \(\left( x \right)\) \(\mathrm{H^{+}}\)") == []
    bad = text_problems(r"[CaMg(\(\mathrm{CO_{3}})_{2}\)]")
    assert len(bad) == 1 and "cuts across brackets" in bad[0]
    assert "never closed" in formula_problems("a^{")[0]
    assert formula_problems(r"\foo x") == [r"unknown commands \foo"]
    assert formula_problems("x^") == ["a script with nothing after it"]
    assert formulas(r"\(x") == ([], [r"'\(' at 0 is never closed"])
    assert formulas(r"x\) y") == ([], [r"'\)' without '\(' at 1"])
    assert formulas(r"\(a $$b$$ c\)")[1]  # nested delimiters


def _write(page: pymupdf.Page, font: pymupdf.Font, x: float, baseline: float, runs: list[tuple[str, str]],
           size: float = 10.0, rise: float = 0.5) -> None:
    writer = pymupdf.TextWriter(page.rect)
    for text, kind in runs:
        scale = 0.7 if kind else 1.0
        shift = {"": 0.0, "sup": -rise * size, "sub": 0.2 * size}[kind]
        writer.append((x, baseline + shift), text, font=font, fontsize=size * scale)
        x += font.text_length(text, fontsize=size * scale)
    writer.write_text(page)


def test_scripts_join_their_own_line_on_tight_leading_and_brackets_stay_whole():
    font = pymupdf.Font("korea")
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    lines = [
        [("첫째 줄에는 수식이 없는 문장이 있다", "")],
        [("수용액의 H", ""), ("+", "sup"), (" 농도와 [CaMg(CO", ""), ("3", "sub"), (")", ""), ("2", "sub"),
         ("] 의 양, x(t)", ""), ("2", "sup"), (" 의 값", "")],
        [("셋째 줄의 단위는 (m s", ""), ("-1", "sup"), (")이다", "")],
    ]
    for row, runs in enumerate(lines):
        _write(page, font, 60, 100 + 10.5 * row, runs)
    texts = [line.text for line in page_lines(page, 1, page_glyphs(page).glyphs)[0]]
    assert texts == [
        "첫째 줄에는 수식이 없는 문장이 있다",
        r"수용액의 \(\mathrm{H^{+}}\) 농도와 [\(CaMg(\mathrm{CO_{3}})_{2}\)] 의 양, \(x(t)^{2}\) 의 값",
        r"셋째 줄의 단위는 (m \(\mathrm{s^{-1}}\))이다",
    ]
    assert [problem for text in texts for problem in text_problems(text)] == []


def _text_fields(item) -> list[str]:  # noqa: ANN001 - an Item
    fields = [item.stem] + [option.text for option in item.options]
    fields += [image.latex for image in item.images if image.latex]
    return fields


@pytest.fixture(scope="module")
def every_truth_and_extraction(sample_exam_dir):
    truths = sorted(sample_exam_dir.glob("*.truth.jsonl"))
    assert truths
    items = [item for path in truths for item in load_truth(path)]
    for path in truths:
        pdf = path.with_name(path.name.replace(".truth.jsonl", ".pdf"))
        if "scanned" not in pdf.name:
            items += extract_items(pdf, ExtractOptions()).items
    return items


def test_every_formula_in_every_ground_truth_and_extraction_parses(every_truth_and_extraction):
    items = list(every_truth_and_extraction)
    realdata = realdata_dir()
    if realdata is not None:
        booklet = realdata / "ksat2025_english" / "2025_english_questions_odd.pdf"
        items += extract_items(booklet, ExtractOptions()).items
    problems = [f"{item.id}: {problem}" for item in items for text in _text_fields(item) for problem in text_problems(text)]
    assert problems == []
    assert sum(len(formulas(text)[0]) for item in items for text in _text_fields(item)) > 0
