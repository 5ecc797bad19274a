"""What a checker decides about one response, and the rules every format shares.

Outcomes: `correct` and `wrong` (a checker, a judge or a person decided), `unparseable` (no final
answer could be read), `error` (no usable response: an API failure, a cut-off response, a
refusal) and `undecided` (an answer was read but no checker can tell; a judge or a person
decides). Only `correct` and `wrong` are ever counted as solved or unsolved.

This module is stdlib-only: release builds copy the whole `portable` folder into `harness/benchsmith_scoring/`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OUTCOMES: tuple[str, ...] = ("correct", "wrong", "unparseable", "error", "undecided")
DECIDED: frozenset[str] = frozenset({"correct", "wrong"})

# finish reasons, as the OpenAI-compatible, Gemini and llama.cpp backends report them
TRUNCATED_REASONS = frozenset({"length", "max_tokens", "MAX_TOKENS"})
REFUSED_REASONS = frozenset({"content_filter", "refusal", "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST"})


@dataclass(frozen=True)
class Verdict:
    """One response's score: value 0–1, outcome, the extracted answer (JSON-ready), the checker
    (its format name) and its version, and a one-line explanation a reviewer can read."""

    outcome: str
    value: float = 0.0
    extracted: Any = None
    checker: str = ""
    checker_version: str = ""
    explanation: str = ""
    error_kind: str | None = None  # with outcome error: truncated | refusal | the backend's kind
    details: dict[str, Any] = field(default_factory=dict)  # per format: parts, parse method, rationale …

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r} (one of {', '.join(OUTCOMES)})")
        if not 0.0 <= self.value <= 1.0:
            raise ValueError(f"a score's value is between 0 and 1, not {self.value}")

    @property
    def decided(self) -> bool:
        return self.outcome in DECIDED

    def as_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "value": self.value, "extracted": self.extracted, "checker": self.checker,
                "checker_version": self.checker_version, "explanation": self.explanation,
                "error_kind": self.error_kind, "details": dict(self.details)}


def decided(correct: bool, extracted: Any, checker: str, version: str, explanation: str = "",
            value: float | None = None, **details: Any) -> Verdict:
    return Verdict("correct" if correct else "wrong", (1.0 if correct else 0.0) if value is None else value,
                   extracted, checker, version, explanation, details=details)


def error(kind: str, message: str, checker: str = "", version: str = "", extracted: Any = None) -> Verdict:
    return Verdict("error", 0.0, extracted, checker, version, message, error_kind=kind)


def settle_response(finish_reason: str | None, thinking_truncated: bool, refused: bool,
                    checker: str = "", version: str = "", extracted: Any = None) -> Verdict | None:
    """The rules written once for every format: a response cut off (by the token limit, or a
    thinking block never closed) or refused is an `error`, whatever its text says; else None."""
    if finish_reason in TRUNCATED_REASONS or thinking_truncated:
        return error("truncated", "the response was cut off", checker, version, extracted)
    if finish_reason in REFUSED_REASONS or refused:
        return error("refusal", "the model refused to answer", checker, version, extracted)
    return None
