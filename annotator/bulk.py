"""Bulk actions over the items a queue's filter selects: accept, tag Korea-specific yes/no,
assign. Each item is its own compare-and-swap revision and recorded decision, so a bulk
action never overwrites an edit saved since the count the user confirmed (that item is
reported as skipped)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select

from annotator import queues
from annotator.queues import ITEMS, Filters
from curation.errors import BenchsmithError, ConflictError
from curation.store import Store, items_table

STAGE = "annotate-bulk"
ACTIONS: dict[str, tuple[str, str, dict[str, object]]] = {  # name → (queue decision, label, field changes)
    "accept": ("accept", "승인 · Accept", {"status": "accepted"}),
    "korea_yes": ("confirm", "한국 특화 맞음 · Korea-specific: yes", {"flags.korea_specific": True}),
    "korea_no": ("deny", "한국 특화 아님 · Korea-specific: no", {"flags.korea_specific": False}),
}
ACTION_QUEUE = {"accept": "item", "korea_yes": "korea", "korea_no": "korea"}


@dataclass
class BulkReport:
    changed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # edited meanwhile (stale revision)

    def line(self) -> str:
        text = f"{len(self.changed)} items changed"
        return text + (f", {len(self.skipped)} skipped (saved by someone meanwhile)" if self.skipped else "")


def matching(store: Store, queue: str, filters: Filters) -> dict[str, int]:
    """The items the filter selects, with the revision each is at now (what a confirmation is about)."""
    with store.engine.connect() as conn:
        rows = conn.execute(select(ITEMS.id, ITEMS.rev).select_from(items_table).where(queues.where(queue, filters))
                            .order_by(ITEMS.id)).all()
    return {row.id: row.rev for row in rows}


def apply(store: Store, action: str, counted: dict[str, int], user: str, reason: str = "") -> BulkReport:
    """Apply `action` to the counted items, each on the revision it had when counted."""
    if action not in ACTIONS:
        raise BenchsmithError(f"bulk action {action!r}: choose one of {', '.join(ACTIONS)}")
    decision, _, changes = ACTIONS[action]
    report = BulkReport()
    for item_id, rev in counted.items():
        try:
            new_rev = store.update_fields(item_id, dict(changes), expect_rev=rev, author=user, stage=STAGE,
                                          reason=reason or f"bulk {action}")
        except ConflictError:
            report.skipped.append(item_id)
            continue
        queues.record_review(store.engine, ACTION_QUEUE[action], item_id, user, decision, new_rev,
                             reason or f"bulk {action}")
        report.changed.append(item_id)
    return report
