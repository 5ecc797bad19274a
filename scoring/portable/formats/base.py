"""What a format is: its instruction, how an answer is read from a response, how it is checked.

A key is a plain JSON dict with a `format` field (`scoring.keys` holds the typed, validated form
the item schema uses; `key.model_dump()` is this dict). Stdlib-only, like all of `portable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..verdict import Verdict


@dataclass(frozen=True)
class Extraction:
    """The answer a response states, normalised for its format (JSON-ready), or None."""

    value: Any
    method: str | None = None  # json | boxed | statement | bare | text …
    rationale: str | None = None


class AnswerFormat(Protocol):
    name: str
    version: str  # bumped whenever the format's extraction or check changes (recorded, not in the run id)

    def instruction(self, key: dict[str, Any]) -> str:
        """The Korean instruction the prompt gives for this format (how to state the answer:
        in `\\boxed{}`, as KMMMU asks); "" where the prompt carries its own (choice)."""
        ...

    def answer_text(self, key: dict[str, Any]) -> str:
        """The key as plain text (what a release's answer column and a reviewer read)."""
        ...

    def parse_key_text(self, text: str) -> dict[str, Any]:
        """The key dict an import's answer (an answer-key table cell) means in this format;
        raises ValueError when the text cannot be read as this format."""
        ...

    def extract(self, visible: str, key: dict[str, Any], options: Sequence[str]) -> Extraction:
        """The stated final answer of a response (thinking already split off), or value None."""
        ...

    def check(self, extracted: Any, key: dict[str, Any], options: Sequence[str]) -> Verdict:
        """correct | wrong | undecided for an extracted answer (never None here)."""
        ...
