"""The batch stage write: a compare-and-swap per item inside few transactions."""

from __future__ import annotations

from curation.core.item import parse_item
from curation.core.store import Store

from .helpers import make_record


def test_update_many_writes_revisions_and_reports_items_edited_meanwhile(store_url):
    store = Store(store_url, create=True)
    store.save_items([parse_item(make_record(f"q{n}")) for n in range(5)], author="t", stage="import")
    store.update_fields("q3", {"answer": 2}, expect_rev=1, author="alice", stage="edit")
    changes = [(store.get(f"q{n}").item.model_copy(update={"stem": f"새 문제 {n}?"}), 1, f"why {n}") for n in range(5)]
    changes.append((store.get("q0").item, 1, "no change"))  # unchanged data: neither written nor a conflict
    written, conflicts = store.update_many(changes, author="stage", stage="batch")
    assert written == ["q0", "q1", "q2", "q4"] and conflicts == ["q3"]
    assert store.get("q1").item.stem == "새 문제 1?" and store.get("q1").rev == 2
    assert store.get("q3").item.stem != "새 문제 3?" and store.get("q3").item.answer_list() == [2]
    assert [(r.rev, r.stage, r.reason) for r in store.history("q2")] == [(1, "import", None), (2, "batch", "why 2")]
    store.close()
