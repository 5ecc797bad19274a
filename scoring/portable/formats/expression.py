"""Expression: a mathematical expression in LaTeX, compared for equivalence.

Key: `{"format": "expression", "latex": "\\\\sqrt{2dg}"}` (with or without `$…$`).

The response's stated final answer (`\\boxed{…}`, `정답: …`, …; `extraction.final_answer`) is
compared in this order, the first that decides winning:

1. the same string after normalisation (`$`, spaces, `\\left`/`\\right`, `\\dfrac` → `\\frac`,
   `\\,`, a leading `v =` when the key has no `=`): `correct`;
2. both plain numbers (`0.5`, `1/2`, `\\frac{1}{2}`, `2.72e-6`): compared exactly, as the numeric
   format compares an exact key (`formats.numeric.close_enough`);
3. Math-Verify's `parse` (the key parsed once per key string); then two expressions that take
   clearly different values (relative difference over 1e-6) at a probe point are `wrong`
   without sympy's `simplify`; else Math-Verify's `verify` decides: equal values, expressions,
   sets, intervals and equations are `correct`, anything else it reads is `wrong`. Unicode math (`√(2gd)`, `×`, `·`, `π`, `²`) is rewritten as LaTeX first,
   and adjacent one-letter symbols are made explicit on both sides (`2dg` is `2·d·g`, equal to
   `2gd`; Math-Verify alone would read `dg` as a differential).

An answer Math-Verify cannot read at all is `wrong` when it holds no mathematics, else
`undecided`. Without Math-Verify installed, what steps 1–2 cannot decide is `undecided`, saying
`pip install math-verify`. Answers over 400 characters, and powers or factorials too big to
evaluate safely, are `undecided` without being parsed; in the main thread Math-Verify's own
timeouts bound every parse and comparison (`mathverify`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from .. import mathverify
from ..extraction import final_answer
from ..numbers import parse_number
from ..verdict import Verdict, decided
from .base import Extraction
from .numeric import close_enough

_LAYOUT = re.compile(r"\\left|\\right|\\displaystyle|\\[,;:! ]|\s+|\$")
_MATH_TOKEN = re.compile(r"\\[A-Za-z]+|[\^_/+\-*]|\d|[A-Za-z]")
_HANGUL = re.compile(r"[가-힣]")
_SOME_MATH = re.compile(r"\d|\\[A-Za-z]|[=^+\-*/]")

NAME = "expression"
VERSION = "expression-2"
_LHS = re.compile(r"^\s*[A-Za-z\\][A-Za-z0-9_{}\\' ]{0,24}=(?!=)")
def normalised(latex: str) -> str:
    text = _LAYOUT.sub("", latex)
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    return text.rstrip(".")


def strip_lhs(latex: str) -> str:
    """`v_{min} = \\sqrt{2gd}` → `\\sqrt{2gd}` (one `=`, a short symbol on its left)."""
    if latex.count("=") == 1 and _LHS.match(latex):
        return latex.split("=", 1)[1].strip()
    return latex


@lru_cache(maxsize=8192)
def _gold(latex: str) -> tuple[str, str, Any]:
    """(LaTeX, normalised, Math-Verify parse or None when not installed) of a key, once."""
    text = mathverify.to_latex(latex)
    parsed = mathverify.parse_key(mathverify.split_symbols(text)) if mathverify.available() else None
    return text, normalised(text), parsed


class ExpressionFormat:
    name = NAME
    version = VERSION

    def instruction(self, key: dict[str, Any]) -> str:
        return ("풀이 과정을 쓴 다음, 마지막 줄에 최종 답을 \\boxed{} 안에 LaTeX 수식으로 쓰십시오. "
                "예: \\boxed{\\frac{\\sqrt{3}}{2}}.")

    def answer_text(self, key: dict[str, Any]) -> str:
        return str(key.get("latex", ""))

    def parse_key_text(self, text: str) -> dict[str, Any]:
        body = text.strip()
        if not body or "\n" in body.strip():
            raise ValueError(f"not one expression: {text!r}")
        latex = mathverify.to_latex(body)
        if not _MATH_TOKEN.search(latex) or _HANGUL.search(latex):
            raise ValueError(f"not an expression: {text!r}")
        return {"format": NAME, "latex": latex}

    def extract(self, visible: str, key: dict[str, Any], options: Sequence[str]) -> Extraction:
        stated = final_answer(visible)
        if stated is None:
            return Extraction(None)
        return Extraction(stated.text, stated.method, stated.rationale)

    def check(self, extracted: Any, key: dict[str, Any], options: Sequence[str]) -> Verdict:
        answer = str(extracted).strip()
        gold_latex, gold_norm, gold_parsed = _gold(str(key.get("latex", "")))
        latex = mathverify.to_latex(answer)
        if "=" not in gold_latex:
            latex = strip_lhs(latex)
        if normalised(latex) == gold_norm:
            return decided(True, answer, NAME, VERSION, "the same expression", method="string")
        gold_number, number = parse_number(gold_latex), parse_number(latex)
        if gold_number is not None and number is not None:
            ok = close_enough(number, gold_number, None, None)
            return decided(ok, answer, NAME, VERSION, f"numbers compared: {latex} vs {gold_latex}", method="number")
        if gold_parsed is None:
            return Verdict("undecided", 0.0, answer, NAME, VERSION, mathverify.MISSING)
        if not gold_parsed:
            return Verdict("undecided", 0.0, answer, NAME, VERSION, f"Math-Verify could not read the key {gold_latex!r}")
        refused = mathverify.too_big(latex)
        if refused:
            return Verdict("undecided", 0.0, answer, NAME, VERSION, refused)
        parsed = mathverify.parse(mathverify.split_symbols(latex))
        if not parsed:
            if not _SOME_MATH.search(latex):
                return decided(False, answer, NAME, VERSION, "the answer holds no mathematics", method="none")
            return Verdict("undecided", 0.0, answer, NAME, VERSION, "Math-Verify could not read the answer")
        if mathverify.differs(gold_parsed, parsed):
            return decided(False, answer, NAME, VERSION, f"differs from the key {gold_latex} (values at a probe point)",
                           method="probe")
        same = mathverify.verify(gold_parsed, parsed)
        if same is None:
            return Verdict("undecided", 0.0, answer, NAME, VERSION, "the comparison ran out of time")
        return decided(same, answer, NAME, VERSION,
                       f"{'equivalent to' if same else 'differs from'} the key {gold_latex}", method="math-verify")
