"""A review decision written to an item: the queue spec's changes filled in, the reviewer's field
edits with them, as one compare-and-swap revision plus the recorded review. The single-item view
and bulk actions both write decisions through `decide`, so the same decision gives the same revision."""

from __future__ import annotations

from typing import Any

from rapidfuzz.distance import Levenshtein

from annotator.review import claims, queues
from annotator.review.queue_specs import Decision, Fill, QueueSpec
from curation.core.errors import BenchsmithError
from curation.core.item import Item
from curation.core.store import Store, get_path


class DecisionError(BenchsmithError):
    """A decision this item cannot take as asked (no reason given, a rationale unlike its decision)."""


def draft_rationale(store: Store, item_id: str) -> str:
    """The rationale text as last drafted (before any review), from the item's history."""
    for revision in reversed(store.history(item_id)):
        rationale = revision.snapshot.get("rationale") or {}
        if rationale.get("status") == "draft":
            return rationale.get("text", "")
    item = store.get(item_id).item
    return item.rationale.text if item.rationale else ""


def changes(store: Store, decision: Decision, item: Item, user: str, reason: str,
            edits: dict[str, Any]) -> dict[str, Any]:
    """The fields `decision` sets on `item` (`edits`: the reviewer's field edits saved with it)."""
    if decision.needs_reason and not reason:
        raise DecisionError("사유를 적어 주세요 · Give a reason for needs-fix or reject")
    distance = None
    if decision.draft is not None or Fill.EDIT_DISTANCE in decision.changes.values():
        if item.rationale is None:
            raise DecisionError("this item has no rationale to review")
        final = edits.get("rationale.text", item.rationale.text)
        distance = Levenshtein.distance(draft_rationale(store, item.id), final)
        if decision.draft == "unchanged" and distance:
            raise DecisionError("the text differs from the draft: choose minor fix or major fix")
        if decision.draft == "edited" and not distance:
            raise DecisionError("the text is the draft unchanged: choose adopt, or edit it first")
    filled: dict[str, Any] = {}
    for path, value in decision.changes.items():
        if value is Fill.REVIEWER:
            filled[path] = user
        elif value is Fill.EDIT_DISTANCE:
            filled[path] = distance
        elif value is Fill.APPEND_REASON:
            if reason:
                filled[path] = [*(get_path(item.to_record(), path) or []), reason]
        else:
            filled[path] = value
    return filled


def decide(store: Store, spec: QueueSpec, decision: Decision, item_id: str, expect_rev: int, user: str, *,
           reason: str = "", edits: dict[str, Any] | None = None, stage: str, note: str = "",
           history: str | None = None, record: bool = True) -> int:
    """Write `decision` (and `edits`) on `item_id` at `expect_rev`; returns the new revision. Raises
    ConflictError when the item moved on, DecisionError or ItemValidationError; nothing is written then.
    `note` (an admin's override of the assignment, claims.py) is added to the revision's reason only.
    Whether the user's role may take the decision is the caller's check (QueueSpec.check_decision or
    check_bulk): it knows which of the two applies. `history`: the revision's reason when it should say
    more than the decision's (the reviewers' decisions an agreed or adjudicated decision settles);
    `record=False` when the caller records the reviews itself (adjudication.py)."""
    edits = dict(edits or {})
    item = store.get(item_id).item
    written = {**edits, **changes(store, decision, item, user, reason, edits)}
    new_rev = store.update_fields(item_id, written, expect_rev=expect_rev, author=user, stage=stage,
                                  reason=claims.with_note(history or reason or decision.name, note))
    if record:
        queues.record_review(store.engine, spec.name, item_id, user, decision.name, new_rev, reason or None)
    return new_rev
