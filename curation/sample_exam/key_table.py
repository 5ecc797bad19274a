"""A generated CSAT-math-shaped answer-key table (and a booklet it answers), with known keys.

`key_truth(seed)` is the ground truth in the shape `benchsmith keys read --json` prints: forms
홀수 and 짝수, each with 공통 과목 1–22 (1–15 choice, 16–22 numeric 0–999) and two electives
numbered 23–30 again (23–28 choice, 29–30 numeric), every key with 배점 2, 3 or 4.
`write_key_table(out.pdf, seed, render=…)` prints it, one form per page, as the official keys
are laid out: 공통 과목 on the left, 선택 과목 on the right with an elective under each heading,
columns of 문항 번호 | 정답 | 배점. `render`: "text" (a text layer), "outlines" (every glyph drawn
as a path, no text: what the official PDFs are) or "scan" (a grayscale picture of the page).
`write_booklet` prints a question booklet for one form and elective that the key answers
(questions with ①–⑤ options, short-answer questions without), for extraction tests.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any, Literal

from curation.answers import CIRCLED
from curation.pymupdf_light import pymupdf

Render = Literal["text", "outlines", "scan"]
RENDERS: tuple[str, ...] = ("text", "outlines", "scan")
FORMS = ("홀수", "짝수")
COMMON = "공통 과목"
ELECTIVES = ("확률과 통계", "미적분")
COMMON_NUMBERS, COMMON_CHOICE = range(1, 23), range(1, 16)
ELECTIVE_NUMBERS, ELECTIVE_CHOICE = range(23, 31), range(23, 29)
PAGE_WIDTH, PAGE_HEIGHT = 595.0, 842.0
TITLE = "benchsmith 표본 평가"
SUBJECT = "수학 영역 정답표"
SCAN_DPI = 200

# the table: four column groups of (문항 번호, 정답, 배점); 공통 과목 in 11 rows of two groups
LEFT, TOP = 70.0, 170.0
WIDTHS = (34.0, 40.0, 40.0)
HEADING_ROW, LABEL_ROW, ROW = 20.0, 28.0, 22.0
SIZE = 10.0


def _section(rng: random.Random, numbers: range, choice: range) -> dict[str, Any]:
    keys = []
    for number in numbers:
        points = rng.choice((2, 3, 4))
        if number in choice:
            keys.append({"number": number, "format": "choice", "answer": rng.randint(1, 5), "points": points})
        else:
            keys.append({"number": number, "format": "numeric", "answer": str(rng.randint(0, 999)), "points": points})
    return {"keys": keys}


def key_truth(seed: int = 0) -> dict[str, Any]:
    """The generated keys, as `keys read --json` gives them."""
    forms = []
    for page, form in enumerate(FORMS, start=1):
        rng = random.Random(f"{seed}:{form}")
        sections = [{"name": COMMON, **_section(rng, COMMON_NUMBERS, COMMON_CHOICE)}]
        sections += [{"name": name, **_section(rng, ELECTIVE_NUMBERS, ELECTIVE_CHOICE)} for name in ELECTIVES]
        forms.append({"form": form, "page": page, "sections": sections})
    return {"forms": forms}


def _font() -> pymupdf.Font:
    return pymupdf.Font("korea")  # PyMuPDF's built-in Droid Sans Fallback: Hangul and ①–⑩


def _centred(writer: pymupdf.TextWriter, font: pymupdf.Font, text: str, x0: float, x1: float, baseline: float,
             size: float = SIZE) -> None:
    writer.append(((x0 + x1 - font.text_length(text, fontsize=size)) / 2, baseline), text, font=font, fontsize=size)


def _cell_text(entry: dict[str, Any]) -> str:
    return CIRCLED[entry["answer"] - 1] if entry["format"] == "choice" else str(entry["answer"])


def _key_page(doc: pymupdf.Document, form: dict[str, Any], font: pymupdf.Font) -> None:
    page = doc.new_page(width=PAGE_WIDTH, height=PAGE_HEIGHT)
    writer = pymupdf.TextWriter(page.rect)
    _centred(writer, font, TITLE, 0, PAGE_WIDTH, 80, 12)
    _centred(writer, font, SUBJECT, 0, PAGE_WIDTH, 112, 18)
    _centred(writer, font, f"( {form['form']} )형", 0, PAGE_WIDTH, 140, 16)
    group_width = sum(WIDTHS)
    groups = [(0, form["sections"][0]["keys"][:11]), (1, form["sections"][0]["keys"][11:]),
              (2, form["sections"][1]["keys"]), (3, form["sections"][2]["keys"])]
    right = LEFT + 4 * group_width
    middle = LEFT + 2 * group_width
    labels_top = TOP + 2 * HEADING_ROW
    data_top = labels_top + LABEL_ROW
    rows = 11
    bottom = {0: data_top + rows * ROW, 1: data_top + rows * ROW, 2: data_top + 8 * ROW, 3: data_top + 8 * ROW}
    # headings: 공통 과목 over the two left groups (two heading rows high), 선택 과목 over the right ones
    _centred(writer, font, COMMON, LEFT, middle, TOP + HEADING_ROW + 4)
    _centred(writer, font, "선택 과목", middle, right, TOP + HEADING_ROW - 6)
    for index, name in enumerate(ELECTIVES):
        x0 = middle + index * group_width
        _centred(writer, font, name, x0, x0 + group_width, TOP + 2 * HEADING_ROW - 6)
    for group, entries in groups:
        x = LEFT + group * group_width
        edges = [x, x + WIDTHS[0], x + WIDTHS[0] + WIDTHS[1], x + group_width]
        _centred(writer, font, "문항", edges[0], edges[1], labels_top + LABEL_ROW / 2 - 1, 8)  # on two lines, as printed
        _centred(writer, font, "번호", edges[0], edges[1], labels_top + LABEL_ROW / 2 + 8, 8)
        for label, (x0, x1) in zip(("정답", "배점"), zip(edges[1:], edges[2:], strict=False), strict=True):
            _centred(writer, font, label, x0, x1, labels_top + LABEL_ROW / 2 + 3.5, 9)
        for row, entry in enumerate(entries):
            baseline = data_top + row * ROW + ROW / 2 + 3.5
            for text, (x0, x1) in zip((str(entry["number"]), _cell_text(entry), str(entry["points"])),
                                      zip(edges, edges[1:], strict=False), strict=True):
                _centred(writer, font, text, x0, x1, baseline)
    writer.write_text(page)
    shape = page.new_shape()
    shape.draw_rect(pymupdf.Rect(LEFT, TOP, right, TOP + 2 * HEADING_ROW))  # the heading band
    shape.draw_line((middle, TOP), (middle, max(bottom.values())))
    shape.draw_line((middle, TOP + HEADING_ROW), (right, TOP + HEADING_ROW))
    shape.draw_line((middle + group_width, TOP + HEADING_ROW), (middle + group_width, labels_top))
    for group in range(4):
        x = LEFT + group * group_width
        edges = [x, x + WIDTHS[0], x + WIDTHS[0] + WIDTHS[1], x + group_width]
        for edge in edges:
            shape.draw_line((edge, labels_top), (edge, bottom[group]))
        for y in [labels_top, data_top] + [data_top + (row + 1) * ROW for row in range(round((bottom[group] - data_top) / ROW))]:
            shape.draw_line((x, y), (x + group_width, y))
    shape.finish(color=(0, 0, 0), width=0.7)
    shape.commit()


def _outlined(doc: pymupdf.Document) -> pymupdf.Document:
    """Every page redrawn from its SVG with text as paths: the same look, no text layer."""
    out = pymupdf.open()
    for page in doc.pages():
        svg = pymupdf.open(stream=page.get_svg_image(text_as_path=True).encode("utf-8"), filetype="svg")
        out.insert_pdf(pymupdf.open("pdf", svg.convert_to_pdf()))
    return out


def _scanned(doc: pymupdf.Document) -> pymupdf.Document:
    from curation.imaging import pixmap_image, png_bytes

    out = pymupdf.open()
    for page in doc.pages():
        pixmap = page.get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY, alpha=False)
        new_page = out.new_page(width=page.rect.width, height=page.rect.height)
        new_page.insert_image(new_page.rect, stream=png_bytes(pixmap_image(pixmap)))
    return out


def _finish(doc: pymupdf.Document, title: str) -> bytes:
    doc.set_metadata({"title": title, "creator": "benchsmith", "producer": "benchsmith"})
    return doc.tobytes(garbage=4, deflate=True, no_new_id=True)


def write_key_table(out_pdf: Path, seed: int = 0, render: Render = "text") -> tuple[Path, Path]:
    """Write the key table PDF and its truth (`OUT.keys.json`); return both paths. Same
    arguments, same bytes."""
    if render not in RENDERS:
        raise ValueError(f"render {render!r}: choose one of {', '.join(RENDERS)}")
    truth = key_truth(seed)
    font = _font()
    doc = pymupdf.open()
    for form in truth["forms"]:
        _key_page(doc, form, font)
    doc.subset_fonts()
    if render == "outlines":
        doc = _outlined(doc)
    elif render == "scan":
        doc = _scanned(doc)
    out_pdf = Path(out_pdf)
    out_pdf.parent.mkdir(parents=True, exist_ok=True)
    _write(out_pdf, _finish(doc, "benchsmith sample answer key"))
    truth_path = out_pdf.with_suffix(".keys.json")
    _write(truth_path, (json.dumps(truth, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
    return out_pdf, truth_path


def write_booklet(out_pdf: Path, seed: int = 0, form: str = "홀수", elective: str = ELECTIVES[0],
                  labels: bool = True) -> Path:
    """A question booklet the key answers: 공통 과목 1–22 and the elective's 23–30, choice
    questions with ①–⑤, short-answer questions with none. `labels`: print `5지선다형` and
    `단답형` before each kind (without them only the key tells a short answer)."""
    truth = key_truth(seed)
    chosen = next(f for f in truth["forms"] if f["form"] == form)
    sections = [chosen["sections"][0], next(s for s in chosen["sections"] if s["name"] == elective)]
    font = _font()
    doc = pymupdf.open()
    state: dict[str, Any] = {"page": None, "writer": None, "y": 0.0}

    def new_page() -> None:  # a running header and a page number in the margins, as booklets have
        if state["page"] is not None:
            state["writer"].write_text(state["page"])
        state["page"] = doc.new_page(width=PAGE_WIDTH, height=PAGE_HEIGHT)
        state["writer"] = pymupdf.TextWriter(state["page"].rect)
        _centred(state["writer"], font, f"{TITLE} 수학 영역 ({form}형)", 0, PAGE_WIDTH, 50, 9)
        _centred(state["writer"], font, str(doc.page_count), 0, PAGE_WIDTH, 815, 9)
        state["y"] = 150.0

    def line(text: str, x: float = 60.0, size: float = 10.0, gap: float = 16.0) -> None:
        if state["y"] + gap > PAGE_HEIGHT - 110:
            new_page()
        state["writer"].append((x, state["y"]), text, font=font, fontsize=size)
        state["y"] += gap

    new_page()
    for section in sections:
        if section["name"] != COMMON:
            line(section["name"], size=12, gap=24)
        kind = None
        for entry in section["keys"]:
            if labels and entry["format"] != kind:
                kind = entry["format"]
                line("5지선다형" if kind == "choice" else "단답형", size=10, gap=18)
            line(f"{entry['number']}. {STEMS[entry['number'] % len(STEMS)]} [{entry['points']}점]")
            if entry["format"] == "choice":
                options = "   ".join(f"{CIRCLED[i]} {10 * entry['number'] + i}" for i in range(5))
                line(options, x=72)
            state["y"] += 8
    state["writer"].write_text(state["page"])
    doc.subset_fonts()
    out_pdf = Path(out_pdf)
    out_pdf.parent.mkdir(parents=True, exist_ok=True)
    _write(out_pdf, _finish(doc, "benchsmith sample booklet"))
    return out_pdf


STEMS = ("함수 f(x)의 최댓값을 구하시오.", "수열의 첫째항부터 제10항까지의 합을 구하시오.", "두 사건이 서로 독립일 때 확률을 구하시오.",
         "곡선과 직선으로 둘러싸인 부분의 넓이를 구하시오.", "극한값을 구하시오.", "상수 k의 값을 구하시오.",
         "조건을 만족시키는 자연수의 개수를 구하시오.")


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
