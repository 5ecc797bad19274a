"""Answer-key files: CSV or JSON tables, or a separate key PDF (text layer or OCR)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from curation.answers import parse_answer_key
from curation.extract.answer_keys import AnswerKey, AnswerKeyError
from curation.extract.key_pdf import read_key_pdf

_NUMBER_NAMES = ("번호", "문항", "문제", "number", "question", "no", "q", "num")
_ANSWER_NAMES = ("정답", "답", "answer", "key", "ans")


def read_key_file(path: Path) -> AnswerKey:
    """A key from CSV, JSON or PDF (with or without a text layer)."""
    path = Path(path)
    if not path.is_file():
        raise AnswerKeyError(f"{path}: no such answer-key file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            return _json_key(json.loads(path.read_text(encoding="utf-8-sig")), path)
        if suffix in (".csv", ".tsv", ".txt"):
            return _csv_key(path.read_text(encoding="utf-8-sig"), path)
        if suffix == ".pdf":
            return read_key_pdf(path)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise AnswerKeyError(f"{path}: cannot read the answer key ({error})") from None
    except ValueError as error:
        raise AnswerKeyError(f"{path}: {error}") from None
    raise AnswerKeyError(f"{path}: answer keys are read from .csv, .json or .pdf files")


def _json_key(data: object, path: Path) -> AnswerKey:
    if isinstance(data, dict) and isinstance(data.get("answers"), dict | list):
        data = data["answers"]
    if isinstance(data, dict):
        return {int(number): parse_answer_key(value) for number, value in data.items()}
    if isinstance(data, list):
        if all(isinstance(row, dict) for row in data):
            return {_question_number(_field(row, _NUMBER_NAMES, path)): parse_answer_key(_field(row, _ANSWER_NAMES, path))
                    for row in data}
        return {index: parse_answer_key(value) for index, value in enumerate(data, start=1)}
    raise ValueError("expected {\"answers\": {number: answer}}, {number: answer} or a list")


def _question_number(value: object) -> int:
    if not isinstance(value, int | float | str):  # null, a list, an object: int() would raise TypeError
        raise ValueError(f"question number {value!r} is not a number")
    return int(value)


def _field(row: dict, names: tuple[str, ...], path: Path) -> object:
    for key, value in row.items():
        if str(key).strip().lower() in names:
            return value
    raise ValueError(f"a row has none of the columns {', '.join(names)}")


def _csv_key(text: str, path: Path) -> AnswerKey:
    dialect = csv.excel_tab if "\t" in text.splitlines()[0] else csv.excel
    rows = [row for row in csv.reader(io.StringIO(text), dialect) if any(cell.strip() for cell in row)]
    if not rows:
        raise ValueError("the answer-key file is empty")
    header = [cell.strip().lower() for cell in rows[0]]
    number_col = next((i for i, name in enumerate(header) if name in _NUMBER_NAMES), None)
    answer_col = next((i for i, name in enumerate(header) if name in _ANSWER_NAMES), None)
    if number_col is None or answer_col is None:
        number_col, answer_col = 0, 1
    else:
        rows = rows[1:]
    key: AnswerKey = {}
    for line_number, row in enumerate(rows, start=2):
        try:
            key[int(row[number_col].strip().rstrip(".번"))] = parse_answer_key(row[answer_col])
        except (ValueError, IndexError) as error:
            raise ValueError(f"row {line_number}: {error}") from None
    return key
