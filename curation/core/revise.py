"""Applying a batch stage's changes to the store without overwriting anyone.

A stage reads items, computes new versions, then writes each with a compare-and-swap on
the revision it read. An item someone edited in the meantime is left alone and reported as
a conflict (run the stage again to include it), so a human's edit is never lost to a batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from curation.core.item import Item
from curation.core.query import in_play
from curation.core.store import Store, StoredItem


@dataclass
class StageReport:
    stage: str
    seen: int = 0
    changed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)

    def line(self) -> str:
        text = f"{self.stage}: {self.seen} items, {len(self.changed)} revised"
        if self.conflicts:
            text += f", {len(self.conflicts)} skipped (edited meanwhile: {', '.join(self.conflicts[:3])}…)"
        return text


def revise(
    store: Store,
    stored_items: Iterable[StoredItem],
    change: Callable[[Item], tuple[Item, str] | None],
    *,
    stage: str,
    author: str,
    dry_run: bool = False,
) -> StageReport:
    """Apply `change` (new item and reason, or None for no change) to each item, CAS per item."""
    report = StageReport(stage)
    pending: list[tuple[Item, int, str | None]] = []
    for stored in stored_items:
        report.seen += 1
        result = change(stored.item)
        if result is None:
            continue
        new_item, reason = result
        if new_item == stored.item:
            continue
        if dry_run:
            report.changed.append(new_item.id)
            continue
        pending.append((new_item, stored.rev, reason))
    written, conflicts = store.update_many(pending, author=author, stage=stage)
    report.changed += written
    report.conflicts += conflicts
    return report


def active_items(store: Store) -> list[StoredItem]:
    return list(store.iter_items(in_play(None)))


def with_review_reason(item: Item, reason: str) -> Item:
    if reason in item.flags.review_reasons:
        return item
    flags = item.flags.model_copy(update={"review_reasons": [*item.flags.review_reasons, reason]})
    return item.model_copy(update={"flags": flags})
