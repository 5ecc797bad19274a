"""The review queue walked by extraction confidence, lowest first; unmeasured items after the measured ones."""

from __future__ import annotations

import math

import pytest

from annotator.review import queues
from annotator.review.tables import ensure_tables
from curation.core.item import parse_item
from curation.core.store import Store
from curation.extract.confidence import EXTRA_KEY, confidence_record
from tests.eval_support import text_record

SIGNALS: dict[int, set[str] | None] = {1: {"ocr"}, 2: None, 3: {"ocr", "key_mismatch"}, 4: set(), 5: {"latex_repaired"},
                                       6: None, 7: {"ocr", "key_mismatch"}, 8: {"vlm"}}


def _store(url: str) -> Store:
    store = Store(url, create=True)
    ensure_tables(store.engine)
    items = []
    for number, signals in SIGNALS.items():
        record = text_record(number)
        if signals is not None:
            record["extra"] = {EXTRA_KEY: confidence_record(signals)}
        items.append(parse_item(record))
    store.save_items(items, author="test", stage="test")
    return store


def _expected(store: Store) -> list[str]:
    """Lowest score first, ties by id, items without a confidence last (by id) — read from the items."""
    def key(stored):  # noqa: ANN001
        value = stored.item.extra.get(EXTRA_KEY)
        return (value["score"] if value else math.inf, stored.item.id)

    return [stored.item.id for stored in sorted(store.iter_items(), key=key)]


def _walk(engine, filters: queues.Filters, direction: str) -> list[str]:  # noqa: ANN001
    seen, current = [], None
    while (current := queues.neighbour(engine, "item", filters, current, direction)) is not None:
        seen.append(current)
    return seen


def test_confidence_order_walks_lowest_first_both_ways(store_url):
    store = _store(store_url)
    expected = _expected(store)
    by_confidence = queues.Filters(order="confidence")
    assert expected[:2] == ["eval-text-003", "eval-text-007"] and expected[-2:] == ["eval-text-002", "eval-text-006"]
    assert _walk(store.engine, by_confidence, "next") == expected
    assert _walk(store.engine, by_confidence, "prev") == expected[::-1]
    assert _walk(store.engine, queues.Filters(), "next") == sorted(expected)  # id order stays the default


def test_next_unreviewed_follows_the_order_and_wraps(store_url):
    store = _store(store_url)
    expected = _expected(store)
    engine, by_confidence = store.engine, queues.Filters(order="confidence")
    assert queues.next_unreviewed(engine, "item", by_confidence, "ann", None) == expected[0]
    queues.record_review(engine, "item", expected[1], "ann", "accept", 1)
    assert queues.next_unreviewed(engine, "item", by_confidence, "ann", expected[0]) == expected[2]
    assert queues.next_unreviewed(engine, "item", by_confidence, "ann", expected[-1]) == expected[0]  # wraps round


def test_unknown_order_is_one_clear_error(workspace):
    with pytest.raises(queues.QueueError, match="order 'newest': choose one of id, confidence"):
        queues.neighbour(workspace.store.engine, "item", queues.Filters(order="newest"), None, "next")
