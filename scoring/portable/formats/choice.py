"""Choice: option numbers (1-based). With several listed options any one is correct, unless
the key requires all of them; then the chosen set must be exactly the listed one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..choice_parsing import parse_response
from ..verdict import Verdict, decided
from .base import Extraction

NAME = "choice"
VERSION = "choice-1"


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


class ChoiceFormat:
    name = NAME
    version = VERSION

    def instruction(self, key: dict[str, Any]) -> str:
        # the choice prompts carry their own instruction (evaluation.prompts): unchanged, so
        # choice-only runs keep their run ids
        return ""

    def extract(self, visible: str, key: dict[str, Any], options: Sequence[str]) -> Extraction:
        parsed = parse_response(visible, len(options))
        return Extraction(parsed.answer, parsed.method, parsed.rationale)

    def check(self, extracted: Any, key: dict[str, Any], options: Sequence[str]) -> Verdict:
        ok = accepts(key, extracted)
        gold = listed(key)
        return decided(ok, extracted, NAME, VERSION, f"chose {extracted}, key {gold[0] if len(gold) == 1 else gold}")
