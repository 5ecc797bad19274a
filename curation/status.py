"""Setting the status of many items at once (accepting a reviewed batch before a release).

Each item gets one revision, written with a compare-and-swap on the revision it was read at:
an item edited meanwhile is left alone and reported, never overwritten. Items already in the
wanted status are not touched.
"""

from __future__ import annotations

from curation.errors import BenchsmithError
from curation.facets import STATUSES
from curation.revise import StageReport, revise
from curation.store import ItemQuery, Store


def set_status(store: Store, query: ItemQuery, status: str, *, reason: str, author: str,
               dry_run: bool = False) -> StageReport:
    if status not in STATUSES:
        raise BenchsmithError(f"status {status!r}: choose one of {', '.join(STATUSES)}")
    if not reason.strip():
        raise BenchsmithError("--reason: say why (it is kept in every revision)")
    if query == ItemQuery():
        raise BenchsmithError("--where: give a query (e.g. status=in_review,exam=KMMLU); an empty one would match every item")
    return revise(store, store.iter_items(query),
                  lambda item: None if item.status == status else (item.model_copy(update={"status": status}), reason),
                  stage="status", author=author, dry_run=dry_run)
