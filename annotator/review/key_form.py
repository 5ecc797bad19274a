"""The answer-key editor's fields: a typed key (scoring/keys.py) as the values of its format's
controls, and those values back as a key, with what is wrong said in Korean and in English.

The review page sends the `answer` field as a *form*: `{"key_form": FORMAT, CONTROL: value, …}`,
the format chosen in the selector and that format's controls as typed. `key_of` makes the key
(a validated dict) or raises KeyFormError; `controls_of` gives every control's value for a key:
its own format's exactly, the other formats' read from the key's text (so switching the format
starts from something). Pure: no Gradio here (key_editor.py lays the controls out).

A multi-part key is edited as lines `LABEL: ANSWER [format]`: each answer read by its format's
`parse_key_text` (the format in brackets, else the first format that reads it), and a line left
as it was keeps its part whole (a numeric part keeps its tolerance).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from scoring.keys import KEY_FORMATS, parse_key
from scoring.portable import FORMATS, answer_text
from scoring.portable.formats.parts import PartsFormat
from scoring.portable.numbers import parse_number

FORM = "key_form"  # the marker of a form: its value is the chosen format ("" for no key)
NO_KEY = ""
CONTROLS: dict[str, tuple[str, ...]] = {
    "choice": ("choice_options", "choice_require_all"),
    "numeric": ("numeric_value", "numeric_tolerance", "numeric_relative_tolerance", "numeric_unit"),
    "text": ("text_accepted", "text_strict", "text_exact"),
    "set": ("set_members",),
    "expression": ("expression_latex",),
    "judged": ("judged_reference", "judged_rubric"),
    "parts": ("parts_lines",),
}
CHECKBOXES = frozenset({"choice_require_all", "text_strict", "text_exact"})
ALL_CONTROLS: tuple[str, ...] = tuple(name for names in CONTROLS.values() for name in names)
FORMAT_LABELS: dict[str, str] = {
    "choice": "선다형 · choice", "numeric": "수치 · numeric", "text": "단답 · short text", "set": "ㄱㄴㄷ 묶음 · set",
    "expression": "수식 · expression", "judged": "판정 · judged", "parts": "여러 부분 · parts", NO_KEY: "정답 없음 · no key",
}
FORM_LABEL_ORDER: tuple[str, ...] = (*CONTROLS, NO_KEY)  # the format selector's choices, in order
PART_FORMATS = tuple(name for name in KEY_FORMATS if name != "parts")
_NUMBER_LIKE = re.compile(r"\d|\\(?:pi|sqrt|frac)|π")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_PART_LINE = re.compile(r"^\s*(?P<label>[^:]+?)\s*:\s*(?P<text>.*?)\s*(?:\[(?P<format>[a-z]+)\])?\s*$")
_MATH_DELIMITERS = re.compile(r"^\s*(?:\$\$(.*)\$\$|\$(.*)\$|\\\((.*)\\\)|\\\[(.*)\\\])\s*$", re.DOTALL)


class KeyFormError(ValueError):
    """A form that makes no key of its format (the message: Korean · English)."""


def is_form(value: Any) -> bool:
    return isinstance(value, dict) and FORM in value


def make_form(key_format: str, controls: Mapping[str, Any]) -> dict[str, Any]:
    """The `answer` edit the page sends: the chosen format and its controls' values."""
    return {FORM: key_format or NO_KEY, **{name: controls.get(name) for name in CONTROLS.get(key_format, ())}}


# -- a key → its controls -----------------------------------------------------------------------------
def controls_of(key: Any) -> dict[str, Any]:
    """{"format": …, CONTROL: value} for every control: a key's own format exactly, the others
    read from its text where that format reads it (else empty). A form gives its values as typed."""
    if is_form(key):
        values = _empty()
        values.update({name: key[name] for name in ALL_CONTROLS if name in key and key[name] is not None})
        values["format"] = key[FORM]
        return values
    if key is None or not isinstance(key, dict) or key.get("format") not in CONTROLS:
        return {**_empty(), "format": NO_KEY}
    text = answer_text(key)
    values = _empty()
    for other in CONTROLS:
        if other != key["format"] and text:
            try:
                values.update(_controls(FORMATS[other].parse_key_text(text)))
            except (ValueError, KeyError):
                continue
    values.update(_controls(key))
    values["format"] = key["format"]
    return values


def _empty() -> dict[str, Any]:
    return {name: (False if name in CHECKBOXES else "") for name in ALL_CONTROLS}


def _number_text(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _controls(key: dict[str, Any]) -> dict[str, Any]:
    kind = key.get("format")
    if kind == "choice":
        return {"choice_options": ", ".join(str(n) for n in key.get("options") or []),
                "choice_require_all": bool(key.get("require_all"))}
    if kind == "numeric":
        return {"numeric_value": str(key.get("value") or ""), "numeric_tolerance": _number_text(key.get("tolerance")),
                "numeric_relative_tolerance": _number_text(key.get("relative_tolerance")),
                "numeric_unit": key.get("unit") or ""}
    if kind == "text":
        return {"text_accepted": "\n".join(str(a) for a in key.get("accepted") or []),
                "text_strict": bool(key.get("strict")), "text_exact": key.get("normalise") == "exact"}
    if kind == "set":
        return {"set_members": ", ".join(key.get("members") or [])}
    if kind == "expression":
        return {"expression_latex": key.get("latex") or ""}
    if kind == "judged":
        return {"judged_reference": key.get("reference") or "", "judged_rubric": key.get("rubric") or ""}
    if kind == "parts":
        return {"parts_lines": parts_lines(key)}
    return {}


def parts_lines(key: dict[str, Any]) -> str:
    """A parts key as lines `LABEL: ANSWER [format]`."""
    parts = key.get("parts") or []
    labels = key.get("labels") or [f"({n})" for n in range(1, len(parts) + 1)]
    return "\n".join(f"{label}: {answer_text(part)} [{part.get('format')}]"
                     for label, part in zip(labels, parts, strict=False))


# -- controls → a key ------------------------------------------------------------------------------------
def key_of(form: Mapping[str, Any], current: Any = None) -> dict[str, Any] | None:
    """The key a form makes (a validated key dict), None for "no key". `current`: the item's key
    now (a multi-part key's unchanged lines keep its parts whole). Raises KeyFormError."""
    kind = str(form.get(FORM) or NO_KEY)
    if kind == NO_KEY:
        return None
    builders = {"choice": _choice, "numeric": _numeric, "text": _text, "set": _set, "expression": _expression,
                "judged": _judged}
    if kind == "parts":
        data = _parts(form, current if isinstance(current, dict) else None)
    elif kind in builders:
        data = builders[kind](form)
    else:
        raise KeyFormError(f"정답 형식 {kind!r}을(를) 모릅니다 · unknown key format {kind!r} "
                           f"(one of {', '.join(CONTROLS)})")
    try:
        return parse_key(data).as_dict()
    except ValidationError as error:
        problem = error.errors()[0]
        where = ".".join(str(part) for part in problem["loc"][1:]) or kind
        raise KeyFormError(f"정답이 올바르지 않습니다 · invalid {kind} key: {where}: {problem['msg']}") from None


def _text_of(form: Mapping[str, Any], name: str) -> str:
    value = form.get(name)
    return "" if value is None else str(value).strip()


def _choice(form: Mapping[str, Any]) -> dict[str, Any]:
    text = _text_of(form, "choice_options")
    if not text:
        raise KeyFormError("정답 번호를 적으세요 · give the key's option numbers (3, or 1, 3)")
    try:
        options = FORMATS["choice"].parse_key_text(text)["options"]
    except ValueError:
        raise KeyFormError(f"정답 번호 {text!r}: 3 또는 1, 3 처럼 보기 번호를 적으세요 · "
                           "give option numbers such as 3 or 1, 3") from None
    return {"format": "choice", "options": options, "require_all": bool(form.get("choice_require_all"))}


def _numeric(form: Mapping[str, Any]) -> dict[str, Any]:
    value, unit = _text_of(form, "numeric_value"), _text_of(form, "numeric_unit")
    if not value:
        raise KeyFormError("수치 정답을 적으세요 · give the numeric answer")
    if parse_number(value) is None:
        try:  # `9.8 ℃/km` typed into the value: the number, and the unit when none is given
            read = FORMATS["numeric"].parse_key_text(value)
        except ValueError:
            read = None
        if read is not None and (read["unit"] is None or not unit or read["unit"] == unit):
            value, unit = read["value"], unit or read["unit"] or ""
        elif not _NUMBER_LIKE.search(value) or _HANGUL.search(value):
            raise KeyFormError(f"수치 정답 {value!r}: 숫자가 아닙니다 · not a number (write 28.8, 1/2 or \\frac{{1}}{{2}})")
    return {"format": "numeric", "value": value,
            "tolerance": _amount(form, "numeric_tolerance", "허용 오차", "tolerance"),
            "relative_tolerance": _amount(form, "numeric_relative_tolerance", "상대 허용 오차", "relative tolerance",
                                          percent=True),
            "unit": unit or None}


def _amount(form: Mapping[str, Any], name: str, korean: str, english: str, percent: bool = False) -> float | None:
    text = _text_of(form, name).lstrip("±").strip()
    if not text:
        return None
    scale = 1.0
    if percent and text.endswith("%"):
        text, scale = text[:-1].strip(), 0.01
    try:
        amount = float(text) * scale
    except ValueError:
        amount = -1.0
    if not amount >= 0:
        raise KeyFormError(f"{korean} {_text_of(form, name)!r}: 0 이상의 숫자를 적으세요 · {english} must be a number ≥ 0"
                           + (" (0.01 or 1%)" if percent else ""))
    return amount


def _text(form: Mapping[str, Any]) -> dict[str, Any]:
    accepted = [line.strip() for line in str(form.get("text_accepted") or "").splitlines() if line.strip()]
    if not accepted:
        raise KeyFormError("인정할 답을 한 줄에 하나씩 적으세요 · give the accepted answers, one per line")
    return {"format": "text", "accepted": accepted, "strict": bool(form.get("text_strict")),
            "normalise": "exact" if form.get("text_exact") else "default"}


def _set(form: Mapping[str, Any]) -> dict[str, Any]:
    text = _text_of(form, "set_members")
    try:
        return FORMATS["set"].parse_key_text(text)
    except ValueError:
        raise KeyFormError(f"묶음 정답 {text!r}: ㄱ, ㄷ 처럼 적으세요 · give the members such as ㄱ, ㄷ "
                           "(or ①③, or A, C)") from None


def expression_latex(text: str) -> str:
    """The LaTeX of an expression as typed: `$…$`, `\\(…\\)` or `\\[…\\]` around it taken off."""
    match = _MATH_DELIMITERS.match(text)
    if match:
        text = next(group for group in match.groups() if group is not None)
    return text.strip()


def latex_problems(latex: str) -> list[str]:
    """What keeps an expression from rendering (none: it renders)."""
    from curation.extract.latex_check import formula_problems

    return formula_problems(latex)


def _expression(form: Mapping[str, Any]) -> dict[str, Any]:
    latex = expression_latex(_text_of(form, "expression_latex"))
    if not latex:
        raise KeyFormError("수식 정답을 LaTeX로 적으세요 · give the expression in LaTeX")
    problems = latex_problems(latex)
    if problems:
        raise KeyFormError(f"수식을 읽을 수 없습니다 · the LaTeX does not render: {'; '.join(problems)}")
    return {"format": "expression", "latex": latex}


def _judged(form: Mapping[str, Any]) -> dict[str, Any]:
    reference = _text_of(form, "judged_reference")
    if not reference:
        raise KeyFormError("모범 답안을 적으세요 · give the reference answer")
    return {"format": "judged", "reference": reference, "rubric": _text_of(form, "judged_rubric") or None}


def _parts(form: Mapping[str, Any], current: dict[str, Any] | None) -> dict[str, Any]:
    lines = [line for line in str(form.get("parts_lines") or "").splitlines() if line.strip()]
    kept = current.get("parts") or [] if current is not None and current.get("format") == "parts" else []
    labels, parts = [], []
    for index, line in enumerate(lines):
        match = _PART_LINE.match(line)
        if match is None or not match.group("text"):
            raise KeyFormError(f"{index + 1}번째 줄 {line.strip()!r}: '(1): 답' 처럼 적으세요 · "
                               "write each part as 'LABEL: ANSWER', e.g. (1): 3.2 m")
        label, text, named = match.group("label"), match.group("text"), match.group("format")
        if named is not None and named not in PART_FORMATS:
            raise KeyFormError(f"{index + 1}번째 줄: 형식 [{named}]을(를) 모릅니다 · unknown part format [{named}] "
                               f"(one of {', '.join(PART_FORMATS)})")
        before = kept[index] if index < len(kept) else None
        if before is not None and answer_text(before) == text and named in (None, before.get("format")):
            part = before  # unchanged: kept whole (tolerance, strictness, rubric)
        else:
            part = _part(text, named, index)
        labels.append(label)
        parts.append(part)
    if len(parts) < 2:
        raise KeyFormError("여러 부분 정답은 두 줄 이상입니다 · a multi-part key needs two or more lines")
    return {"format": "parts", "parts": parts, "labels": labels}


def _part(text: str, named: str | None, index: int) -> dict[str, Any]:
    if named is None:
        parts_format = FORMATS["parts"]
        assert isinstance(parts_format, PartsFormat)
        return parts_format.guess_part(text)
    try:
        return FORMATS[named].parse_key_text(text)
    except ValueError as error:
        raise KeyFormError(f"{index + 1}번째 줄: {text!r}은(는) {FORMAT_LABELS[named]} 답이 아닙니다 · "
                           f"not a {named} answer ({error})") from None


# -- points ---------------------------------------------------------------------------------------------
def points_of(value: Any) -> float | None:
    """배점 as typed (a number, "4", "" for none). Raises KeyFormError."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        points = float(str(value).strip().removesuffix("점").strip())
    except ValueError:
        raise KeyFormError(f"배점 {value!r}: 숫자를 적으세요 · points must be a number") from None
    if not points > 0:
        raise KeyFormError(f"배점 {value!r}: 0보다 커야 합니다 · points must be greater than 0")
    return int(points) if points.is_integer() else points


def same_points(value: Any, stored: Any) -> bool:
    try:
        return points_of(value) == points_of(stored)
    except KeyFormError:
        return False
