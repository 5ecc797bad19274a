"""Answer-key files: CSV or JSON tables, or a separate key PDF (text layer or OCR), read as a key sheet."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from curation.extract.key_sheet import AnswerKeyError, KeyEntry, KeySheet, entry_from_value

_NUMBER_NAMES = ("번호", "문항", "문제", "number", "question", "no", "q", "num")
_ANSWER_NAMES = ("정답", "답", "answer", "key", "ans")
_POINTS_NAMES = ("배점", "점수", "points", "score")


def read_key_file(path: Path) -> dict[int, int | list[int] | str]:
    """{number: option number(s), or a numeric answer as written} of the file's first form."""
    return read_key_sheet_file(path).legacy()


def read_key_sheet_file(path: Path) -> KeySheet:
    """A key sheet from CSV, JSON or PDF (with or without a text layer). Raises AnswerKeyError or
    PdfError with one line naming the file."""
    path = Path(path)
    if not path.is_file():
        raise AnswerKeyError(f"{path}: no such answer-key file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            return KeySheet.from_mapping(str(path), _json_key(json.loads(path.read_text(encoding="utf-8-sig")), path))
        if suffix in (".csv", ".tsv", ".txt"):
            return KeySheet.from_mapping(str(path), _csv_key(path.read_text(encoding="utf-8-sig"), path))
        if suffix == ".pdf":
            from curation.extract.key_pdf import read_key_sheet

            return read_key_sheet(path)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise AnswerKeyError(f"{path}: cannot read the answer key ({error})") from None
    except ValueError as error:
        raise AnswerKeyError(f"{path}: {error}") from None
    raise AnswerKeyError(f"{path}: answer keys are read from .csv, .json or .pdf files")


def _json_key(data: object, path: Path) -> dict[int, KeyEntry]:
    if isinstance(data, dict) and isinstance(data.get("answers"), dict | list):
        data = data["answers"]
    if isinstance(data, dict):
        return {int(number): entry_from_value(int(number), value) for number, value in data.items()}
    if isinstance(data, list):
        if all(isinstance(row, dict) for row in data):
            entries = {}
            for row in data:
                number = _question_number(_field(row, _NUMBER_NAMES, path))
                points = _optional_field(row, _POINTS_NAMES)
                entries[number] = entry_from_value(number, _field(row, _ANSWER_NAMES, path), _points(points))
            return entries
        return {index: entry_from_value(index, value) for index, value in enumerate(data, start=1)}
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


def _optional_field(row: dict, names: tuple[str, ...]) -> Any:
    return next((value for key, value in row.items() if str(key).strip().lower() in names), None)


def _points(value: Any) -> float | None:
    if value is None or str(value).strip() == "":
        return None
    try:
        points = float(str(value).strip().rstrip("점"))
    except ValueError:
        raise ValueError(f"points {value!r} is not a number") from None
    if points <= 0:
        raise ValueError(f"points {value!r} must be positive")
    return points


def _csv_key(text: str, path: Path) -> dict[int, KeyEntry]:
    lines = text.splitlines()
    if not lines:
        raise ValueError("the answer-key file is empty")
    dialect = csv.excel_tab if "\t" in lines[0] else csv.excel
    rows = [row for row in csv.reader(io.StringIO(text), dialect) if any(cell.strip() for cell in row)]
    if not rows:
        raise ValueError("the answer-key file is empty")
    header = [cell.strip().lower() for cell in rows[0]]
    number_col = next((i for i, name in enumerate(header) if name in _NUMBER_NAMES), None)
    answer_col = next((i for i, name in enumerate(header) if name in _ANSWER_NAMES), None)
    points_col = next((i for i, name in enumerate(header) if name in _POINTS_NAMES), None)
    if number_col is None or answer_col is None:
        number_col, answer_col, points_col = 0, 1, None
    else:
        rows = rows[1:]
    key: dict[int, KeyEntry] = {}
    for line_number, row in enumerate(rows, start=2):
        try:
            number = int(row[number_col].strip().rstrip(".번"))
            points = _points(row[points_col]) if points_col is not None and points_col < len(row) else None
            key[number] = entry_from_value(number, row[answer_col], points)
        except (ValueError, IndexError) as error:
            raise ValueError(f"row {line_number}: {error}") from None
    return key
