"""Answer-key tables: the key table inside an exam PDF, also read from a separate key PDF
(`key_pdf.py`); `key_files.py` reads key files (CSV, JSON, PDF).

Tables are read as rows: a row of question numbers above a row of answers (matched by column
position) and, where the next row is labelled 배점, a row of points; or as `number answer` pairs
in a line (`1 ② 2 13 ⑤ …`: a number directly followed by a circled digit). An answer is a
circled digit (an option number), a plain digit (an option number, or the number itself for a
question without options), a number (`28.8`, `120`: a short answer's number) or a word (`안개`:
a short answer's text). `parse_key_entries` gives each key with its format and points;
`parse_key_lines` the option numbers only, {question number: option number (or a sorted list)}.
"""

from __future__ import annotations

import re

from curation.answers import CIRCLED, parse_answer_key
from curation.extract.key_sheet import NUMBER, AnswerKeyError, KeyEntry
from curation.extract.lines import Cell, Line

AnswerKey = dict[int, int | list[int]]
__all__ = ["AnswerKey", "AnswerKeyError", "find_key_start", "parse_key_entries", "parse_key_lines"]

KEY_HEADING = re.compile(r"^\s*(정\s*답\s*표?|빠른\s*정답|정답\s*및\s*해설|정답\s*확인|답\s*안\s*표?)\s*$")
_INLINE_PAIR = re.compile(r"(?<![\d.])(\d{1,3})\s*[.):\-번]?\s*([①-⑩]+)")
_ANSWER_TOKEN = re.compile(r"^([①-⑩]+|[1-9](?:\s*,\s*[1-9])*)$")
_CIRCLED_TOKEN = re.compile(r"^[①-⑩]+$")
_WORD = re.compile(r"^[가-힣A-Za-z][가-힣A-Za-z ]{0,11}$")  # a short answer written as a word
_LABEL = re.compile(r"^(번호|문항|문항번호|정답|답|배점|점수)$")
_POINTS = re.compile(r"^\d{1,2}(\.\d)?$")


def find_key_start(lines: list[Line]) -> int | None:
    """Index of the key table's heading (`정답표`, `빠른 정답` …) in reading order, if any."""
    for index, line in enumerate(lines):
        if KEY_HEADING.match(line.text):
            return index
    return None


def parse_key_lines(lines: list[Line]) -> AnswerKey:
    """{question number: option number(s)} of the keys that are option numbers."""
    return {number: entry.answer for number, entry in parse_key_entries(lines).items()
            if entry.format == "choice" and not isinstance(entry.answer, str)}


def parse_key_entries(lines: list[Line]) -> dict[int, KeyEntry]:
    """Every key of a key table's lines, with its format and (where a 배점 row has it) its points."""
    key = _row_entries(_table_rows(lines))
    if len(key) < 3:
        for line in lines:
            for number, answer in _INLINE_PAIR.findall(line.text):
                key.setdefault(int(number), KeyEntry(int(number), "choice", _answer(answer)))
    return key


def _table_rows(lines: list[Line]) -> list[Line]:
    """Lines at the same height on a page joined into one row (cells in x order): a table whose
    cells came out as separate lines reads like a table again."""
    rows: list[Line] = []
    for line in sorted(lines, key=lambda entry: (entry.page, (entry.bbox[1] + entry.bbox[3]) / 2)):
        last = rows[-1] if rows else None
        centre = (line.bbox[1] + line.bbox[3]) / 2
        if last is not None and last.page == line.page and abs((last.bbox[1] + last.bbox[3]) / 2 - centre) < 0.4 * last.height:
            cells = sorted(last.cells + line.cells, key=lambda cell: cell.x0)
            bbox = (min(last.bbox[0], line.bbox[0]), last.bbox[1], max(last.bbox[2], line.bbox[2]), last.bbox[3])
            rows[-1] = Line(last.page, last.region, bbox, " ".join(c.text for c in cells), last.size, cells, [])
        else:
            rows.append(Line(line.page, line.region, line.bbox, line.text, line.size, list(line.cells), []))
    return rows


def _answer(token: str) -> int | list[int]:
    return parse_answer_key(token.replace(" ", ""))


def _row_entries(rows: list[Line]) -> dict[int, KeyEntry]:
    key: dict[int, KeyEntry] = {}
    index = 0
    while index + 1 < len(rows):
        upper, lower = rows[index], rows[index + 1]
        numbers = [(cell, int(cell.text)) for cell in upper.cells if cell.text.isascii() and cell.text.isdigit()]
        continues = bool(key) and bool(numbers) and numbers[0][1] == max(key) + 1  # a short last row
        if len(numbers) < 3 and not continues or any(b[1] != a[1] + 1 for a, b in zip(numbers, numbers[1:], strict=False)):
            index += 1
            continue
        answers = [(cell, cell.text.strip()) for cell in lower.cells if _answer_kind(cell.text.strip()) is not None]
        below = rows[index + 2] if index + 2 < len(rows) else None
        points_row = below is not None and bool(below.cells) and below.cells[0].text.replace(" ", "").startswith("배점")
        points = [(cell, cell.text.strip()) for cell in below.cells if _POINTS.match(cell.text.strip())] \
            if below is not None and points_row else []
        found = False
        for cell, number in numbers:
            answer = _nearest(answers, cell)
            if answer is None:
                continue
            worth = _nearest(points, cell)
            key[number] = _entry(number, answer, float(worth) if worth is not None else None)
            found = True
        index += (3 if points_row else 2) if found else 1
    return key


def _nearest(values: list[tuple[Cell, str]], cell: Cell) -> str | None:
    """The value under a question number's cell (matched by column position), if one is close enough."""
    centre = (cell.x0 + cell.x1) / 2
    best = min(values, key=lambda value: abs((value[0].x0 + value[0].x1) / 2 - centre), default=None)
    if best is None or abs((best[0].x0 + best[0].x1) / 2 - centre) >= max(cell.x1 - cell.x0, 8) * 2:
        return None
    return best[1]


def _answer_kind(text: str) -> str | None:
    """How an answer cell reads: option numbers (circled or plain digits), a number, a word; None
    for anything else (a row label such as 정답 included)."""
    if _ANSWER_TOKEN.match(text):
        return "choice"
    compact = re.sub(r"\s+", "", text)
    if NUMBER.match(compact):
        return "numeric"
    if _WORD.match(text) and not _LABEL.match(compact):
        return "text"
    return None


def _entry(number: int, text: str, points: float | None) -> KeyEntry:
    kind = _answer_kind(text)
    if kind == "choice":  # a plain digit is an option number, or the number itself where there are no options
        return KeyEntry(number, "choice", _answer(text), points, explicit=bool(_CIRCLED_TOKEN.match(text.replace(" ", ""))))
    if kind == "numeric":
        return KeyEntry(number, "numeric", re.sub(r"\s+", "", text), points)
    return KeyEntry(number, "text", text, points)


def circled(value: int) -> str:
    return CIRCLED[value - 1]
