"""Keys guessed from answers as papers write them (`guess_key`), the typed side (`scoring.keys`),
and the guesses on the real KMMMU answers (skipped without ../shared/realdata)."""

from __future__ import annotations

import csv
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from scoring import key_from_text, key_text, parse_key
from scoring.portable import guess_key, options_in_text, score_response


@pytest.mark.parametrize(("answer", "question_type", "n_options", "expected"), [
    ("3", "객관식(단일정답)", 4, {"format": "choice", "options": [3], "require_all": False}),
    ("④", "객관식(단일정답)", 5, {"format": "choice", "options": [4], "require_all": False}),
    ("2,4", "객관식(복수정답)", 5, {"format": "choice", "options": [2, 4], "require_all": True}),
    ("1, 3", "객관식(단일정답)", 4, {"format": "choice", "options": [1, 3], "require_all": False}),
    ("ㄱ,ㄹ", "객관식(복수정답)", 0, {"format": "set", "members": ["ㄱ", "ㄹ"]}),
    ("ㄴ, ㄷ, ㄹ", None, 0, {"format": "set", "members": ["ㄴ", "ㄷ", "ㄹ"]}),
    ("ㄴ. 위성의 속력은 P에서가 크다. / ㄷ. $x$ 이다.", "객관식(복수정답)", 0, {"format": "set", "members": ["ㄴ", "ㄷ"]}),
    ("1, 3", "객관식(복수정답)", 0, {"format": "set", "members": ["1", "3"]}),
    ("50.0", "주관식(수치/계산형)", 0, {"format": "numeric", "value": "50.0", "unit": None}),
    ("7/10", "주관식(수치/계산형)", 0, {"format": "numeric", "value": "7/10"}),
    ("1.0 mm", "주관식(수치/계산형)", 0, {"format": "numeric", "value": "1.0", "unit": "mm"}),
    ("(1) -4.45", "주관식(수치/계산형)", 0, {"format": "numeric", "value": "-4.45"}),
    ("$\\frac{4}{\\sqrt{7}}$", "주관식(수치/계산형)", 0, {"format": "expression", "latex": "\\frac{4}{\\sqrt{7}}"}),
    ("$\\sqrt{2dg}$", None, 0, {"format": "expression", "latex": "\\sqrt{2dg}"}),
    ("43614952", "주관식(텍스트)", 0, {"format": "numeric", "value": "43614952"}),
    ("(3) MYETERNALLIFE", "주관식(텍스트)", 0, {"format": "text", "accepted": ["MYETERNALLIFE"]}),
    ("미토콘드리아", "주관식(단답형 텍스트)", 0, {"format": "text", "accepted": ["미토콘드리아"], "strict": False}),
    ("A: 농협, B: 수협", "주관식(텍스트)", 0, {"format": "parts", "labels": ["A:", "B:"]}),
    ("(1) 조면 소포체가 단백질을 합성한다.\n(2) 핵인에서 rRNA를 합성한다.\n(3) 액포가 저장한다.", "주관식(텍스트)", 0,
     {"format": "parts", "labels": ["(1)", "(2)", "(3)"]}),
    ("첫째 줄의 긴 서술형 답안이다.\n둘째 줄에서 이유를 길게 설명한다.", "주관식(텍스트)", 0, {"format": "judged"}),
    ("x" * 80, "주관식(텍스트)", 0, {"format": "judged"}),
])
def test_guess_key(answer: str, question_type: str | None, n_options: int, expected: dict[str, Any]) -> None:
    key = guess_key(answer, question_type, n_options)
    for field, value in expected.items():
        assert key[field] == value, key
    assert parse_key(key).format == key["format"]  # every guess is a valid typed key


def test_guess_key_refuses_an_empty_answer() -> None:
    with pytest.raises(ValueError):
        guess_key("  ", "주관식(텍스트)")


def test_options_in_text() -> None:
    question = "다음 중 옳은 것은?\n\n선택지:\n(1) 10m\n(2) 30m\n(3) 50m\n(4) 100m"
    assert options_in_text(question) == ["10m", "30m", "50m", "100m"]
    assert options_in_text("무엇인가?\n① ㄱ, ㄴ\n② ㄱ, ㄹ\n③ ㄴ, ㄷ") == ["ㄱ, ㄴ", "ㄱ, ㄹ", "ㄴ, ㄷ"]
    assert options_in_text("설명하시오.") == []


def test_typed_keys_share_the_portable_text_and_guess() -> None:
    key = key_from_text("1.0 mm", "주관식(수치/계산형)")
    assert key.format == "numeric" and key_text(key) == "1.0 mm" == key.text()
    parts = parse_key({"format": "parts", "parts": [{"format": "numeric", "value": "2"},
                                                   {"format": "set", "members": ["ㄴ"]}]})
    assert parts.text() == "(1) 2 (2) ㄴ"


def _kmmmu_rows(folder: Path) -> list[dict[str, str]]:
    rows = []
    for path in sorted((folder / "kmmmu_judge").glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                rows.append({k: unicodedata.normalize("NFC", v or "") for k, v in row.items() if k})
    return rows


@pytest.mark.realdata
def test_real_kmmmu_answers_get_valid_keys_and_every_response_a_score(realdata: Path) -> None:
    rows = _kmmmu_rows(realdata)
    assert len(rows) >= 400
    formats: Counter[str] = Counter()
    agree = decided = 0
    for row in rows:
        options = options_in_text(row["question"])
        key = guess_key(row["answer"], row["question_type"], len(options))
        parse_key(key)
        formats[key["format"]] += 1
        verdict = score_response(key, row["response"], options=options)
        if verdict.decided and key["format"] in ("choice", "set"):
            decided += 1
            agree += verdict.outcome == ("correct" if row["is_correct"].strip().lower() == "true" else "wrong")
    # every format the answers call for is used, choice and set carry the multiple-choice items
    assert {"choice", "set", "numeric", "expression", "text", "parts", "judged"} <= set(formats)
    assert formats["choice"] + formats["set"] >= 150
    # the LLM judge and the checkers agree on nearly every decided choice and set verdict (the
    # judge's few misses are its own: a looping response it called correct, a wrong option set)
    assert decided >= 120 and agree / decided >= 0.95
