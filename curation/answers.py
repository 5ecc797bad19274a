"""Reading answer-key values ("③", "3", "C", "2,4", "3번") into 1-based option numbers."""

from __future__ import annotations

import re

CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"
_LETTERS = "ABCDEFGHIJ"
_SPLIT = re.compile(r"[,/;·\s]+|(?<=[①-⑩])(?=[①-⑩])")


def circled(number: int) -> str:
    return CIRCLED[number - 1]


def parse_answer_key(value: object, n_options: int | None = None) -> int | list[int]:
    """One option number, or a sorted list for multi-answer keys. Raises ValueError."""
    if isinstance(value, bool):
        raise ValueError(f"answer {value!r} is not an option number")
    if isinstance(value, int):
        numbers = [value]
    elif isinstance(value, list):
        numbers = [_single(str(part)) for part in value]
    else:
        text = str(value).strip()
        if not text:
            raise ValueError("answer is empty")
        numbers = [_single(part) for part in _SPLIT.split(text) if part]
    if not numbers:
        raise ValueError(f"answer {value!r} names no option")
    if n_options is not None:
        for number in numbers:
            if not 1 <= number <= n_options:
                raise ValueError(f"answer {number} is not an option number 1..{n_options}")
    if len(numbers) == 1:
        return numbers[0]
    return sorted(set(numbers))


def _single(text: str) -> int:
    text = text.strip().rstrip(".)번").lstrip("(")
    if text in CIRCLED:
        return CIRCLED.index(text) + 1
    if text.isdigit():
        return int(text)
    if len(text) == 1 and text.upper() in _LETTERS:
        return _LETTERS.index(text.upper()) + 1
    raise ValueError(f"answer {text!r} is not an option number, circled digit or letter")
