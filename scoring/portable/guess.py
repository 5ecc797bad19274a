"""An answer key guessed from an answer as a paper (or a released benchmark) writes it.

`guess_key(answer_text, question_type=None, n_options=0)` reads KMMMU's `question_type` values
(`객관식(단일정답)`, `객관식(복수정답)`, `주관식(수치/계산형)`, `주관식(텍스트)`,
`주관식(단답형 텍스트)`; anything else, or None, is guessed from the answer alone):

| answer | key |
|---|---|
| option numbers (`3`, `③`, `3번`, `2,4`) and the item has options (`n_options` > 0) | choice (복수정답 with several numbers: `require_all`) |
| ㄱㄴㄷ letters (`ㄱ,ㄹ`, `ㄴ, ㄷ, ㄹ`), or 복수정답 lines each opening with one (`ㄴ. … / ㄷ. …`) | set |
| option numbers for 복수정답 without options | set of numbers |
| one number with an optional unit (`50.0`, `7/10`, `1.0 mm`, `… = 80.5 g/L`) | numeric |
| LaTeX mathematics (`$\\sqrt{2dg}$`, `$\\frac{4}{\\sqrt{7}}$`) | expression |
| two or more labelled parts (`(1) … (2) …`, `A: … B: …`) | parts (each part guessed the same way) |
| short single-line text (at most 60 characters) | text (not strict: no match is undecided) |
| anything longer, multi-line prose | judged |

A single leading label (`(1) -4.45`, `(3) MYETERNALLIFE`) is dropped before guessing.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from .extraction import strip_label
from .registry import FORMATS

QUESTION_TYPES: dict[str, str] = {
    "객관식(단일정답)": "single",
    "객관식(복수정답)": "multiple",
    "주관식(수치/계산형)": "numeric",
    "주관식(텍스트)": "text",
    "주관식(단답형 텍스트)": "short",
}
TEXT_MAX_CHARS = 60
_JAMO_LINE = re.compile(r"^\s*[(\[]?([ㄱ-ㅎ])\s*[)\].]")
_MATH = re.compile(r"\$|\\[A-Za-z]+|\^|_\{")


_OPTION_LINE = re.compile(
    r"(?m)^[ \t]*(?:\(\s*(\d{1,2})\s*\)|(\d{1,2})\s*[.)]|([①-⑳])|\$?\\textcircled\s*\{\s*(\d{1,2})\s*\}\$?)[ \t]*(.*)$")


def options_in_text(question: str) -> list[str]:
    """The options a question's text ends with, one a line, numbered from 1 (`(1) …`, `1. …`,
    `1) …`, `① …`, `$\\textcircled{1}$ …`): the last run 1, 2, 3 … of at least two. [] if none."""
    found: list[str] = []
    best: list[str] = []
    for match in _OPTION_LINE.finditer(question):
        circled = match.group(3)
        number = int(match.group(1) or match.group(2) or match.group(4) or 0) or (ord(circled) - 0x245F)
        if number == 1:
            found = [match.group(5).strip()]
        elif found and number == len(found) + 1:
            found.append(match.group(5).strip())
        else:
            continue
        if len(found) >= 2:
            best = list(found)
    return best


def question_kind(question_type: str | None) -> str | None:
    """`single | multiple | numeric | text | short` for a KMMMU question type, else None."""
    if not question_type:
        return None
    text = re.sub(r"\s+", "", unicodedata.normalize("NFC", question_type))
    if text in QUESTION_TYPES:
        return QUESTION_TYPES[text]
    for word, kind in (("단일", "single"), ("복수", "multiple"), ("수치", "numeric"), ("계산", "numeric"),
                       ("단답", "short"), ("텍스트", "text")):
        if word in text:
            return kind
    return None


def _try(name: str, text: str) -> dict[str, Any] | None:
    try:
        return FORMATS[name].parse_key_text(text)
    except ValueError:
        return None


def _jamo_lines(text: str) -> list[str] | None:
    """`ㄴ. 추진 후 … / ㄷ. …` → [ㄴ, ㄷ]: every line or `/` piece opens with a ㄱㄴㄷ letter."""
    pieces = [piece for piece in re.split(r"\s*/\s*(?=[(\[]?[ㄱ-ㅎ]\s*[)\].])|\n+", text) if piece.strip()]
    letters = [_JAMO_LINE.match(piece) for piece in pieces]
    if not pieces or any(match is None for match in letters):
        return None
    return [match.group(1) for match in letters if match is not None]


def guess_key(answer_text: Any, question_type: str | None = None, n_options: int = 0) -> dict[str, Any]:
    """The key dict an answer means (see the module docstring). Raises ValueError for an empty
    answer."""
    text = unicodedata.normalize("NFC", str(answer_text if answer_text is not None else "")).strip()
    if not text:
        raise ValueError("an empty answer has no key")
    kind = question_kind(question_type)
    if n_options > 0 and kind not in ("numeric",):
        choice = _try("choice", text)
        if choice is not None and all(1 <= n <= n_options for n in choice["options"]):
            if kind == "multiple" and len(choice["options"]) > 1:
                choice["require_all"] = True
            return choice
    found = _try("set", text)
    if found is not None and all(m in "ㄱㄴㄷㄹㅁㅂㅅㅇㅈㅊㅋㅌㅍㅎ" for m in found["members"]):
        return found
    if kind == "multiple":
        letters = _jamo_lines(text)
        if letters:
            return {"format": "set", "members": sorted(set(letters), key="ㄱㄴㄷㄹㅁㅂㅅㅇㅈㅊㅋㅌㅍㅎ".index)}
        if found is not None:
            return found
    parts = _try("parts", text)
    if parts is not None:
        return parts
    body = strip_label(text) if "\n" not in text else text
    numeric = _try("numeric", body)
    if numeric is not None:
        return numeric
    if _MATH.search(body) and "\n" not in body and not re.search(r"[가-힣]", body):
        expression = _try("expression", body)
        if expression is not None:
            return expression
    if "\n" not in body and len(body) <= TEXT_MAX_CHARS:
        return FORMATS["text"].parse_key_text(body)
    return FORMATS["judged"].parse_key_text(text)
