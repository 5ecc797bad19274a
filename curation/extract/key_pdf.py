"""A separate answer-key PDF, read as a key sheet: every form, section, number, answer and 배점.

Each page is rendered and its ruled tables found (`key_grid.py`). The cells are read from the text
layer, or, on a page without a usable one (a scan, text drawn as outlines), by OCR: circled digits
by their ring (`key_ocr.ring_digit`), plain digits with a digits-only Tesseract, headings and the
form's name (`( 홀수 )형`) with Korean Tesseract. The rows above the first row of answers are
headings: the lowest heading over a column group names its section (공통 과목, 화법과 작문 …).
A page where no table reads (a key written as rows of numbers and answers, or inline
`1 ② 2 ⑤`) is read as before: `answer_keys.parse_key_entries` (with a 배점 row's points, a
short answer's number or word) or `key_ocr.read_key_table`.

An answer written as a circled digit is an option number; a plain number is a numeric answer
where the file has circled answers, and otherwise an option number when it is one digit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from curation.answers import CIRCLED
from curation.extract.answer_keys import parse_key_entries
from curation.extract.key_grid import Grid, Table, Value, find_tables, read_groups, section_names, tidy_name
from curation.extract.key_sheet import (
    NUMBER,
    SINGLE_DIGITS,
    AnswerKeyError,
    KeyEntry,
    KeyForm,
    KeySection,
    KeySheet,
)
from curation.extract.layout import Glyph, page_glyphs, page_lines
from curation.extract.pdf_open import load_page, open_pdf
from curation.extract.text_quality import text_layer_problem
from curation.pymupdf_light import pymupdf

DPI = 300
SCALE = DPI / 72
INK = 160  # gray below this is ink
INSET = 6  # pixels kept clear of a cell's rules
TITLE_SHARE = 0.3  # where a page holds no table, its form's name is looked for in this top share
_HANGUL_OR_LETTER = re.compile(r"[A-Za-z\uac00-\ud7a3\u3131-\u318e]")
_EVEN = re.compile(r"짝\s*수")
_ODD = re.compile(r"[홀올훌흘]\s*수\s*[)）]?\s*형")
_FORM = re.compile(r"[(（]\s*([가-힣A-Za-z0-9]{1,3})\s*[)）]\s*형|(?<![가-힣])([가나다A-Z0-9])\s*형(?![가-힣])")


@dataclass
class RawKey:
    number: int
    answer: Value
    points: float | None


@dataclass
class RawSection:
    name: str | None
    keys: list[RawKey] = field(default_factory=list)


@dataclass
class PageTable:
    """The keys one table gave, the form named above it, and where it was."""

    page: int
    form: str | None
    sections: list[RawSection]


def read_key_pdf(path: Path) -> dict[int, int | list[int] | str]:
    """{number: option number(s) or the number as written} of the first form (the older reader's shape)."""
    return read_key_sheet(path).legacy()


def read_key_sheet(path: Path) -> KeySheet:
    """Every form and section of a key PDF. Raises PdfError (unreadable, encrypted …) or
    AnswerKeyError (no key found; a page without text when OCR is not installed)."""
    from curation.extract import ocr

    opened = open_pdf(path)
    tables: list[PageTable] = []
    for index in range(opened.doc.page_count):
        page = load_page(opened, index)
        glyphs = page_glyphs(page).glyphs
        problem = text_layer_problem(glyphs)
        if problem is not None and not ocr.available():
            raise AnswerKeyError(f"{path}: page {index + 1} has no usable text layer ({problem}) and OCR is not "
                                 f"available ({ocr.MISSING_HINT})")
        tables += read_page(page, index + 1, glyphs if problem is None else None)
    sheet = KeySheet(str(path), _forms(tables))
    if not sheet.count():
        raise AnswerKeyError(f"{path}: no answer-key table found")
    return sheet


def read_page(page: pymupdf.Page, number: int, glyphs: list[Glyph] | None) -> list[PageTable]:
    """The key tables of one page (`glyphs`: its text layer, None to read it by OCR)."""
    from curation.extract.ocr import render_gray

    gray = render_gray(page, DPI)
    dark = gray < INK
    reader: CellReader = TextCells(glyphs) if glyphs is not None else OcrCells(gray, dark)
    found: list[PageTable] = []
    above = 0.0
    for table in find_tables(dark, SCALE):
        sections = read_table(table, reader)
        if sections:
            form = form_name(reader.text_between(above, table.rows[0].at))
            found.append(PageTable(number, form, sections))
        above = table.rows[-1].at
    if found:
        return found
    return _older_layouts(page, number, glyphs, reader)


def _older_layouts(page: pymupdf.Page, number: int, glyphs: list[Glyph] | None, reader: CellReader) -> list[PageTable]:
    """A key that is not a table of number/answer columns: rows of numbers over rows of answers,
    `number answer` pairs in lines, or (without text) a picture of number|answer columns."""
    from curation.extract import key_ocr

    if glyphs is not None:
        lines, _ = page_lines(page, number, glyphs)
        keys = [RawKey(n, _value(entry), entry.points) for n, entry in sorted(parse_key_entries(lines).items())]
    else:
        keys = [RawKey(n, Value(str(a)), None) for n, a in sorted(key_ocr.read_key_table(page).items())]
    if not keys:
        return []
    form = form_name(reader.text_between(0.0, float(page.rect.height * SCALE * TITLE_SHARE)))
    return [PageTable(number, form, [RawSection(None, keys)])]


# -- reading a table ---------------------------------------------------------------------------------
class CellReader(Protocol):
    def first_data_row(self, table: Table) -> int | None: ...

    def values(self, table: Table, rows: range) -> Grid: ...

    def heading_texts(self, table: Table, cells: list[int]) -> dict[int, str]: ...

    def text_between(self, top: float, bottom: float) -> str: ...


def read_table(table: Table, reader: CellReader) -> list[RawSection]:
    first = reader.first_data_row(table)
    if first is None:
        return []
    rows = range(first, len(table.rows) - 1)
    grid = reader.values(table, rows)
    groups = read_groups(grid)
    if not groups:
        return []
    headings = [index for index, cell in enumerate(table.cells()) if cell.r1 < first]
    names = section_names(table, reader.heading_texts(table, headings), groups, first)
    sections: list[RawSection] = []
    for group, name in zip(groups, names, strict=True):
        keys = []
        for row, number in enumerate(group.numbers):
            answer = grid[row][group.answer_column]
            if number is None or answer is None or not answer.text:
                continue
            points = grid[row][group.points_column] if group.points_column is not None else None
            keys.append(RawKey(number, answer, _float(points.text) if points is not None else None))
        _add(sections, RawSection(name, keys))
    return sections


def _add(sections: list[RawSection], section: RawSection) -> None:
    """Groups under one name are one section, unless they repeat its numbers."""
    for existing in sections:
        numbers = {key.number for key in existing.keys}
        if existing.name == section.name and not numbers & {key.number for key in section.keys}:
            existing.keys += section.keys
            return
    sections.append(section)


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def form_name(text: str) -> str | None:
    """The form a heading names: 홀수 / 짝수 (read loosely: OCR often reads 홀 as 올), or A, 가 …"""
    if _EVEN.search(text):
        return "짝수"
    if _ODD.search(text) or "홀수" in text:
        return "홀수"
    match = _FORM.search(text)
    return (match.group(1) or match.group(2)) if match else None


class TextCells:
    """Cells read from the text layer (glyph centres inside a cell's box)."""

    def __init__(self, glyphs: list[Glyph]):
        self.glyphs = sorted(glyphs, key=lambda g: (round(g.baseline), g.x0))
        self.xs = np.array([(g.x0 + g.x1) / 2 * SCALE for g in self.glyphs])
        self.ys = np.array([(g.y0 + g.y1) / 2 * SCALE for g in self.glyphs])

    def text_in(self, box: tuple[float, float, float, float]) -> str:
        if not self.glyphs:
            return ""
        x0, y0, x1, y1 = box
        inside = np.nonzero((self.xs > x0) & (self.xs < x1) & (self.ys > y0) & (self.ys < y1))[0]
        return _join([self.glyphs[i] for i in inside.tolist()])

    def _row(self, table: Table, row: int) -> list[str]:
        return [self.text_in(table.atomic_box(row, c)) for c in range(len(table.columns) - 1)]

    def first_data_row(self, table: Table) -> int | None:
        for row in range(len(table.rows) - 1):
            texts = [text for text in self._row(table, row) if text]
            if any(_HANGUL_OR_LETTER.search(text) for text in texts):
                continue
            if sum(1 for text in texts if _text_value(text) is not None) >= 2:
                return row
        return None

    def values(self, table: Table, rows: range) -> Grid:
        return [[_text_value(text) for text in self._row(table, row)] for row in rows]

    def heading_texts(self, table: Table, cells: list[int]) -> dict[int, str]:
        every = table.cells()
        return {index: tidy_name(self.text_in(every[index].box)) for index in cells}

    def text_between(self, top: float, bottom: float) -> str:
        if bottom - top < 4:
            return ""
        return self.text_in((-1.0, top, 1e9, bottom))


def _join(glyphs: list[Glyph]) -> str:
    out = ""
    previous: Glyph | None = None
    for glyph in glyphs:
        if previous is not None:
            new_line = abs(glyph.baseline - previous.baseline) > 0.5 * previous.size
            gap = glyph.x0 - previous.x1
            if new_line or previous.space_at is not None or gap > 0.25 * previous.size:
                out += " "
        out += glyph.c
        previous = glyph
    return out.strip()


def _text_value(text: str) -> Value | None:
    """A data cell's value from its text: circled digits, or a number as written."""
    compact = re.sub(r"[\s,]+", "", text)
    if compact and all(ch in CIRCLED for ch in compact):
        return Value(",".join(str(CIRCLED.index(ch) + 1) for ch in compact), circled=True)
    number = re.sub(r"\s+", "", text)
    if NUMBER.match(number):
        return Value(number)
    return None


class OcrCells:
    """Cells read from the picture: rings around digits, digits by a digits-only Tesseract,
    headings by Korean Tesseract."""

    def __init__(self, gray: np.ndarray, dark: np.ndarray):
        self.gray, self.dark = gray, dark
        self._rings: dict[tuple[int, int, int], np.ndarray | None] = {}

    def _content(self, table: Table, row: int, column: int, gray: bool = False) -> np.ndarray:
        x0, y0, x1, y1 = (int(round(v)) for v in table.atomic_box(row, column))
        return (self.gray if gray else self.dark)[y0 + INSET:y1 - INSET, x0 + INSET:x1 - INSET]

    def _ring(self, table: Table, row: int, column: int) -> np.ndarray | None:
        from curation.extract.key_ocr import ring_digit

        key = (id(table), row, column)
        if key not in self._rings:
            content = self._content(table, row, column)
            self._rings[key] = ring_digit(content) if content.any() else None
        return self._rings[key]

    def first_data_row(self, table: Table) -> int | None:
        for row in range(len(table.rows) - 1):
            if any(self._ring(table, row, c) is not None for c in range(len(table.columns) - 1)):
                return row
        return None

    def values(self, table: Table, rows: range) -> Grid:
        from curation.extract.key_ocr import read_digit_columns
        from curation.extract.ocr import thicken

        n_columns = len(table.columns) - 1
        rings: list[list[np.ndarray | None]] = [[None] * len(rows) for _ in range(n_columns)]
        plain: list[list[np.ndarray | None]] = [[None] * len(rows) for _ in range(n_columns)]
        for index, row in enumerate(rows):
            for column in range(n_columns):
                content = self._content(table, row, column)
                if not content.any():
                    continue
                digit = self._ring(table, row, column)
                pixels = self._content(table, row, column, gray=True)  # anti-aliased edges read better than the mask
                if digit is not None:
                    rings[column][index] = np.where(thicken(digit, 1), pixels, 255).astype(np.uint8)
                else:
                    plain[column][index] = pixels
        read = read_digit_columns(rings + plain)
        grid: Grid = [[None] * n_columns for _ in rows]
        for column in range(n_columns):
            for index in range(len(rows)):
                circled, digits = read[column][index], read[n_columns + column][index]
                if rings[column][index] is not None:
                    grid[index][column] = Value(circled or "", circled=True) if circled and len(circled) == 1 else None
                elif digits:
                    grid[index][column] = Value(digits)
        return grid

    def heading_texts(self, table: Table, cells: list[int]) -> dict[int, str]:
        from curation.extract.key_ocr import read_text_pictures

        every = table.cells()
        pictures, kept = [], []
        for index in cells:
            x0, y0, x1, y1 = (int(round(v)) for v in every[index].box)
            picture = _text_only(self.gray[y0 + 2:y1 - 1, x0 + 2:x1 - 1])
            if picture is not None:
                pictures.append(picture)
                kept.append(index)
        return {index: tidy_name(text) for index, text in zip(kept, read_text_pictures(pictures), strict=True)}

    def text_between(self, top: float, bottom: float) -> str:
        from curation.extract.key_ocr import read_text_pictures

        band = self.dark[int(top) + INSET:int(bottom) - 2]
        rows = np.nonzero(band.any(axis=1))[0]
        if rows.size == 0:
            return ""
        strip = self.gray[int(top) + INSET + rows[0]:int(top) + INSET + rows[-1] + 1]
        return read_text_pictures([strip])[0]


def _text_only(gray: np.ndarray) -> np.ndarray | None:
    """A heading cell's picture without the rules at its edges (rows or columns mostly ink), cut
    to its ink; None when nothing is left."""
    if gray.size == 0:
        return None
    gray = gray.copy()
    dark = gray < INK
    gray[dark.mean(axis=1) > 0.6, :] = 255
    gray[:, dark.mean(axis=0) > 0.6] = 255
    for edge in (slice(0, INSET), slice(-INSET, None)):  # what is left of a rule along the border
        gray[edge, :] = np.where(gray[edge, :] < 250, 255, gray[edge, :])
        gray[:, edge] = np.where(gray[:, edge] < 250, 255, gray[:, edge])
    ys, xs = np.nonzero(gray < INK)
    if ys.size < 12:
        return None
    return gray[max(ys.min() - 4, 0):ys.max() + 5, max(xs.min() - 4, 0):xs.max() + 5]


# -- pages into forms -----------------------------------------------------------------------------------
def _forms(tables: list[PageTable]) -> list[KeyForm]:
    """Tables in page order become forms: a table naming a form starts it (or continues the form of
    that name); one naming none continues the form before it unless it repeats its numbers."""
    circled = any(key.answer.circled for table in tables for section in table.sections for key in section.keys)
    forms: list[KeyForm] = []
    for table in tables:
        sections = [KeySection(section.name, [_entry(key, circled) for key in section.keys]) for section in table.sections]
        target = next((form for form in forms if table.form is not None and form.form == table.form), None)
        if target is None and table.form is None and forms and not _repeats(forms[-1], sections):
            target = forms[-1]
        if target is None:
            forms.append(KeyForm(table.form, table.page, sections))
            continue
        for section in sections:
            _merge_section(target, section)
    return [form for form in forms if any(section.keys for section in form.sections)]


def _repeats(form: KeyForm, sections: Iterable[KeySection]) -> bool:
    for section in sections:
        for existing in form.sections:
            if existing.name == section.name and existing.numbers() & section.numbers():
                return True
    return False


def _merge_section(form: KeyForm, section: KeySection) -> None:
    for existing in form.sections:
        if existing.name == section.name and not existing.numbers() & section.numbers():
            existing.keys += section.keys
            return
    form.sections.append(section)


def _value(entry: KeyEntry) -> Value:
    """A key read from rows of a text layer as a cell's value (a circled option number, else as written)."""
    if entry.format == "choice":
        answer = entry.answer if isinstance(entry.answer, list) else [entry.answer]
        return Value(",".join(map(str, answer)), circled=entry.explicit)
    return Value(str(entry.answer))


def _entry(key: RawKey, circled_file: bool) -> KeyEntry:
    text = key.answer.text
    if not key.answer.circled and not NUMBER.match(text) and not SINGLE_DIGITS.match(text):
        return KeyEntry(key.number, "text", text, key.points)  # a word (read from a text layer's rows)
    if key.answer.circled:
        numbers = sorted({int(part) for part in text.split(",") if part})
        return KeyEntry(key.number, "choice", numbers[0] if len(numbers) == 1 else numbers, key.points)
    if not circled_file and SINGLE_DIGITS.match(text):
        numbers = sorted({int(part) for part in re.split(r"\s*,\s*", text)})
        return KeyEntry(key.number, "choice", numbers[0] if len(numbers) == 1 else numbers, key.points, explicit=False)
    return KeyEntry(key.number, "numeric", text, key.points)
