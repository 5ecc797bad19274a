"""Pool-scale readers: the store's identity columns, the run log's columnar index, exact fast intervals."""

import json

import numpy as np
import pytest
from sqlalchemy import inspect, select, text, update

from curation.core.identity import content_hash
from curation.core.item import parse_item
from curation.core.store import ItemQuery, Store, meta_table
from evaluation.cells import CELLS_FILE, run_cells
from evaluation.records import AnswerRecord, read_jsonl_records
from evaluation.resampling import binary_mean_intervals, mean_interval

from .helpers import make_record


def _items(n, **kw):
    return [parse_item(make_record(f"q-{i:04d}", **kw)) for i in range(n)]


def _drop_revision_indexes(conn) -> None:
    for index in ("ix_revisions_stage", "ix_revisions_created_at"):
        conn.execute(text(f"DROP INDEX {index}"))


def test_a_version_2_store_gets_its_revision_indexes_when_opened(store_url):
    store = Store(store_url, create=True)
    store.save_items(_items(3), author="t", stage="import")
    store.update_fields("q-0001", {"answer": 3}, expect_rev=1, author="a", stage="edit")
    _downgrade_to_version_3(store, {})
    with store._write() as conn, conn.begin():
        _drop_revision_indexes(conn)
        conn.execute(update(meta_table).where(meta_table.c.key == "store_version").values(value="2"))
    store.close()
    reopened = Store(store_url)
    assert reopened.stage_counts() == {"edit": 1, "import": 3}
    with reopened.engine.connect() as conn:
        names = {index["name"] for index in inspect(conn).get_indexes("revisions")}
        version = conn.execute(select(meta_table.c.value).where(meta_table.c.key == "store_version")).scalar_one()
    assert {"ix_revisions_stage", "ix_revisions_created_at"} <= names and version == "6"


REVIEW_COLUMNS = ("korea_candidate", "needs_fix", "has_rationale")


def _downgrade_to_version_5(store: Store) -> None:
    """The store as version 5 wrote it: no answer-format and points columns."""
    with store._write() as conn, conn.begin():
        for column in ("answer_format", "points"):
            conn.execute(text(f"ALTER TABLE items DROP COLUMN {column}"))
        conn.execute(update(meta_table).where(meta_table.c.key == "store_version").values(value="5"))


def test_a_version_5_store_gets_its_answer_format_and_points_columns_from_each_snapshot_when_opened(store_url):
    store = Store(store_url, create=True)
    choice, numeric, legacy = make_record("q-0"), make_record("q-1"), make_record("q-2")
    choice["points"] = 2
    numeric |= {"options": [], "answer": {"format": "numeric", "value": "17"}, "points": 4}
    store.save_items([parse_item(r) for r in (choice, numeric, legacy)], author="t", stage="import")
    _downgrade_to_version_5(store)
    store.close()
    reopened = Store(store_url)
    assert reopened.columns(["answer_format", "points"]) == {
        "id": ["q-0", "q-1", "q-2"], "answer_format": ["choice", "numeric", "choice"], "points": [2.0, 4.0, None]}
    assert reopened.ids(ItemQuery(answer_format="numeric")) == ["q-1"]


def _downgrade_to_version_4(store: Store) -> None:
    """The store as version 4 wrote it: no review-state columns."""
    _downgrade_to_version_5(store)
    with store._write() as conn, conn.begin():
        for column in REVIEW_COLUMNS:
            conn.execute(text(f"ALTER TABLE items DROP COLUMN {column}"))
        conn.execute(update(meta_table).where(meta_table.c.key == "store_version").values(value="4"))


def _downgrade_to_version_3(store: Store, source_first: dict[str, tuple[str, str]]) -> None:
    """The store as version 3 wrote it: `part`/`subject` columns the source's first (item id → (part,
    subject) as that rule gave them), and the taxonomy's own two columns beside them."""
    _downgrade_to_version_4(store)
    with store._write() as conn, conn.begin():
        for column in ("taxonomy_part", "taxonomy_subject"):
            conn.execute(text(f"ALTER TABLE items ADD COLUMN {column} VARCHAR(200)"))
        if source_first:
            conn.execute(text("UPDATE items SET part = :part, subject = :subject WHERE id = :id"),
                         [{"id": key, "part": part, "subject": subject} for key, (part, subject) in source_first.items()])
        conn.execute(update(meta_table).where(meta_table.c.key == "store_version").values(value="3"))


def _downgrade_to_version_1(store: Store) -> None:
    """The store as benchsmith 0.1 wrote it: no identity columns, store_version 1."""
    with store._write() as conn, conn.begin():
        _drop_revision_indexes(conn)
        conn.execute(text("DROP INDEX ix_items_content_hash"))
        for column in ("content_hash", "taxonomy_part", "taxonomy_subject"):
            conn.execute(text(f"ALTER TABLE items DROP COLUMN {column}"))
        conn.execute(update(meta_table).where(meta_table.c.key == "store_version").values(value="1"))


def _disagreeing_item():
    record = make_record("q-tax", subject="기후학")
    record["source"]["part"] = "1과목"
    record["taxonomy"] = {"part": "2과목", "subject": "대기역학"}  # the reviewed taxonomy, not the paper's labels
    return parse_item(record)


def test_a_version_3_store_counts_part_and_subject_by_the_taxonomy_when_opened(store_url):
    store = Store(store_url, create=True)
    store.save_items([*_items(2), _disagreeing_item()], author="t", stage="import")
    _downgrade_to_version_3(store, {"q-tax": ("1과목", "기후학")})
    store.close()
    reopened = Store(store_url)
    assert reopened.columns(["part", "subject"], ItemQuery(ids=["q-tax"])) == {
        "id": ["q-tax"], "part": ["2과목"], "subject": ["대기역학"]}
    assert reopened.ids(ItemQuery(subject="대기역학")) == ["q-tax"]
    with reopened.engine.connect() as conn:
        columns = {column["name"] for column in inspect(conn).get_columns("items")}
    assert not columns & {"taxonomy_part", "taxonomy_subject"}


def test_a_version_4_store_gets_its_review_state_columns_from_each_snapshot_when_opened(store_url):
    store = Store(store_url, create=True)
    plain, candidate, sent_back, explained = (make_record(f"q-{i}") for i in range(4))
    candidate["flags"] = {"korea_reasons": ["lexicon: 우리나라"]}
    sent_back["flags"] = {"review_reasons": ["보기 3 오탈자"]}
    explained["rationale"] = {"text": "풀이", "author": "model-x"}
    store.save_items([parse_item(r) for r in (plain, candidate, sent_back, explained)], author="t", stage="import")
    _downgrade_to_version_4(store)
    store.close()
    reopened = Store(store_url)
    assert reopened.columns(list(REVIEW_COLUMNS)) == {
        "id": ["q-0", "q-1", "q-2", "q-3"], "korea_candidate": [False, True, False, False],
        "needs_fix": [False, False, True, False], "has_rationale": [False, False, False, True]}


def test_the_content_hash_column_is_the_items_hash_after_every_kind_of_write(store_url):
    store = Store(store_url, create=True)
    items = _items(5)
    store.save_items(items, author="t", stage="import")
    store.update_fields("q-0001", {"answer": 3}, expect_rev=1, author="a", stage="edit")
    edited = store.get("q-0002").item.model_copy(update={"stem": "고친 문제"})
    store.update_many([(edited, 1, "fix")], author="b", stage="bulk")
    expected = {s.item.id: content_hash(s.item) for s in store.iter_items()}
    assert store.hashes() == expected
    assert expected["q-0001"] != content_hash(items[1]) and expected["q-0002"] != content_hash(items[2])
    assert store.hashes(ItemQuery(ids=["q-0003", "q-0001"])) == {k: expected[k] for k in ("q-0001", "q-0003")}


def test_a_version_1_store_gets_its_identity_columns_when_opened(store_url):
    store = Store(store_url, create=True)
    store.save_items([*_items(3), _disagreeing_item()], author="t", stage="import")
    _downgrade_to_version_3(store, {"q-tax": ("1과목", "기후학")})
    _downgrade_to_version_1(store)
    store.close()
    reopened = Store(store_url)
    assert reopened.hashes() == {s.item.id: content_hash(s.item) for s in reopened.iter_items()}
    columns = reopened.columns(["part", "subject"], ItemQuery(ids=["q-tax"]))
    assert columns == {"id": ["q-tax"], "part": ["2과목"], "subject": ["대기역학"]}


def test_long_id_lists_are_filtered_without_one_parameter_per_id(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'store.db'}", create=True)
    store.save_items(_items(40), author="t", stage="import")
    wanted = [f"q-{i:04d}" for i in range(0, 40, 3)] + [f"absent-{i}" for i in range(40_000)]
    assert list(store.hashes(ItemQuery(ids=wanted))) == [f"q-{i:04d}" for i in range(0, 40, 3)]


def _line(item_id, outcome, answer=1, **extra):
    return json.dumps({"item_id": item_id, "content_hash": f"h-{item_id}", "outcome": outcome, "answer": answer,
                       "usage": {"prompt_tokens": 10, "completion_tokens": 2}, "latency_s": 0.5, **extra}) + "\n"


def test_run_cells_read_only_the_lines_added_since_and_agree_with_the_record_reader(tmp_path):
    log = tmp_path / "responses.jsonl"
    log.write_text(_line("a", "wrong") + _line("b", "correct", [1, 3]) + "not json\n"
                   + json.dumps({"item_id": "c", "outcome": "maybe"}) + "\n", encoding="utf-8")
    first = run_cells(tmp_path)
    assert first["item_id"].to_pylist() == ["a", "b"]
    assert first["answer"].to_pylist() == ["1", "[1, 3]"] and first["choice"].to_pylist() == [1, None]
    assert first["tokens"].to_pylist() == [12, 12]
    covered = (tmp_path / CELLS_FILE).stat().st_mtime_ns
    assert run_cells(tmp_path).equals(first) and (tmp_path / CELLS_FILE).stat().st_mtime_ns == covered
    with log.open("a", encoding="utf-8") as handle:  # a rerun supersedes a; a torn line is still being written
        handle.write(_line("a", "correct", 2) + _line("d", "error", None) + '{"item_id": "e", "outc')
    second = run_cells(tmp_path)
    assert second["item_id"].to_pylist() == ["b", "a", "d"]
    assert dict(zip(second["item_id"].to_pylist(), second["outcome"].to_pylist(), strict=True)) == {
        item_id: record.outcome for item_id, record in read_jsonl_records(log, AnswerRecord).items()}
    with log.open("a", encoding="utf-8") as handle:
        handle.write('ome": "wrong"}\n')  # the torn line completed: now a record
    assert run_cells(tmp_path)["item_id"].to_pylist() == ["b", "a", "d", "e"]


def test_a_log_replaced_by_a_shorter_one_is_read_again_from_the_start(tmp_path):
    log = tmp_path / "responses.jsonl"
    log.write_text(_line("a", "wrong") + _line("b", "wrong"), encoding="utf-8")
    run_cells(tmp_path)
    log.write_text(_line("z", "correct"), encoding="utf-8")
    assert run_cells(tmp_path)["item_id"].to_pylist() == ["z"]
    (tmp_path / CELLS_FILE).write_bytes(b"garbage")  # an unreadable index is rebuilt, never trusted
    assert run_cells(tmp_path)["item_id"].to_pylist() == ["z"]


@pytest.mark.parametrize("n", [2, 3, 17, 400, 5000])
def test_the_fast_binary_interval_equals_scipys_bootstrap_exactly(n):
    rng = np.random.default_rng(n)
    samples = [(seed, (rng.random(n) < p).astype(float)) for seed in (0, 7) for p in (0.0, 0.3, 0.97)]
    samples += [(3, (rng.random(n) < p).astype(float)) for p in np.linspace(0, 1, 7)]  # a group counted once
    assert binary_mean_intervals(samples, resamples=500) == [mean_interval(v, seed=s, resamples=500)
                                                             for s, v in samples]


def test_fast_intervals_of_empty_and_single_samples():
    assert binary_mean_intervals([(1, np.array([])), (1, np.array([1.0])), (2, np.array([0.0]))]) == [
        None, (1.0, 1.0), (0.0, 0.0)]


def _baseline_pool(workspace, n=30):
    items = []
    for k in range(n):
        record = make_record(f"b-{k:03d}", answer=[1, 2, 3, [2, 4]][k % 4], subject="기후학")
        record["options"] = [{"text": "가" * (1 + (k + j) % 4)} for j in range(4)]
        items.append(parse_item(record))
    workspace.store.save_items(items, author="t", stage="import")


TIMING = ("key", "latency_s", "ts")


@pytest.mark.parametrize("variant", ["implicit", "question_only"])
def test_baselines_answered_here_log_what_the_request_sender_logs(workspace, tmp_path, variant):
    import asyncio

    from curation.core.workspace import init_workspace
    from evaluation.models import resolve_model
    from evaluation.runlog import RESPONSES, read_records
    from evaluation.runner import RunRequest, prepare_run, run_model
    from evaluation.sender import SenderSettings, send_jobs

    other = init_workspace(tmp_path / "through-sender")
    for ws in (workspace, other):
        _baseline_pool(ws)
    for name in ("baseline:longest", "baseline:similar", "baseline:position-2"):
        spec = resolve_model(name)
        local = run_model(workspace, RunRequest(spec, variant=variant))
        prepared = prepare_run(other, RunRequest(spec, variant=variant))
        asyncio.run(send_jobs(spec, SenderSettings(), prepared.run_dir / RESPONSES, prepared.jobs(), None))
        mine, theirs = (read_records(d / RESPONSES) for d in (local.run_dir, prepared.run_dir))
        assert len(mine) == 30 and local.stats["computed_locally"] == 30
        import pyarrow.parquet as pq

        covered = pq.read_schema(local.run_dir / CELLS_FILE).metadata[b"log_bytes"]
        assert int(covered) == (local.run_dir / RESPONSES).stat().st_size  # written by the run itself
        written = run_cells(local.run_dir)
        (local.run_dir / CELLS_FILE).unlink()
        assert written.equals(run_cells(local.run_dir))
        assert {i: {k: v for k, v in r.items() if k not in TIMING} for i, r in mine.items()} == {
            i: {k: v for k, v in r.items() if k not in TIMING} for i, r in theirs.items()}


def test_get_many_reads_most_of_the_store_in_one_pass_and_finds_what_the_chunked_reads_find(store_url):
    store = Store(store_url, create=True)
    store.save_items(_items(2600), author="t", stage="import")
    store.update_fields("q-0007", {"answer": 3}, expect_rev=1, author="a", stage="edit")
    many = [f"q-{i:04d}" for i in range(2600) if i % 13] + ["absent-1"]  # one pass
    few = many[:300]  # statements of 500 ids
    found_many, found_few = store.get_many(many), store.get_many(few)
    assert set(found_many) == set(many) - {"absent-1"} and set(found_few) == set(few)
    assert found_many["q-0007"].rev == 2 and found_many["q-0007"].item.answer_list() == [3]
    assert all(found_many[key].item == found_few[key].item for key in found_few)
