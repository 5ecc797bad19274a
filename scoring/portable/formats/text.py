"""Text: a short answer that must match one of the accepted answers.

Key: `{"format": "text", "accepted": ["미토콘드리아", "mitochondria"], "normalise": "default",
"strict": false}`.

The response's stated final answer (`extraction.final_answer`: boxed, `정답: …`, JSON, or a reply
that is only the answer) is compared with every accepted answer after normalisation:

- `default`: NFKC (full-width forms folded), case folded, markdown emphasis removed, and every
  character that is not a letter or a digit removed: punctuation, symbols and all whitespace
  (`조면 소포체` = `조면소포체`, `**Rough ER.**` = `rough er`, `5'-TCAG-3'` = `5tcag3`);
- `exact`: NFC and surrounding whitespace only.

Besides the whole answer, its text without parenthetical remarks and each parenthetical on its
own are tried (`미토콘드리아 (mitochondria)` matches either name).

A match is `correct`. No match is `wrong` when the key is `strict`, else `undecided` (a judge or a
person decides: a different wording may still be right).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ..extraction import final_answer, nfkc, strip_emphasis
from ..verdict import Verdict, decided
from .base import Extraction

NAME = "text"
VERSION = "text-2"
_PAREN = re.compile(r"\(([^()]*)\)|\[([^\[\]]*)\]")
_ALTERNATIVES = re.compile(r"\s*(?:\||\s또는\s|\sor\s)\s*")


_NOT_WORD = re.compile(r"[\W_]+")


def normalise_default(text: str) -> str:
    """NFKC, case folded, emphasis removed, and everything but letters and digits removed."""
    return _NOT_WORD.sub("", strip_emphasis(nfkc(text)).casefold())


def normalise(text: str, how: str) -> str:
    if how == "exact":
        return unicodedata.normalize("NFC", text).strip()
    return normalise_default(text)


@lru_cache(maxsize=8192)
def _accepted(accepted: tuple[str, ...], how: str) -> frozenset[str]:
    return frozenset(form for form in (normalise(answer, how) for answer in accepted) if form)


def readings(answer: str) -> list[str]:
    """The answer, the answer without parentheticals, and each parenthetical."""
    found = [answer]
    without = _PAREN.sub(" ", answer).strip()
    if without and without != answer:
        found.append(without)
    found.extend(group for match in _PAREN.finditer(answer) for group in match.groups() if group)
    return found


class TextFormat:
    name = NAME
    version = VERSION

    def instruction(self, key: dict[str, Any]) -> str:
        return "풀이 과정을 쓴 다음, 마지막 줄에 최종 답을 \\boxed{} 안에 짧게 쓰십시오. 예: \\boxed{미토콘드리아}."

    def answer_text(self, key: dict[str, Any]) -> str:
        return " | ".join(str(answer) for answer in key.get("accepted") or [])

    def parse_key_text(self, text: str) -> dict[str, Any]:
        """A short answer; alternatives written `A | B` or `A 또는 B` become accepted answers."""
        body = text.strip()
        if not body:
            raise ValueError("an empty text answer")
        accepted = [part.strip() for part in _ALTERNATIVES.split(body) if part.strip()] if "\n" not in body else [body]
        return {"format": NAME, "accepted": accepted or [body], "normalise": "default", "strict": False}

    def extract(self, visible: str, key: dict[str, Any], options: Sequence[str]) -> Extraction:
        stated = final_answer(visible)
        if stated is None:
            return Extraction(None)
        return Extraction(stated.text, stated.method, stated.rationale)

    def check(self, extracted: Any, key: dict[str, Any], options: Sequence[str]) -> Verdict:
        answer = str(extracted)
        how = "exact" if key.get("normalise") == "exact" else "default"
        accepted = _accepted(tuple(str(a) for a in key.get("accepted") or []), how)
        matched = next((reading for reading in readings(answer) if normalise(reading, how) in accepted), None)
        if matched is not None:
            return decided(True, answer, NAME, VERSION, f"matches an accepted answer ({matched!r})")
        if key.get("strict"):
            return decided(False, answer, NAME, VERSION, "matches no accepted answer")
        return Verdict("undecided", 0.0, answer, NAME, VERSION,
                       "matches no accepted answer; a judge or a person decides")
