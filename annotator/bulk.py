"""Bulk actions over the items a queue's filter selects: accept, tag Korea-specific yes/no,
assign. Each item is its own compare-and-swap revision and recorded decision, so a bulk
action never overwrites an edit saved meanwhile (that item is reported as skipped)."""

from __future__ import annotations

from collections.abc import Sequence
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


def matching_ids(store: Store, queue: str, filters: Filters) -> list[str]:
    with store.engine.connect() as conn:
        return list(conn.execute(select(ITEMS.id).select_from(items_table).where(queues.where(queue, filters))
                                 .order_by(ITEMS.id)).scalars())


def apply(store: Store, action: str, item_ids: Sequence[str], user: str, reason: str = "") -> BulkReport:
    if action not in ACTIONS:
        raise BenchsmithError(f"bulk action {action!r}: choose one of {', '.join(ACTIONS)}")
    decision, label, changes = ACTIONS[action]
    queue = ACTION_QUEUE[action]
    report = BulkReport()
    for stored in store.get_many(list(item_ids)).values():
        try:
            rev = store.update_fields(stored.item.id, dict(changes), expect_rev=stored.rev, author=user, stage=STAGE,
                                      reason=reason or f"bulk {action}")
        except ConflictError:
            report.skipped.append(stored.item.id)
            continue
        queues.record_review(store.engine, queue, stored.item.id, user, decision, rev, reason or f"bulk {action}")
        report.changed.append(stored.item.id)
    return report
