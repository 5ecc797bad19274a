"""Numeric: one number, with an optional unit and tolerance.

Key: `{"format": "numeric", "value": "0.012", "tolerance": null, "relative_tolerance": null,
"unit": "m"}`; `value` as the paper writes it: `7`, `0.5`, `1/2`, `1,000`, `50.0`, `12%`,
`1.5e-3`, `2.72 \\times 10^{-6}`, or LaTeX such as `$\\frac{4}{\\sqrt{7}}$`.

What a response may state (its final answer, `extraction.final_answer`): a number in any of the
forms above, LaTeX included (`\\boxed{\\frac{1}{2}}`, `$2.72 \\times 10^{-6}$`, `2.72×10⁻⁶`),
after an `=` (`v = 3.2 m/s`: the part after the last `=`, `≈` or `:`), with `약`/`about`, with
a unit and Korean endings (`30 cm이다`). Plain numbers are read with the standard library
(`numbers`); LaTeX the standard library cannot read (`\\frac{4\\sqrt{7}}{7}`, `\\sqrt{2}`) goes to
Math-Verify, which must then be installed (`undecided` otherwise, saying so).

**When is it equal?** With a tolerance in the key: |answer - key| <= `tolerance`, or
<= `relative_tolerance` x |key| (either one suffices). Without one, **the key's written
precision decides**:

- a key written with decimals or in scientific notation is a rounded value: the answer must be
  within half a unit of the key's last digit (`0.012` accepts `0.0120` and `0.0124`, not `0.013`;
  `50.0` accepts `50`; `2.72e-6` accepts `2.724e-6`);
- a key that is an integer, a fraction or an expression is exact: an exact answer must equal it;
  a decimal answer counts when it is the key correctly rounded to the answer's own digits, with
  at least 2 significant digits (`1/3` accepts `0.33` and `0.3333`, not `0.3`; `11` rejects `11.4`).

**Units.** A response without a unit is compared by its number. A response unit and a key unit
from the same dimension of the unit table are converted (`1000 mm` equals `1 m`); from different
dimensions (`kg` for `m`) the answer is `wrong`. A unit outside the table is compared as written
and otherwise ignored (the number decides). A response in `%` for a key without a unit is read
both as the number and as its hundredth (`50%` for `0.5` or `50`).

The key is parsed once per distinct key (`functools.lru_cache`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from .. import mathverify
from ..extraction import final_answer, strip_label
from ..numbers import (
    Number,
    Quantity,
    clean,
    final_segment,
    normalise_unit,
    parse_number,
    read_quantity,
    split_value_unit,
    unit_info,
)
from ..verdict import Verdict, decided
from .base import Extraction

_NUMBER_LIKE = re.compile(r"\d|\\(?:pi|sqrt|frac)|π")
_DIGIT = re.compile(r"\d")

NAME = "numeric"
VERSION = "numeric-3"
_HAS_QUANTITY = re.compile(r"\d|\\frac|\\sqrt|π|[一二三四五六七八九十]")


@dataclass(frozen=True)
class NumericTarget:
    number: Number | None  # read by the standard library
    latex: str | None  # what only Math-Verify reads (its value is taken at check time)
    unit: str  # normalised
    tolerance: Fraction | None
    relative: Fraction | None


def _split_value_unit(text: str) -> tuple[str, str]:
    """`1.0 mm` → (`1.0`, `mm`); the text as it is (and no unit) when it is not number + unit."""
    split = split_value_unit(text)
    return split if split is not None else (text, "")


@lru_cache(maxsize=8192)
def target(value: str, unit: str | None, tolerance: float | None, relative: float | None) -> NumericTarget:
    """A numeric key, parsed once."""
    number = parse_number(value)
    written_unit = unit or ""
    latex: str | None = None
    if number is None:
        number_text, found_unit = _split_value_unit(value)
        number = parse_number(number_text)
        written_unit = written_unit or found_unit
        if number is None:
            latex = mathverify.to_latex(value)
    return NumericTarget(number, latex, normalise_unit(written_unit) if written_unit else "",
                         Fraction(str(tolerance)) if tolerance is not None else None,
                         Fraction(str(relative)) if relative is not None else None)


def key_target(key: dict[str, Any]) -> NumericTarget:
    return target(str(key.get("value", "")), key.get("unit"), key.get("tolerance"), key.get("relative_tolerance"))


def close_enough(answer: Number, gold: Number, tolerance: Fraction | None, relative: Fraction | None,
                 scale: Fraction = Fraction(1)) -> bool:
    """The equality rule of the module docstring; `scale` converts the answer to the key's unit."""
    value = answer.value * scale
    diff = abs(value - gold.value)
    if tolerance is not None or relative is not None:
        return ((tolerance is not None and diff <= tolerance)
                or (relative is not None and diff <= relative * abs(gold.value)))
    if diff == 0 or diff <= abs(gold.value) * Fraction(1, 10**12):
        return True
    if not gold.exact:
        return diff <= gold.half_unit()
    if not answer.exact and answer.significant >= 2:
        return diff <= answer.half_unit() * abs(scale)
    return False


def _undecided(extracted: Any, explanation: str) -> Verdict:
    return Verdict("undecided", 0.0, extracted, NAME, VERSION, explanation)


def _gold_number(goal: NumericTarget) -> Number | str:
    """The key's number, or why it cannot be had (Math-Verify missing, not a number)."""
    if goal.number is not None:
        return goal.number
    if not mathverify.available():
        return mathverify.MISSING
    value = mathverify.key_value(goal.latex or "")
    if value is None:
        return f"the key {goal.latex!r} is not a number Math-Verify can evaluate"
    return Number(value, True)


def _answer_number(answer: str) -> Quantity | str | None:
    """The answer's quantity; a reason string when it needs Math-Verify and cannot have it;
    None when it holds no number at all."""
    quantity = read_quantity(answer)
    if quantity is not None:
        return quantity
    segment = final_segment(clean(answer))
    if not _NUMBER_LIKE.search(segment):
        return None
    latex = mathverify.to_latex(final_segment(strip_label(answer)))
    refused = mathverify.too_big(latex)
    if refused:
        return refused
    if not mathverify.available():
        return mathverify.MISSING
    value = mathverify.numeric_value(mathverify.parse(latex))
    return Quantity(Number(value, True)) if value is not None else None


def compare(answer: Quantity, goal: NumericTarget, gold: Number) -> tuple[bool, str]:
    """(equal, why) — units first, then the number."""
    scales = [Fraction(1)]
    note = ""
    if answer.unit and goal.unit and answer.unit != goal.unit:
        mine, theirs = unit_info(answer.unit), unit_info(goal.unit)
        if mine and theirs:
            if mine[0] != theirs[0]:
                return False, f"; unit {answer.unit} contradicts the key's {goal.unit}"
            scales = [mine[1] / theirs[1]]
            note = f" (converted {answer.unit} → {goal.unit})"
        else:
            note = f" (unit {answer.unit} not compared with {goal.unit})"
    elif answer.unit == "%" and not goal.unit:
        scales = [Fraction(1), Fraction(1, 100)]
    ok = any(close_enough(answer.number, gold, goal.tolerance, goal.relative, scale) for scale in scales)
    return ok, note


class NumericFormat:
    name = NAME
    version = VERSION

    def instruction(self, key: dict[str, Any]) -> str:
        unit = key.get("unit")
        unit_text = f" 단위({unit})는 상자 밖에 써도 됩니다." if unit else ""
        return ("풀이 과정을 쓴 다음, 마지막 줄에 최종 답을 \\boxed{} 안에 수치로 쓰십시오. "
                f"예: \\boxed{{12.5}}.{unit_text}")

    def answer_text(self, key: dict[str, Any]) -> str:
        value, unit = str(key.get("value", "")), key.get("unit")
        return f"{value} {unit}" if unit else value

    def parse_key_text(self, text: str) -> dict[str, Any]:
        """`50.0` → value 50.0; `1.0 mm` → value 1.0, unit mm; `c) X = … = 80.5 g/L` → the
        value after the last `=`; `A의 속도: 3 m/s` → the value after a label ending in `:`.
        Raises ValueError when the text is not one number (+ unit)."""
        body = clean(strip_label(text.strip()))
        if "=" in body:
            body = body.rsplit("=", 1)[1].strip()
        head, colon, tail = body.rpartition(":")
        if colon and not _DIGIT.search(head):
            body = tail.strip()
        number_text, unit = _split_value_unit(body)
        if parse_number(number_text) is None:
            raise ValueError(f"not a number: {text!r}")
        return {"format": NAME, "value": number_text, "tolerance": None, "relative_tolerance": None,
                "unit": unit or None}

    def extract(self, visible: str, key: dict[str, Any], options: Sequence[str]) -> Extraction:
        stated = final_answer(visible)
        if stated is None or (stated.method == "bare" and not _HAS_QUANTITY.search(stated.text)):
            # a reply that is only words ("잘 모르겠습니다.") states no answer: unparseable, not wrong
            return Extraction(None)
        return Extraction(stated.text, stated.method, stated.rationale)

    def check(self, extracted: Any, key: dict[str, Any], options: Sequence[str]) -> Verdict:
        answer = str(extracted).strip() if not isinstance(extracted, str) else extracted.strip()
        goal = key_target(key)
        gold = _gold_number(goal)
        if isinstance(gold, str):
            return _undecided(answer, gold)
        quantity = _answer_number(answer)
        if quantity is None:
            return decided(False, answer, NAME, VERSION, "the answer states no number")
        if isinstance(quantity, str):
            return _undecided(answer, quantity)
        ok, note = compare(quantity, goal, gold)
        shown = f"{float(quantity.number.value):.6g}{' ' + quantity.unit if quantity.unit else ''}"
        return decided(ok, answer, NAME, VERSION, f"read {shown}, key {self.answer_text(key)}{note}",
                       value_read=shown)
