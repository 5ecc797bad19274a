"""Laying the sample exam out: cover, two columns of questions, answer-key page; and its truth."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from curation.answers import CIRCLED
from curation.extract.lines import rect_box
from curation.extract.passages import passage_group
from curation.pymupdf_light import pymupdf
from curation.sample_exam import drawing
from curation.sample_exam.content import (
    PASSAGE,
    PASSAGE_QUESTIONS,
    SHORT_ANSWERS,
    SUBJECTS,
    TABLE_QUESTION,
    FigureKind,
    QuestionSpec,
    ShortAnswerSpec,
    SubjectSpec,
)
from curation.sample_exam.glyph_variant import GLYPH_PICTURE_REASON, pictured_runs
from curation.sample_exam.pages import FULL, LEFT, PAGE_WIDTH, PageContent
from curation.sample_exam.typeset import Run, Typesetter, truth_text
from curation.sample_exam.variants import CANONICAL, Variant

MARGIN_X = 42.0
GUTTER = 24.0


def column_geometry(columns: int) -> tuple[float, dict[int, float]]:
    """(column width, x of each column's region) for two or three columns."""
    width = (PAGE_WIDTH - 2 * MARGIN_X - (columns - 1) * GUTTER) / columns
    return width, {LEFT + index: MARGIN_X + index * (width + GUTTER) for index in range(columns)}
CONTENT_TOP, CONTENT_BOTTOM = 72.0, 790.0
SIZE, LINE = 9.5, 14.5
OPTION_INDENT = 12.0
EXAM, TITLE = "기상기사", "2024년 표본 기상기사 필기시험 문제지"
SHORT_LABEL = "단답형"  # printed before the first short-answer question
KEY_COLUMNS = 10  # questions per row of the key table
INSTRUCTIONS = (
    "1. 시험 문제지의 총 면수와 문제 번호 순서를 확인하십시오.",
    "2. 답안카드에는 검은색 사인펜만 사용하십시오.",
    "3. 문제지에 표시한 답은 채점하지 않습니다.",
    "4. 시험이 끝나면 문제지와 답안카드를 함께 제출하십시오.",
)


@dataclass
class Placed:
    """One question as laid out: where its pieces went and what the truth must say."""

    number: int
    subject: SubjectSpec
    spec: QuestionSpec
    page: int = 0
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)
    figure: tuple[str, pymupdf.Rect, bytes | None] | None = None  # (kind, rect, png or None for vector)
    option_images: list[tuple[pymupdf.Rect, bytes]] = field(default_factory=list)
    order: list[int] = field(default_factory=list)  # printed position -> index in spec.options
    pictured: bool = False  # some of its characters are drawn as pictures (glyph variant)
    passage: tuple[str, int, int] | None = None  # (header and text, first, last) of a shared passage
    short: ShortAnswerSpec | None = None  # a short-answer question (no options)
    short_label: bool = False  # the 단답형 label is printed before it


@dataclass
class Layout:
    pages: list[PageContent]
    placed: list[Placed]


class Composer:
    def __init__(self, font: pymupdf.Font, seed: int, variant: Variant = CANONICAL):
        self.variant = variant
        self.glyph_pictures = variant.glyph_pictures
        self.column_width, self.column_x = column_geometry(variant.columns)
        self.context = "stem"  # what is being set: "stem", "bogi" or "marker_option"
        self.set = Typesetter(font)
        self.font = font
        self.seed = seed
        self.pages: list[PageContent] = []
        self.placed: list[Placed] = []
        self.region = LEFT
        self.y = CONTENT_TOP

    # -- pages and flow ------------------------------------------------------------------------
    @property
    def page(self) -> PageContent:
        return self.pages[-1]

    def new_page(self) -> None:
        self.pages.append(PageContent())
        number = len(self.pages)
        header = self.set.run(MARGIN_X, 40, TITLE, 8.5)
        right_text = "기상기사 표본"
        right = self.set.run(PAGE_WIDTH - MARGIN_X - self.set.width(right_text, 8.5), 40, right_text, 8.5)
        footer_text = f"- {number} -"
        footer = self.set.run((PAGE_WIDTH - self.set.width(footer_text, 9)) / 2, 818, footer_text, 9)
        self.page.add(FULL, [header, right, footer])
        self.page.drawings.append(lambda page: page.draw_line((MARGIN_X, 47), (PAGE_WIDTH - MARGIN_X, 47), width=0.8))
        self.region, self.y = LEFT, CONTENT_TOP

    def next_column(self) -> None:
        self.mark_gutters()
        if self.region < LEFT + self.variant.columns - 1:
            self.region, self.y = self.region + 1, self._column_top()
        else:
            self.new_page()

    def mark_gutters(self) -> None:
        self.page.gutter_rule = (self._column_top(), CONTENT_BOTTOM)
        self.page.gutter_xs = tuple(x - GUTTER / 2 for region, x in sorted(self.column_x.items()) if region != LEFT)

    def _column_top(self) -> float:
        return self.columns_top if len(self.pages) == 1 else CONTENT_TOP

    def baseline(self, size: float = SIZE) -> float:
        return self.y + self.font.ascender * size

    # -- cover ---------------------------------------------------------------------------------
    def cover(self) -> None:
        self.new_page()
        title = "국가기술자격 필기시험 표본 문제지"
        runs = [self.set.run((PAGE_WIDTH - self.set.width(title, 16)) / 2, 88, title, 16)]
        count = sum(len(s.questions) for s in SUBJECTS) + (len(SHORT_ANSWERS) if self.variant.short_answers else 0)
        info = f"자격종목: {EXAM}    시험시간: 150분    문항 수: {count}문항"
        runs.append(self.set.run((PAGE_WIDTH - self.set.width(info, 10)) / 2, 112, info, 10))
        runs.append(self.set.run(MARGIN_X + 10, 140, "수험자 유의사항", 10))
        baseline = 160.0
        for line in INSTRUCTIONS:
            runs.append(self.set.run(MARGIN_X + 14, baseline, line, 9.5))
            baseline += LINE
        self.page.add(FULL, runs)
        box = pymupdf.Rect(MARGIN_X, 126, PAGE_WIDTH - MARGIN_X, baseline - 4)
        self.page.drawings.append(lambda page: page.draw_rect(box, color=(0, 0, 0), width=0.8))
        self.columns_top = box.y1 + 16
        self.y = self.columns_top

    # -- questions -----------------------------------------------------------------------------
    def place_all(self) -> None:
        number = 0
        for subject in SUBJECTS:
            for index, spec in enumerate(subject.questions):
                number += 1
                self.place(number, subject, spec, with_header=index == 0)
        if self.variant.passage:
            first, last = number + 1, number + len(PASSAGE_QUESTIONS)
            passage = (f"[{first}～{last}] 다음 글을 읽고 물음에 답하시오. {PASSAGE}", first, last)
            for spec in PASSAGE_QUESTIONS:
                number += 1
                self.place(number, SUBJECTS[-1], spec, with_header=False, passage=passage)
        if self.variant.table:
            number += 1
            self.place(number, SUBJECTS[-1], TABLE_QUESTION, with_header=False)
        if self.variant.short_answers:
            for index, short in enumerate(SHORT_ANSWERS):
                number += 1
                self.place(number, SUBJECTS[-1], QuestionSpec(short.stem, (), points=short.points), with_header=False,
                           short=short, short_label=index == 0)
        self.mark_gutters()

    def place(self, number: int, subject: SubjectSpec, spec: QuestionSpec, with_header: bool,
              passage: tuple[str, int, int] | None = None, short: ShortAnswerSpec | None = None,
              short_label: bool = False) -> None:
        order = list(range(len(spec.options)))
        random.Random(self.seed * 1000 + number).shuffle(order)
        for _attempt in range(3):
            saved_y = self.y
            trial = PageContent()
            placed = Placed(number, subject, spec, order=order, passage=passage, short=short, short_label=short_label)
            self.lay_out(trial, placed, with_header)
            if self.y <= CONTENT_BOTTOM:
                self.commit(trial, placed)
                return
            self.y = saved_y
            self.next_column()
        raise RuntimeError(f"question {number} does not fit in a column")

    def commit(self, trial: PageContent, placed: Placed) -> None:
        placed.page = len(self.pages)
        for _, _, run in trial.runs:
            self.page.add(self.region, [run])
        self.page.images += trial.images
        self.page.drawings += trial.drawings
        self.placed.append(placed)
        self.y += 10

    def lay_out(self, out: PageContent, placed: Placed, with_header: bool) -> None:
        x, width = self.column_x[self.region], self.column_width
        if with_header:
            header = f"{placed.subject.number}과목 {placed.subject.name}"
            band = pymupdf.Rect(x, self.y, x + width, self.y + 18)
            out.drawings.append(lambda page: page.draw_rect(band, color=None, fill=(0.9, 0.9, 0.9)))
            out.add(self.region, [self.set.run(x + 6, self.y + 13, header, 10.5)])
            self.y += 26
        if placed.short_label:  # a line of its own, outside the question's box
            out.add(self.region, [self.set.run(x, self.baseline(), SHORT_LABEL, SIZE)])
            self.y += LINE + 4
        if placed.passage is not None and placed.passage[1] == placed.number:  # printed once, before its first question
            self.text_block(out, Placed(0, placed.subject, placed.spec), [], (placed.passage[0],), x, width, x)
            self.y += 4
        prefix = self.variant.numbering.format(n=placed.number)
        indent = self.set.width(prefix, SIZE)
        self.text_block(out, placed, [self.set.run(x, self.baseline(), prefix, SIZE)], placed.spec.stem,
                        x + indent, width - indent, x + indent)
        if placed.spec.table:
            self.table(out, placed, x, width)
        if placed.spec.bogi:
            self.bogi_box(out, placed, x, width)
        if placed.spec.figure:
            self.figure(out, placed, placed.spec.figure, x, width)
        if placed.short is None:
            self.options(out, placed, x, width)

    def text_block(self, out: PageContent, placed: Placed, lead: list[Run], rich, first_x: float,  # noqa: ANN001
                   width: float, rest_x: float, first_width: float | None = None) -> None:
        lines = self.set.wrap(rich, SIZE, first_width if first_width is not None else width, width)
        for index, words in enumerate(lines):
            runs = (lead if index == 0 else []) + self.set.set_line(words, first_x if index == 0 else rest_x,
                                                                     self.baseline(), SIZE)
            self.emit(out, placed, runs)
            self.y += LINE

    def emit(self, out: PageContent, placed: Placed, runs: list[Run]) -> None:
        if self.glyph_pictures:
            runs, pictures = pictured_runs(runs, self.context, self.set)
            for run, png in pictures:
                rect = pymupdf.Rect(self.set.glyph_box(run))
                out.images.append((rect, png))
                placed.boxes.append(rect_box(rect))
                placed.pictured = True
        out.add(self.region, runs)
        placed.boxes += [self.set.glyph_box(run) for run in runs if run.text.strip()]

    def bogi_box(self, out: PageContent, placed: Placed, x: float, width: float) -> None:
        left, right = x + 8, x + width - 2
        top = self.y + 2
        self.y = top + 5
        title = "〈보기〉"
        self.emit(out, placed, [self.set.run((left + right - self.set.width(title, SIZE)) / 2, self.baseline(), title, SIZE)])
        self.y += LINE
        self.context = "bogi"
        for entry in placed.spec.bogi:
            marker = entry[:3]  # "ㄱ. "
            indent = self.set.width(marker, SIZE)
            self.text_block(out, placed, [], (entry,), left + 6, right - left - 12 - indent, left + 6 + indent,
                            first_width=right - left - 12)
        self.context = "stem"
        bottom = self.y
        box = pymupdf.Rect(left, top, right, bottom)
        out.drawings.append(lambda page: page.draw_rect(box, color=(0, 0, 0), width=0.7))
        self.y = bottom + 6

    def table(self, out: PageContent, placed: Placed, x: float, width: float) -> None:
        """A ruled table: every row and column boundary drawn, cell text left-aligned."""
        rows = placed.spec.table
        left, top, row_height = x + 8, self.y + 2, 16.0
        cell_width = (width - 16) / len(rows[0])
        for index, row in enumerate(rows):
            runs = [self.set.run(left + column * cell_width + 4, top + index * row_height + 12, text, SIZE)
                    for column, text in enumerate(row)]
            self.emit(out, placed, runs)
        box = pymupdf.Rect(left, top, left + cell_width * len(rows[0]), top + row_height * len(rows))

        def rules(page: pymupdf.Page, box: pymupdf.Rect = box, count: tuple[int, int] = (len(rows), len(rows[0]))) -> None:
            for index in range(count[0] + 1):
                page.draw_line((box.x0, box.y0 + index * row_height), (box.x1, box.y0 + index * row_height), width=0.6)
            for column in range(count[1] + 1):
                page.draw_line((box.x0 + column * cell_width, box.y0), (box.x0 + column * cell_width, box.y1), width=0.6)

        out.drawings.append(rules)
        placed.boxes.append(rect_box(box))
        self.y = box.y1 + 6

    def figure(self, out: PageContent, placed: Placed, kind: FigureKind, x: float, width: float) -> None:
        size: tuple[float, float] = {"chart": (200, 120), "diagram": (200, 90), "formula_image": (120, 26)}[kind]
        if size[0] > width - 8:  # a narrow column: the figure shrinks to fit it
            size = (width - 8, size[1] * (width - 8) / size[0])
        rect = pymupdf.Rect(x + (width - size[0]) / 2, self.y + 2, x + (width + size[0]) / 2, self.y + 2 + size[1])
        if kind == "chart":
            png = drawing.temperature_profile_chart(self.seed)
        elif kind == "formula_image":
            png = drawing.formula_image(self.font)
        else:
            png = None
            out.drawings.append(lambda page: drawing.draw_front_section(page, rect))
        if png is not None:
            out.images.append((rect, png))
            placed.boxes.append(rect_box(rect))
        placed.figure = (kind, rect, png)
        self.y = rect.y1 + 6

    def options(self, out: PageContent, placed: Placed, x: float, width: float) -> None:
        spec = placed.spec
        printed = [spec.options[index] for index in placed.order]
        start = x + OPTION_INDENT
        span = width - OPTION_INDENT
        if spec.image_options:
            self.image_options(out, placed, start, span)
            return
        per_line = {"row": 4, "grid": 2, "lines": 1}[spec.layout] if self.variant.columns == 2 else 1
        slot = span / per_line
        if per_line > 1:
            self.context = "marker_option"
        for row_start in range(0, len(printed), per_line):
            row_runs: list[Run] = []
            for column, option in enumerate(printed[row_start:row_start + per_line]):
                marker = CIRCLED[row_start + column] + " "
                left = start + column * slot
                lead = self.set.run(left, self.baseline(), marker, SIZE)
                if per_line == 1:
                    indent = self.set.width(marker, SIZE)
                    self.text_block(out, placed, [lead], option, left + indent, span - indent, left + indent)
                    continue
                room = slot - self.set.width(marker, SIZE) - 4
                words = self.set.wrap(option, SIZE, room, room)
                if len(words) != 1:
                    raise RuntimeError(f"question {placed.number}: option does not fit a {spec.layout} slot")
                row_runs += [lead] + self.set.set_line(words[0], left + self.set.width(marker, SIZE), self.baseline(), SIZE)
            if row_runs:
                self.emit(out, placed, row_runs)
                self.y += LINE
        self.context = "stem"

    def image_options(self, out: PageContent, placed: Placed, start: float, span: float) -> None:
        per_line = 4 if self.variant.columns == 2 else 2
        slot = span / per_line
        top = self.y + 2
        for position, index in enumerate(placed.order):
            if position and position % per_line == 0:
                top += 36 + 6
            marker = CIRCLED[position]
            left = start + position % per_line * slot
            self.emit(out, placed, [self.set.run(left, top + 22, marker, SIZE)])
            image_left = left + self.set.width(marker, SIZE) + 3
            rect = pymupdf.Rect(image_left, top, image_left + 36, top + 36)
            symbol = placed.spec.options[index][0]
            if not isinstance(symbol, str):
                raise ValueError(f"no symbol {symbol!r}")
            png = drawing.weather_symbol(symbol)
            out.images.append((rect, png))
            placed.boxes.append(rect_box(rect))
            placed.option_images.append((rect, png))
        self.y = top + 36 + 6

    # -- answer key ----------------------------------------------------------------------------
    def answer_key_page(self) -> None:
        """정답표: rows of question numbers, each over a row of answers (a circled option number, or
        a short answer as written) and a row of 배점."""
        self.new_page()
        title = "정답표"
        runs = [self.set.run((PAGE_WIDTH - self.set.width(title, 14)) / 2, 90, title, 14)]
        answers = [placed.short.answer if placed.short is not None else CIRCLED[placed.order.index(0)]
                   for placed in self.placed]
        points = [str(placed.spec.points) for placed in self.placed]
        label_width, cell = 43.0, (PAGE_WIDTH - 2 * MARGIN_X - 43.0) / KEY_COLUMNS
        top = 110.0
        rows: list[float] = []
        for start in range(0, len(answers), KEY_COLUMNS):
            end = min(start + KEY_COLUMNS, len(answers))
            for label, values in (("번호", [str(n) for n in range(start + 1, end + 1)]), ("정답", answers[start:end]),
                                  ("배점", points[start:end])):
                baseline = top + 15
                runs.append(self.set.run(MARGIN_X + (label_width - self.set.width(label, 9.5)) / 2, baseline, label, 9.5))
                for column, value in enumerate(values):
                    cell_x = MARGIN_X + label_width + column * cell
                    runs.append(self.set.run(cell_x + (cell - self.set.width(value, 9.5)) / 2, baseline, value, 9.5))
                rows.append(top)
                top += 20
            top += 10
        self.page.add(FULL, runs)

        def grid(page: pymupdf.Page, rows: list[float] = rows) -> None:
            for row_top in rows:
                page.draw_rect(pymupdf.Rect(MARGIN_X, row_top, PAGE_WIDTH - MARGIN_X, row_top + 20), width=0.6)
                for column in range(KEY_COLUMNS + 1):
                    x = MARGIN_X + label_width + column * cell if column else MARGIN_X + label_width
                    page.draw_line((x, row_top), (x, row_top + 20), width=0.6)

        self.page.drawings.append(grid)


def compose(font: pymupdf.Font, seed: int, variant: Variant = CANONICAL) -> Layout:
    composer = Composer(font, seed, variant)
    composer.cover()
    composer.place_all()
    composer.answer_key_page()
    return Layout(composer.pages, composer.placed)


def union(boxes: list[tuple[float, float, float, float]]) -> list[float]:
    return [round(min(b[0] for b in boxes), 2), round(min(b[1] for b in boxes), 2),
            round(max(b[2] for b in boxes), 2), round(max(b[3] for b in boxes), 2)]


def item_id(seed: int, number: int) -> str:
    return f"sample-gisanggisa-s{seed}-{number:03d}"


def short_answer_key(short: ShortAnswerSpec) -> dict[str, Any]:
    """The typed key a short answer's printed text is (what extraction reads from the key table)."""
    if short.format == "numeric":
        return {"format": "numeric", "value": short.answer}
    return {"format": "text", "accepted": [short.answer]}


def truth_record(placed: Placed, seed: int, pdf_sha256: str, image_refs: dict[str, Any], origin: str) -> dict[str, Any]:
    """The ground-truth item; `image_refs` maps 'figure' / 'option:N' to ImageRef dicts."""
    spec = placed.spec
    options: list[dict[str, Any]] = []
    for position, index in enumerate(placed.order if placed.short is None else []):
        if spec.image_options:
            options.append({"text": "", "image": image_refs[f"option:{position + 1}"]})
        else:
            options.append({"text": truth_text(spec.options[index]), "image": None})
    stem = truth_text(spec.stem)
    if spec.bogi:
        stem += "\n〈보기〉\n" + "\n".join(spec.bogi)
    if spec.table:
        stem += "\n" + "\n".join("| " + " | ".join(row) + " |" for row in spec.table[:1] + (("---",) * len(spec.table[0]),)
                                   + spec.table[1:])
    extra: dict[str, Any] = {}
    if placed.passage is not None:
        stem = placed.passage[0] + "\n" + stem
        extra["passage_group"] = passage_group(pdf_sha256, placed.passage[1], placed.passage[2])
    return {
        "id": item_id(seed, placed.number),
        "source": {"exam": EXAM, "session": f"sample-{seed}", "subject": placed.subject.name,
                   "part": f"{placed.subject.number}과목", "number": placed.number, "pdf_sha256": pdf_sha256,
                   "page": placed.page, "bbox": union(placed.boxes), "origin": origin},
        "stem": stem,
        "options": options,
        "answer": short_answer_key(placed.short) if placed.short is not None else placed.order.index(0) + 1,
        "points": spec.points,
        "images": [image_refs["figure"]] if "figure" in image_refs else [],
        "flags": {"review_reasons": ([GLYPH_PICTURE_REASON] if placed.pictured else []) + list(spec.review)},
        "status": "extracted",
        "extra": extra,
    }
