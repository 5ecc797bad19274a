"""Set: the members named, order and spacing ignored (`<보기>에서 있는 대로 고른 것은?`).

Key: `{"format": "set", "members": ["ㄱ", "ㄹ"]}`. Members are of one kind: ㄱㄴㄷ letters
(compatibility jamo; `㉠`, `(ㄱ)`, `ㄱ.` read as `ㄱ`), numbers (circled `①`–`⑩` read as
`1`–`10`, `3번` as `3`) or labels (`A`, `b`: letters, case folded).

A response's set comes from its stated final answer (`extraction.final_answer`): the run of
members at its start, members separated by nothing, spaces, commas, `/`, `·`, `와`/`과`/`및`/
`and`/`&`: `ㄱ, ㄹ`, `ㄱㄹ`, `ㄱ과 ㄹ`, `ㄱ 및 ㄹ`, `(ㄱ), (ㄹ)`, `ㄹ,ㄱ이다`, a JSON list `["ㄱ", "ㄹ"]`.
The run ends at the first word that is not a member (`ㄱ, ㄹ (ㄴ은 틀림)` is {ㄱ, ㄹ}). An answer
written one member per line, each line opening with its member (`ㄱ. 1937년 …` / `ㄷ. 전체 …`: the
statements chosen, copied), names every line's member. A response that names an option number
(`정답: ③`) for an item whose options are sets reads as that option's set.

Equal sets are `correct`; any other set, or an answer naming no member, is `wrong`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..extraction import final_answer, nfkc, strip_emphasis
from ..verdict import Verdict, decided
from .base import Extraction

_CIRCLED = re.compile("[①-⑳]")
_MEMBER_SEPARATOR = re.compile(r"\s*(?:,|、|/|;|및|\band\b)\s*")

NAME = "set"
VERSION = "set-2"

_JAMO = "ㄱㄴㄷㄹㅁㅂㅅㅇㅈㅊㅋㅌㅍㅎ"
_SEP = r"(?:\s*(?:,|、|/|·|;|및|와|과|and|&|\+)\s*|\s+)?"
_END = r"(?=$|[\s,、/·;.)\]]|및|와|과|and|&|\+|이다|입니다|이고|만|이|가|을|를|모두|{more})"
_TOKENS: dict[str, str] = {
    "jamo": rf"[(\[]?\s*(?P<m>[{_JAMO}])\s*[)\]]?\.?",
    "number": r"[(\[]?\s*(?P<m>\d{1,2})\s*[)\]]?(?:\s*번)?",
    "label": r"[(\[]?\s*(?P<m>[A-Za-z])\s*[)\]]?",
}
_MORE = {"jamo": f"[{_JAMO}(\\[]", "number": r"[(\[]", "label": r"[(\[]"}
_TOKEN_RE = {kind: re.compile(pattern + _END.replace("{more}", _MORE[kind]))
             for kind, pattern in _TOKENS.items()}
_SEP_RE = re.compile(_SEP)
_FULL_RE = {kind: re.compile(rf"^\s*{pattern}(?:{_SEP}{pattern})*\s*\.?\s*$".replace("(?P<m>", "("))
            for kind, pattern in _TOKENS.items()}
_OPTION = re.compile(r"^\s*[(\[]?\s*(\d{1,2})\s*[)\]]?\s*(?:번)?\s*$")
# a line that opens with one member and goes on with its text: `ㄱ. …`, `(ㄷ) …`, `A: …`
_LINE_MEMBER = {kind: re.compile(rf"^\s*(?:[-•*·]\s*)?{pattern}(?:(?<=[.)\]])|[.:)])\s*\S")
                for kind, pattern in _TOKENS.items()}


def member(token: Any) -> str:
    """One member as the key holds it: `㉠`/`(ㄱ)`/`ㄱ.` → `ㄱ`, `③`/`3번` → `3`, `a` → `A`."""
    text = nfkc(str(token)).strip().strip("()[].").strip()
    text = text.removesuffix("번").strip()
    return text.upper() if len(text) == 1 and text.isascii() and text.isalpha() else text


def kind_of(members: Sequence[str]) -> str:
    if all(m in _JAMO for m in members):
        return "jamo"
    if all(m.isdigit() for m in members):
        return "number"
    if all(len(m) == 1 and m.isascii() and m.isalpha() for m in members):
        return "label"
    return "other"


def read_set(answer: str, kind: str) -> list[str]:
    """The members named at the start of an answer (see the module docstring)."""
    if kind == "number":  # ③① is {1, 3}: circled numbers apart before NFKC joins them
        answer = _CIRCLED.sub(lambda m: f" {ord(m.group(0)) - 0x245F} ", answer)
    text = strip_emphasis(nfkc(answer))
    if kind == "other":
        parts = [member(part) for part in _MEMBER_SEPARATOR.split(text) if part.strip()]
        return sorted(set(parts))
    token = _TOKEN_RE[kind]
    first = token.search(text)
    if first is None:
        return []
    found = [member(first.group("m"))]
    index = first.end()
    while index < len(text):
        separator = _SEP_RE.match(text, index)
        at = separator.end() if separator else index
        match = token.match(text, at)
        if match is None:
            break
        found.append(member(match.group("m")))
        index = match.end()
    return sorted(set(found), key=_order)


def listed_members(answer: str, kind: str) -> list[str]:
    """Members of an answer written one per line, each line opening with its member (`ㄱ. …`,
    `(ㄷ) …`); [] unless there are two or more such lines and no other line."""
    if kind not in _TOKEN_RE:
        return []
    lines = [line for line in strip_emphasis(nfkc(answer)).splitlines() if line.strip()]
    opening = [_LINE_MEMBER[kind].match(line) for line in lines]
    if len(lines) < 2 or any(match is None for match in opening):
        return []
    return sorted({member(match.group("m")) for match in opening if match is not None}, key=_order)


def _order(token: str) -> tuple[int, str]:
    return (int(token), "") if token.isdigit() else (0, token)


def members_of(key: dict[str, Any]) -> list[str]:
    return sorted({member(m) for m in key.get("members") or []}, key=_order)


class SetFormat:
    name = NAME
    version = VERSION

    def instruction(self, key: dict[str, Any]) -> str:
        return ("풀이 과정을 쓴 다음, 마지막 줄에 고른 것을 모두 \\boxed{} 안에 쉼표로 구분하여 쓰십시오. "
                "예: \\boxed{ㄱ, ㄷ}.")

    def answer_text(self, key: dict[str, Any]) -> str:
        return ", ".join(members_of(key))

    def parse_key_text(self, text: str) -> dict[str, Any]:
        """`ㄴ, ㄷ, ㄹ`, `ㄱㄹ`, `①③`, `A, C` → members. Raises ValueError for anything else."""
        body = nfkc(text).strip()
        for kind, full in _FULL_RE.items():
            if full.match(body):
                return {"format": NAME, "members": read_set(body, kind)}
        raise ValueError(f"not a set of ㄱㄴㄷ letters, numbers or labels: {text!r}")

    def extract(self, visible: str, key: dict[str, Any], options: Sequence[str]) -> Extraction:
        stated = final_answer(visible)
        if stated is None:
            return Extraction(None)
        kind = kind_of(members_of(key))
        if isinstance(stated.raw, list):
            return Extraction(sorted({member(v) for v in stated.raw}, key=_order), stated.method, stated.rationale)
        found = listed_members(stated.text, kind) or read_set(stated.text, kind)
        option = _OPTION.match(nfkc(stated.text))
        if options and kind != "number" and option and 1 <= int(option.group(1)) <= len(options):
            found = read_set(options[int(option.group(1)) - 1], kind)
            return Extraction(found or stated.text, "option", stated.rationale)
        return Extraction(found or stated.text, stated.method, stated.rationale)

    def check(self, extracted: Any, key: dict[str, Any], options: Sequence[str]) -> Verdict:
        gold = members_of(key)
        if isinstance(extracted, list):
            chosen = sorted({member(v) for v in extracted}, key=_order)
        else:
            chosen = read_set(str(extracted), kind_of(gold))
        if not chosen:
            return decided(False, extracted, NAME, VERSION, "the answer names no member")
        return decided(chosen == gold, chosen, NAME, VERSION, f"chose {', '.join(chosen)}, key {', '.join(gold)}")
