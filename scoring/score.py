"""The typed Score every record carries: who decided, what was read, what it is worth."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from scoring.portable import Verdict, score_response

Outcome = Literal["correct", "wrong", "unparseable", "error", "undecided"]
DecidedBy = Literal["checker", "judge", "human"]


class Score(BaseModel):
    model_config = ConfigDict(extra="ignore")

    value: float = Field(0.0, ge=0.0, le=1.0)
    outcome: Outcome
    extracted: Any = None
    checker: str = ""
    checker_version: str = ""
    explanation: str = ""
    error_kind: str | None = None
    decided_by: DecidedBy = "checker"
    judge_model: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_verdict(cls, verdict: Verdict, decided_by: DecidedBy = "checker",
                     judge_model: str | None = None) -> Score:
        return cls(decided_by=decided_by, judge_model=judge_model, **verdict.as_dict())

    @classmethod
    def from_legacy(cls, outcome: str, answer: Any = None, error: dict[str, Any] | None = None) -> Score:
        """What a record written before typed scores means (a choice run's outcome string)."""
        kind = (error or {}).get("kind") if outcome == "error" else None
        return cls(value=1.0 if outcome == "correct" else 0.0, outcome=outcome,  # type: ignore[arg-type]
                   extracted=answer, checker="choice" if outcome in ("correct", "wrong") else "",
                   explanation=(error or {}).get("message", "") if outcome == "error" else "", error_kind=kind)


def score_key(key: Any, text: str | None, options: Sequence[str] = (), finish_reason: str | None = None) -> Score:
    """Score a reply against a typed key (or its dict)."""
    data = key if isinstance(key, dict) else key.model_dump(mode="json")
    return Score.from_verdict(score_response(data, text, options=options, finish_reason=finish_reason))
