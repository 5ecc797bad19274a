"""Bulk actions over the items a queue's filter selects: the decisions its spec marks `bulk`
(accept; Korea-specific yes/no) and assignment. Each item is its own compare-and-swap revision
and recorded decision, written by the same decisions.decide as the single-item view, so a bulk
action never overwrites an edit saved since the count the user confirmed (that item is reported
as skipped)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select

from annotator.review import claims, decisions, queues
from annotator.review.auth import User
from annotator.review.queues import ITEMS, Filters
from curation.core.errors import ConflictError
from curation.core.store import Store, items_table

STAGE = "annotate-bulk"


@dataclass
class BulkReport:
    changed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # edited meanwhile (stale revision)

    def line(self) -> str:
        text = f"{len(self.changed)} items changed"
        return text + (f", {len(self.skipped)} skipped (saved by someone meanwhile)" if self.skipped else "")


def actions(queue: str) -> list[tuple[str, str]]:
    """(label, decision) of the queue's bulk decisions."""
    return [(decision.label, decision.name) for decision in queues.spec(queue).decisions if decision.bulk]


def matching(store: Store, queue: str, filters: Filters) -> dict[str, int]:
    """The items the filter selects, with the revision each is at now (what a confirmation is about)."""
    with store.engine.connect() as conn:
        rows = conn.execute(select(ITEMS.id, ITEMS.rev).select_from(items_table).where(queues.where(queue, filters))
                            .order_by(ITEMS.id)).all()
    return {row.id: row.rev for row in rows}


def apply(store: Store, queue: str, decision: str, counted: dict[str, int], user: User,
          reason: str = "") -> BulkReport:
    """Take `decision` on the counted items, each on the revision it had when counted. Raises
    NotAllowed, writing nothing, unless the queue's spec offers it in bulk to the user's role."""
    spec = queues.spec(queue)
    chosen = spec.check_bulk(user.role, decision)
    report = BulkReport()
    for item_id, rev in counted.items():
        # the bulk panel's users override assignments (recorded in the revision's reason); a reservation
        # does not stop a confirmed count: a reviewer's later save on a changed item gets a conflict
        override = claims.override(user, queue, item_id, claims.assignees(store.engine, queue, item_id))
        try:
            decisions.decide(store, spec, chosen, item_id, rev, user.name, reason=reason, stage=STAGE, note=override)
        except ConflictError:
            report.skipped.append(item_id)
            continue
        report.changed.append(item_id)
    return report
