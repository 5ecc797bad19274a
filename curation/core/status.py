"""Setting the status of many items at once (accepting a reviewed batch before a release).

Each item gets one revision, written with a compare-and-swap on the revision it was read at:
an item edited meanwhile is left alone and reported, never overwritten. Items already in the
wanted status are not touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from curation.core.errors import BenchsmithError
from curation.core.facets import STATUSES
from curation.core.item import Item
from curation.core.revise import StageReport, revise
from curation.core.store import ItemQuery, Store


@dataclass
class StatusReport(StageReport):
    previous: dict[str, str] = field(default_factory=dict)  # item → its status before, for each changed (or to change)


def set_status(store: Store, query: ItemQuery, status: str, *, reason: str, author: str,
               dry_run: bool = False) -> StatusReport:
    if status not in STATUSES:
        raise BenchsmithError(f"status {status!r}: choose one of {', '.join(STATUSES)}")
    if not reason.strip():
        raise BenchsmithError("--reason: say why (it is kept in every revision)")
    if query == ItemQuery():
        raise BenchsmithError("--where: give a query (e.g. status=in_review,exam=KMMLU); an empty one would match every item")
    previous: dict[str, str] = {}

    def change(item: Item) -> tuple[Item, str] | None:
        if item.status == status:
            return None
        previous[item.id] = item.status
        return item.model_copy(update={"status": status}), reason

    report = revise(store, store.iter_items(query), change, stage="status", author=author, dry_run=dry_run)
    return StatusReport(report.stage, report.seen, report.changed, report.conflicts,
                        {item_id: previous[item_id] for item_id in report.changed})
