import multiprocessing as mp

import pytest

from curation.core.errors import ConflictError, NotFoundError, WorkspaceError
from curation.core.item import parse_item
from curation.core.store import ItemQuery, Store

from .helpers import make_record


def _items(n, **kw):
    return [parse_item(make_record(f"q-{i:04d}", **kw)) for i in range(n)]


def test_save_items_creates_then_skips_unchanged_then_revises_changed(store_url):
    store = Store(store_url, create=True)
    first = store.save_items(_items(3), author="alice", stage="import")
    assert len(first.created) == 3
    again = store.save_items(_items(3), author="alice", stage="import")
    assert again.unchanged == ["q-0000", "q-0001", "q-0002"] and not again.created and not again.updated
    changed = _items(3, answer=2)
    third = store.save_items(changed, author="bob", stage="extract", reason="re-extracted")
    assert third.updated == ["q-0000", "q-0001", "q-0002"]
    history = store.history("q-0001")
    assert [(r.rev, r.author, r.stage) for r in history] == [(1, "alice", "import"), (2, "bob", "extract")]
    assert history[1].changed_fields == ["answer"] and history[1].reason == "re-extracted"
    assert store.get("q-0001").rev == 2


def test_update_is_compare_and_swap_and_names_who_changed_what(store_url):
    store = Store(store_url, create=True)
    store.save_items(_items(1), author="import", stage="import")
    assert store.update_fields("q-0000", {"stem": "고친 문제"}, expect_rev=1, author="alice", stage="edit") == 2
    with pytest.raises(ConflictError) as caught:
        store.update_fields("q-0000", {"answer": 3}, expect_rev=1, author="bob", stage="edit")
    error = caught.value
    assert (error.expected_rev, error.current_rev, error.exit_code) == (1, 2, 3)
    assert "rev 2 by alice" in str(error) and "stem" in str(error)
    assert store.get("q-0000").item.stem == "고친 문제"
    assert len(store.history("q-0000")) == 2  # the refused write appended nothing


def test_an_edit_that_changes_nothing_appends_no_revision(store_url):
    store = Store(store_url, create=True)
    store.save_items(_items(1), author="import", stage="import")
    item = store.get("q-0000").item
    assert store.update(item, expect_rev=1, author="alice", stage="edit") == 1
    assert len(store.history("q-0000")) == 1


def test_an_invalid_edit_is_refused_and_loses_nothing(store_url):
    from curation.core.item import ItemValidationError

    store = Store(store_url, create=True)
    store.save_items(_items(1), author="import", stage="import")
    with pytest.raises(ItemValidationError, match="answer 9"):
        store.update_fields("q-0000", {"answer": 9}, expect_rev=1, author="alice", stage="edit")
    assert store.get("q-0000").rev == 1


def test_queries_stats_and_missing_items(store_url):
    store = Store(store_url, create=True)
    items = _items(4)
    items[0] = items[0].model_copy(update={"status": "accepted"})
    store.save_items(items, author="import", stage="import")
    assert store.ids(ItemQuery(status=["accepted"])) == ["q-0000"]
    assert store.count(ItemQuery(exam="기상기사")) == 4
    assert [s.item.id for s in store.iter_items()] == [f"q-{i:04d}" for i in range(4)]
    stats = store.stats()
    assert stats["items"] == 4 and stats["by_status"] == {"accepted": 1, "extracted": 3}
    with pytest.raises(NotFoundError):
        store.get("nope")


def test_opening_a_folder_without_a_store_is_a_clear_error(tmp_path):
    with pytest.raises(WorkspaceError, match="holds no benchsmith store"):
        Store(f"sqlite:///{tmp_path / 'empty.db'}")


def test_a_store_from_a_newer_benchsmith_is_refused(store_url):
    from sqlalchemy import update

    from curation.core.store import meta_table

    store = Store(store_url, create=True)
    with store.engine.begin() as conn:
        conn.execute(update(meta_table).where(meta_table.c.key == "store_version").values(value="99"))
    store.close()
    with pytest.raises(WorkspaceError, match="newer than this benchsmith"):
        Store(store_url)


def _racer(url, author, barrier, results):
    store = Store(url)
    seen = store.get("q-0000").rev
    barrier.wait()
    try:
        store.update_fields("q-0000", {"stem": f"{author}의 수정"}, expect_rev=seen, author=author, stage="edit")
        results.put((author, "won"))
    except ConflictError as error:
        results.put((author, f"conflict:{error.current_rev}"))


def test_two_processes_racing_on_one_item_exactly_one_wins(store_url):
    store = Store(store_url, create=True)
    store.save_items(_items(1), author="import", stage="import")
    context = mp.get_context("spawn")
    barrier, results = context.Barrier(2), context.Queue()
    racers = [context.Process(target=_racer, args=(store_url, name, barrier, results)) for name in ("alice", "bob")]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(60)
    outcomes = dict(results.get(timeout=5) for _ in racers)
    assert sorted(outcomes.values()) == ["conflict:2", "won"], outcomes
    winner = next(name for name, outcome in outcomes.items() if outcome == "won")
    history = store.history("q-0000")
    assert [r.rev for r in history] == [1, 2] and history[1].author == winner
    assert store.get("q-0000").item.stem == f"{winner}의 수정"


def _appender(url, author, count, results):
    """Append `count` tokens to an item's list, retrying on conflict like a careful client."""
    store = Store(url)
    for n in range(count):
        while True:
            stored = store.get("q-0000")
            log = list(stored.item.extra.get("log", [])) + [f"{author}-{n}"]
            try:
                store.update_fields("q-0000", {"extra.log": log}, expect_rev=stored.rev, author=author, stage="edit")
                break
            except ConflictError:
                results.put("conflict")
    results.put("done")


def test_concurrent_writers_lose_no_update_and_no_revision(store_url):
    store = Store(store_url, create=True)
    store.save_items(_items(1), author="import", stage="import")
    context = mp.get_context("spawn")
    results = context.Queue()
    writers = [context.Process(target=_appender, args=(store_url, f"w{i}", 15, results)) for i in range(3)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(120)
    assert all(writer.exitcode == 0 for writer in writers)
    final = store.get("q-0000")
    assert sorted(final.item.extra["log"]) == sorted(f"w{i}-{n}" for i in range(3) for n in range(15))
    assert final.rev == 1 + 45
    assert [r.rev for r in store.history("q-0000")] == list(range(1, 47))


def test_iter_data_reads_what_iter_many_reads_and_the_key_facts_view_agrees_with_the_item(store_url):
    """The solve-matrix reader parses `KeyFactsView`s from `iter_data`: the same items, hashes, keys,
    option counts and review reasons as whole items from `iter_many`, on both of its paths (a
    statement per 500 ids, and one pass when the ids are most of the store)."""
    from curation.core.item import KeyFactsView
    from curation.core.store import view_from_data

    store = Store(store_url, create=True)
    records = [make_record(f"k-{i:04d}", answer=[1, 3] if i % 3 == 0 else (i % 4) + 1, n_options=4 + i % 2)
               for i in range(2400)]
    records[5] = {key: value for key, value in make_record("k-0005").items() if key != "options"} | {
        "answer": {"format": "numeric", "value": "12.5", "unit": "hPa"}}
    records[7]["flags"] = {"review_reasons": ["answer conflict with k-0008 (ratio 0.97)", "ocr"]}
    store.save_items([parse_item(r) for r in records], author="import", stage="import")
    for wanted in ([r["id"] for r in records[:30]] + ["absent"], [r["id"] for r in records[:2300]]):
        whole = {stored.item.id: stored for stored in store.iter_many(wanted)}
        data = {item_id: (text, digest) for item_id, text, digest in store.iter_data(wanted)}
        assert set(data) == set(whole) == set(wanted) - {"absent"}
        for item_id, (text, digest) in data.items():
            view, item = view_from_data(text, KeyFactsView), whole[item_id].item
            assert isinstance(view, KeyFactsView) and digest == whole[item_id].content_hash
            assert (view.answer_list(), len(view.options), view.flags.review_reasons, view.answer_format) == (
                item.answer_list(), len(item.options), item.flags.review_reasons, item.answer_format)
            assert view.answer == item.answer
    assert view_from_data(data["k-0007"][0], KeyFactsView).flags.review_reasons[0].startswith("answer conflict")
