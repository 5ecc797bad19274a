"""Answer-key tables: the key table inside an exam PDF, also read from a separate key PDF
(`key_pdf.py`); `key_files.py` reads key files (CSV, JSON, PDF).

A key is {question number: 1-based option number (or a sorted list)}. Tables are read as pairs
of rows (a row of question numbers above a row of answers, matched by column position) or as
`number answer` pairs in a line (`1 ② 2 13 ⑤ …`: a number directly followed by a circled digit).
"""

from __future__ import annotations

import re

from curation.answers import CIRCLED, parse_answer_key
from curation.extract.key_sheet import AnswerKeyError
from curation.extract.lines import Line

AnswerKey = dict[int, int | list[int]]
__all__ = ["AnswerKey", "AnswerKeyError", "find_key_start", "parse_key_lines"]

KEY_HEADING = re.compile(r"^\s*(정\s*답\s*표?|빠른\s*정답|정답\s*및\s*해설|정답\s*확인|답\s*안\s*표?)\s*$")
_INLINE_PAIR = re.compile(r"(?<![\d.])(\d{1,3})\s*[.):\-번]?\s*([①-⑩]+)")
_ANSWER_TOKEN = re.compile(r"^([①-⑩]+|[1-9](?:\s*,\s*[1-9])*)$")


def find_key_start(lines: list[Line]) -> int | None:
    """Index of the key table's heading (`정답표`, `빠른 정답` …) in reading order, if any."""
    for index, line in enumerate(lines):
        if KEY_HEADING.match(line.text):
            return index
    return None


def parse_key_lines(lines: list[Line]) -> AnswerKey:
    key = _row_pairs(_table_rows(lines))
    if len(key) < 3:
        for line in lines:
            for number, answer in _INLINE_PAIR.findall(line.text):
                key.setdefault(int(number), _answer(answer))
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


def _row_pairs(lines: list[Line]) -> AnswerKey:
    key: AnswerKey = {}
    for upper, lower in zip(lines, lines[1:], strict=False):
        numbers = [(cell, int(cell.text)) for cell in upper.cells if cell.text.isascii() and cell.text.isdigit()]
        continues = bool(key) and bool(numbers) and numbers[0][1] == max(key) + 1  # a short last row
        if len(numbers) < 3 and not continues or any(b[1] != a[1] + 1 for a, b in zip(numbers, numbers[1:], strict=False)):
            continue
        answers = [cell for cell in lower.cells if _ANSWER_TOKEN.match(cell.text.strip())]
        for cell, number in numbers:
            centre = (cell.x0 + cell.x1) / 2
            best = min(answers, key=lambda a: abs((a.x0 + a.x1) / 2 - centre), default=None)
            if best is not None and abs((best.x0 + best.x1) / 2 - centre) < max(cell.x1 - cell.x0, 8) * 2:
                key[number] = _answer(best.text.strip())
    return key


def circled(value: int) -> str:
    return CIRCLED[value - 1]
