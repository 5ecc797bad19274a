"""One response → one Verdict, for every format: the one definition of "correct".

    thinking split off → cut off or refused? error → the format extracts the stated answer
    (none: unparseable, or a refusal; a reply that is only a refusal is a refusal, not an
    answer) → the format checks it (correct | wrong | undecided)

A multi-part key (`format: parts`) is checked part by part; its value is the share of parts
correct and it is correct only when every part is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .choice_parsing import looks_like_refusal, split_thinking
from .registry import get_format
from .verdict import Verdict, settle_response

# a short reply read as it is (not from a statement, a box or JSON) that is a refusal, is one
_PLAIN_METHODS = frozenset({"bare", "order", "tail"})
_SHORT_REPLY = 300


def score_response(key: dict[str, Any] | None, text: str | None, *, options: Sequence[str] = (),
                   finish_reason: str | None = None) -> Verdict:
    """Score a model's raw reply against a key (a JSON dict with `format`). `options` are the
    item's option texts, in order (a choice key needs their count; option text maps to a number)."""
    if not key:
        raise ValueError("an item without an answer key cannot be scored")
    fmt = get_format(key.get("format", ""))
    visible, _thinking, thinking_truncated = split_thinking(text or "")
    extraction = fmt.extract(visible, key, options) if visible else None
    value = extraction.value if extraction is not None else None
    settled = settle_response(finish_reason, thinking_truncated, False, fmt.name, fmt.version, value)
    if settled is not None:
        return settled
    method = extraction.method if extraction is not None else None
    answered_plainly = method in _PLAIN_METHODS and len(visible) <= _SHORT_REPLY
    if value is None or (answered_plainly and looks_like_refusal(visible)):
        if looks_like_refusal(visible):
            return settle_response(None, False, True, fmt.name, fmt.version)  # type: ignore[return-value]
        return Verdict("unparseable", 0.0, None, fmt.name, fmt.version, "no final answer could be read",
                       details={"method": None})
    verdict = fmt.check(value, key, options)
    details = {"method": extraction.method, **verdict.details} if extraction is not None else verdict.details
    if extraction is not None and extraction.rationale:
        details["rationale"] = extraction.rationale
    return Verdict(verdict.outcome, verdict.value, verdict.extracted, verdict.checker, verdict.checker_version,
                   verdict.explanation, verdict.error_kind, details)


def check_answer(key: dict[str, Any], answer: Any, options: Sequence[str] = ()) -> Verdict:
    """Check an answer already extracted (an import's parsed answer, a reviewer's reading)."""
    return get_format(key.get("format", "")).check(answer, key, options)
