"""Judged: what only a judge (or a person) can check: a reference answer and a rubric.

Key: `{"format": "judged", "reference": "…", "rubric": "…"}`.

The extraction keeps what a judge should read: the response's stated final answer
(`extraction.final_answer`: boxed, `정답: …` with the lines that follow it, JSON, a reply that is
only the answer), or, when it states none, its last 1,500 characters. The check always says
`undecided`; a judge or a person decides. An empty response, or one that loops without ever
stating an answer, stays `unparseable` (the scorer's rule), and a cut-off one is an `error`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..extraction import final_answer
from ..verdict import Verdict
from .base import Extraction

NAME = "judged"
VERSION = "judged-2"
TAIL_CHARS = 1500


class JudgedFormat:
    name = NAME
    version = VERSION

    def instruction(self, key: dict[str, Any]) -> str:
        return "풀이 과정을 쓴 다음, 마지막에 '정답:' 뒤에 최종 답을 쓰십시오."

    def answer_text(self, key: dict[str, Any]) -> str:
        return str(key.get("reference", ""))

    def parse_key_text(self, text: str) -> dict[str, Any]:
        if not text.strip():
            raise ValueError("an empty reference answer")
        return {"format": NAME, "reference": text.strip(), "rubric": None}

    def extract(self, visible: str, key: dict[str, Any], options: Sequence[str]) -> Extraction:
        stated = final_answer(visible, tail=TAIL_CHARS)
        if stated is None:
            return Extraction(None)
        return Extraction(stated.full or stated.text, stated.method, stated.rationale)

    def check(self, extracted: Any, key: dict[str, Any], options: Sequence[str]) -> Verdict:
        return Verdict("undecided", 0.0, extracted, NAME, VERSION, "a judge or a person decides (judged key)")
