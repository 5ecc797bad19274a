"""Every common option form, in one row, a 2×2 grid or one per line (PDFs written by the test)."""

from __future__ import annotations

import pymupdf
import pytest

from curation.extract.pipeline import ExtractOptions, extract_items

MARKERS = {
    "circled": ["①", "②", "③", "④"],
    "paren": ["(1)", "(2)", "(3)", "(4)"],
    "digit_paren": ["1)", "2)", "3)", "4)"],
    "digit_dot": ["1.", "2.", "3.", "4."],
    "hangul": ["가.", "나.", "다.", "라."],
    "latin": ["A.", "B.", "C.", "D."],
}
QUESTIONS = [("대기 중에 가장 많은 기체는?", ["질소", "산소", "아르곤", "수증기"]),
             ("지균풍과 관계가 깊은 힘은?", ["전향력", "마찰력", "원심력", "중력"]),
             ("적란운에서 잘 나타나는 현상은?", ["뇌우", "안개", "무지개", "황사"])]


def write_exam(path, markers, layout):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_font(fontname="kr", fontbuffer=pymupdf.Font("korea").buffer)
    y = 80.0
    per_line = {"lines": 1, "grid": 2, "row": 4}[layout]
    for number, (stem, options) in enumerate(QUESTIONS, start=1):
        page.insert_text((60, y), f"{number}. {stem}", fontname="kr", fontsize=11)
        y += 18
        for start in range(0, 4, per_line):
            for column, index in enumerate(range(start, start + per_line)):
                page.insert_text((74 + column * 120, y), f"{markers[index]} {options[index]}", fontname="kr", fontsize=11)
            y += 18
        y += 12
    doc.save(path)
    return path


@pytest.mark.parametrize("layout", ["lines", "grid", "row"])
@pytest.mark.parametrize("form", list(MARKERS))
def test_option_form_and_layout(tmp_path, form, layout):
    pdf = write_exam(tmp_path / f"{form}-{layout}.pdf", MARKERS[form], layout)
    extraction = extract_items(pdf, ExtractOptions())
    got = [(item.source.number, item.stem, [option.text for option in item.options]) for item in extraction.items]
    assert got == [(number, stem, options) for number, (stem, options) in enumerate(QUESTIONS, start=1)]
