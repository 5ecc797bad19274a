"""An extracted answer as a comparable string, by the key's format: what "two models gave the
same answer" means when their answers are counted (the suspects' consensus, an item's answer
shares).

- choice: the option numbers, sorted (`3`, `1,3`);
- numeric: the number stated, converted to its dimension's base unit when the unit is known
  (`1000 mm` and `1 m` are one answer), to 6 significant digits; a number without a unit is
  read in the key's unit (`30` and `30 cm` are one answer for a key in cm); an answer only
  Math-Verify reads (`\\frac{4}{\\sqrt{7}}`) as its normalised text;
- set: the members named, sorted (`ㄱ,ㄷ`);
- text: the key's normalisation (`default`: NFKC, case, spaces and punctuation folded);
- expression: the LaTeX with layout removed (`\\left`, spaces, `\\dfrac` → `\\frac`);
- judged and parts: the text normalised as `text` does.

None when nothing comparable can be read. Two answers the checker accepts alike need not be
one string here (`1/2` and `0.5` are; `x^2+2x+1` and `(x+1)^2` are not): the counts are
evidence for a person, never a verdict.
"""

from __future__ import annotations

import json
from typing import Any

from scoring.portable.formats.expression import normalised as expression_normalised
from scoring.portable.formats.numeric import key_target
from scoring.portable.formats.set import kind_of, member, members_of, read_set
from scoring.portable.formats.text import normalise, normalise_default
from scoring.portable.numbers import read_quantity, unit_info


def _number(value: Any, unit: str) -> str:
    info = unit_info(unit) if unit else None
    if info is not None:
        dimension, scale = info
        return f"{float(value * scale):.6g} [{dimension}]"
    return f"{float(value):.6g}" + (f" {unit}" if unit else "")


def _numeric(key: dict[str, Any], answer: str) -> str | None:
    quantity = read_quantity(answer)
    if quantity is None:
        text = expression_normalised(answer)
        return text or None
    unit = quantity.unit or key_target(key).unit
    return _number(quantity.number.value, unit)


def normalised_answer(key: dict[str, Any], extracted: Any) -> str | None:
    """`extracted` (a Score's, as its record or cell holds it) as the comparable string of the
    key's format (module docstring); None when there is nothing to compare."""
    if extracted is None or extracted == "" or extracted == []:
        return None
    fmt = key.get("format")
    if fmt == "choice":
        numbers = extracted if isinstance(extracted, list) else [extracted]
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
            return None
        return ",".join(str(n) for n in sorted(set(numbers)))
    if fmt == "set":
        members = ([member(m) for m in extracted] if isinstance(extracted, list)
                   else read_set(str(extracted), kind_of(members_of(key))))
        return ",".join(sorted(set(members))) or None
    text = extracted if isinstance(extracted, str) else json.dumps(extracted, ensure_ascii=False)
    if fmt == "numeric":
        return _numeric(key, text)
    if fmt == "text":
        return normalise(text, str(key.get("normalise") or "default")) or None
    if fmt == "expression":
        return expression_normalised(text) or None
    return normalise_default(text) or None


def normalised_key(key: dict[str, Any]) -> list[str]:
    """The key's own answers as `normalised_answer` writes them (a text key: each accepted one)."""
    fmt = key.get("format")
    if fmt == "choice":
        options = sorted(key.get("options") or [])
        return ([",".join(map(str, options))] if key.get("require_all") or len(options) == 1
                else [str(n) for n in options])
    if fmt == "numeric":
        goal = key_target(key)
        if goal.number is not None:
            return [_number(goal.number.value, goal.unit)]
        return [expression_normalised(str(key.get("value", "")))]
    if fmt == "set":
        return [",".join(sorted(members_of(key)))]
    if fmt == "text":
        how = str(key.get("normalise") or "default")
        return [form for form in (normalise(a, how) for a in key.get("accepted") or []) if form]
    if fmt == "expression":
        return [expression_normalised(str(key.get("latex", "")))]
    if fmt == "judged":
        return [normalise_default(str(key.get("reference", "")))]
    return []
