"""Choice: option numbers (1-based). With several listed options any one is correct, unless
the key requires all of them; then the chosen set must be exactly the listed one.

Key: `{"format": "choice", "options": [3], "require_all": false}`.

What a response may state, in this order:

1. a stated final answer (`정답: …`, boxed, JSON, a reply that is only the answer) that is
   exactly one option's text, normalised (NFKC, case, spaces and punctuation folded, a leading
   option marker ignored): `정답: D 플립플롭` is option 1 when option 1 is `D 플립플롭`
   (before 2, which would read its `D` as option 4);
2. the option parser (`choice_parsing.parse_response`): JSON, Korean and English answer
   statements (`정답: ③`, `정답은 3번입니다`, `Answer: C`), a reply that is only an option;
   rejected candidates (`3번이 아니라`) never count;
3. failing that, the stated final answer read as option tokens (`\\boxed{3}`, `\\boxed{③}`,
   `\\boxed{1, 3}`); or opening with one option's marker followed by text, as a person reads a
   reply that copies an option (`(3) C`, `③ 볼록하게 처리한 필릿 용접`, `(1) $mL^2\\theta…$`: the
   marker is the answer; when the text after it is another option's, the answer contradicts itself
   and is none; an answer listing several marked lines is not read so); or as text containing
   exactly one option's text.

A response that loops (`extraction.loop_span`): when the repeated part itself states one answer
(`따라서 정답은 ④` again and again) the response keeps to it; when it states two or more different
options (`정답은 (1) …` … `정답은 (3) …` … again) it cycles between answers and never commits (no
answer: `unparseable`); when it states none, only what came before the loop counts.
Two options named for a single-answer key are `wrong` (the chosen set must be within the key's
options, and for `require_all` equal to them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ..choice_parsing import parse_response, stated_options, to_option
from ..extraction import final_answer, loop_span, nfkc, strip_emphasis
from ..verdict import Verdict, decided
from .base import Extraction

LOOP_READ_MARGIN = 200
_OPTION_SEPARATOR = re.compile(r"\s*(?:,|、|및|와|과|and)\s*")
_LATIN = re.compile(r"[A-Za-z]")

NAME = "choice"
VERSION = "choice-3"
_MARKER = re.compile(r"^\s*(?:[(\[]?\s*(?:\d{1,2}|[A-Ea-e])\s*[)\].]|[①-⑳])\s*")
_NOT_WORD = re.compile(r"[\W_]+")
_TOKEN = re.compile(r"^\s*[(\[]?\s*(?:\d{1,2}|[A-E]|[①-⑳])\s*[)\]]?\s*(?:번)?\s*[.]?\s*$")
# an option's marker opening an answer: (3) / [3] / 3) / 3번 / ③, then the text on that line
_MARKED = re.compile(r"^\s*(?:[(\[]\s*(?P<a>\d{1,2})\s*[)\]]|(?P<b>\d{1,2})\)|(?P<c>\d{1,2})\s*번(?![가-힣])|(?P<d>[①-⑩]))"
                     r"[ \t]*(?P<rest>[^\n]*)")
_MARKED_LINE = re.compile(r"(?m)^\s*(?:[(\[]\s*\d{1,2}\s*[)\]]|\d{1,2}\)|[①-⑩])")


def listed(key: dict[str, Any]) -> list[int]:
    return [int(number) for number in key.get("options") or []]


def accepts(key: dict[str, Any], chosen: int | list[int] | set[int] | None) -> bool:
    answers = set(listed(key))
    if chosen is None or not answers:
        return False
    picked = {chosen} if isinstance(chosen, int) else set(chosen)
    if not picked:
        return False
    return picked == answers if key.get("require_all") else picked <= answers


def fold(text: str) -> str:
    """Option text for comparison: NFKC, case, markdown, spaces and punctuation folded."""
    return _NOT_WORD.sub("", strip_emphasis(nfkc(text)).casefold())


@lru_cache(maxsize=4096)
def _folded_options(options: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(fold(_MARKER.sub("", option, count=1)) for option in options)


def _option_texts(options: Sequence[str]) -> tuple[str, ...]:
    return _folded_options(tuple(str(option) for option in options))


def option_by_text(answer: str, options: Sequence[str], contained: bool = False) -> int | None:
    """The option whose text the answer is (or, with `contained`, the one option whose text
    the answer contains), 1-based; None when none or several fit."""
    if not options or _TOKEN.match(nfkc(answer)):
        return None
    texts = _option_texts(options)
    folded = fold(answer)
    if not folded:
        return None
    same = [index for index, text in enumerate(texts, 1) if text and text == folded]
    if len(same) == 1:
        return same[0]
    if contained and not same:
        inside = [index for index, text in enumerate(texts, 1) if len(text) >= 2 and text in folded]
        if len(inside) == 1:
            return inside[0]
    return None


def marked_option(answer: str, options: Sequence[str]) -> int | None:
    """The option whose marker opens the answer, followed by text (`(3) C`), 1-based; None when
    there is no marker, no text after it, or another marked line; 0 when the text after the
    marker is another option's (the answer contradicts itself)."""
    match = _MARKED.match(answer)
    if match is None or not match.group("rest").strip():
        return None
    marker = match.group("a") or match.group("b") or match.group("c")
    number = int(marker) if marker else "①②③④⑤⑥⑦⑧⑨⑩".index(match.group("d")) + 1
    if not 1 <= number <= len(options) or len(_MARKED_LINE.findall(answer)) > 1:
        return None
    named = option_by_text(match.group("rest"), options)
    return number if named in (None, number) else 0


def option_tokens(answer: str, n_options: int) -> int | list[int] | None:
    """`3`, `③`, `(3)`, `C`, `1, 3` as option numbers (all of them valid), else None."""
    tokens = [token for token in _OPTION_SEPARATOR.split(nfkc(answer).strip().rstrip(".")) if token]
    numbers = [to_option(token, n_options) for token in tokens]
    if not numbers or any(number is None for number in numbers):
        return None
    unique = sorted({number for number in numbers if number is not None})
    return unique[0] if len(unique) == 1 else unique


class ChoiceFormat:
    name = NAME
    version = VERSION

    def instruction(self, key: dict[str, Any]) -> str:
        # the choice prompts carry their own instruction (evaluation.prompts): unchanged, so
        # choice-only runs keep their run ids
        return ""

    def answer_text(self, key: dict[str, Any]) -> str:
        return ", ".join(str(number) for number in listed(key))

    def parse_key_text(self, text: str) -> dict[str, Any]:
        """`3`, `③`, `3번`, `1, 3` → option numbers. Raises ValueError for anything else."""
        numbers = option_tokens(text.replace("번", ""), 99)
        if numbers is None or _LATIN.search(text):
            raise ValueError(f"not option numbers: {text!r}")
        return {"format": NAME, "options": [numbers] if isinstance(numbers, int) else numbers, "require_all": False}

    def extract(self, visible: str, key: dict[str, Any], options: Sequence[str]) -> Extraction:
        span = loop_span(visible)
        if span is not None:
            looped, period = span
            # one copy of the repeated chunk, and what a statement cut at its end needs to read whole
            in_loop = stated_options(visible[looped:looped + period + LOOP_READ_MARGIN], len(options))
            if len(in_loop) > 1:
                return Extraction(None, "loop")  # it cycles between options
            if in_loop:  # it states one answer again and again: it keeps to that one
                only = next(iter(in_loop))
                return Extraction(only[0] if len(only) == 1 else list(only), "loop")
            visible = visible[:looped]  # else only what came before the loop counts
        stated = final_answer(visible) if options else None
        if stated is not None:
            by_text = option_by_text(stated.text, options)
            if by_text is not None:
                return Extraction(by_text, "option_text")
        parsed = parse_response(visible, len(options))
        if parsed.answer is not None or stated is None:
            return Extraction(parsed.answer, parsed.method, parsed.rationale)
        tokens = option_tokens(stated.text, len(options))
        if tokens is not None:
            return Extraction(tokens, stated.method)
        marked = marked_option(stated.text, options)
        if marked is not None:
            return Extraction(marked or None, "marker")
        by_text = option_by_text(stated.text, options, contained=True)
        return Extraction(by_text, "option_text" if by_text is not None else None)

    def check(self, extracted: Any, key: dict[str, Any], options: Sequence[str]) -> Verdict:
        ok = accepts(key, extracted)
        gold = listed(key)
        return decided(ok, extracted, NAME, VERSION, f"chose {extracted}, key {gold[0] if len(gold) == 1 else gold}")
