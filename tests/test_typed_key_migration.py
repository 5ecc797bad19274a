"""Stores and run logs written before typed answer keys: a version-1 store holding schema-1
snapshots (answers as option numbers) opens, reads every answer as a choice key, keeps the
content hash of every untouched item, and a run log without typed scores still counts."""

from __future__ import annotations

import hashlib
import io
import json
from typing import Any

from sqlalchemy import text

from curation.core.identity import content_hash
from curation.core.item import parse_item
from curation.core.store import ItemQuery, Store, item_from_data, view_from_data
from curation.importers import export_jsonl, import_file
from evaluation.records import AnswerRecord
from scoring import ChoiceKey, Score

from .helpers import make_record
from .test_pool_columns import _downgrade_to_version_1, _downgrade_to_version_3

IMAGE = "c" * 64 + ".png"


def _schema_1_records() -> list[dict[str, Any]]:
    """Items as benchsmith wrote them with schema 1: the answer is option numbers, and
    `taxonomy.question_format` multiple_answers is what made all of them required."""
    single = make_record("s-single", answer=3)
    any_of = make_record("s-any", answer=[1, 3])  # several accepted, any one is right
    all_of = make_record("s-all", answer=[2, 4], stem="옳은 것을 모두 고르시오.")
    all_of["taxonomy"] = {"question_format": "multiple_answers"}
    pictured = make_record("s-picture", answer=[2])
    pictured["options"][1] = {"text": "", "image": {"blob": IMAGE, "kind": "raster"}}
    unkeyed = make_record("s-unkeyed", answer=None)
    records = [single, any_of, all_of, pictured, unkeyed]
    # what Item.to_record() wrote in schema 1: every field, the answer as numbers, no `points`
    written = []
    for record in records:
        full = parse_item(record).to_record()
        full.pop("points")
        written.append(full | {"schema_version": 1, "answer": record["answer"]})
    return written


def _old_content_hash(record: dict[str, Any], variant: str = "implicit") -> str:
    """curation/core/identity.py as it was before typed keys, computed from a schema-1 record."""
    answer = record["answer"]
    numbers = [] if answer is None else [answer] if isinstance(answer, int) else list(answer)
    material = {
        "v": 1,
        "variant": variant,
        "stem": record["explicit_variant"] if variant == "explicit" and record.get("explicit_variant") else record["stem"],
        "options": [[option["text"], option["image"]["blob"] if option.get("image") else None]
                    for option in record["options"]],
        "images": [image["blob"] for image in record["images"]],
        "answer": numbers,
        "requires_all": (record.get("taxonomy") or {}).get("question_format") == "multiple_answers",
    }
    data = json.dumps(material, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:32]


def _dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _version_1_store(url: str, records: list[dict[str, Any]]) -> None:
    """A store as benchsmith 0.1 left it: store_version 1 (no identity or facet columns) and
    schema-1 snapshots in both the items and the revisions tables."""
    store = Store(url, create=True)
    store.save_items([parse_item(record) for record in records], author="old", stage="import")
    _downgrade_to_version_3(store, {})
    with store._write() as conn, conn.begin():
        for record in records:
            data = _dumps(record)
            conn.execute(text("UPDATE items SET data = :data WHERE id = :id"), {"data": data, "id": record["id"]})
            conn.execute(text("UPDATE revisions SET snapshot = :data WHERE item_id = :id"),
                         {"data": data, "id": record["id"]})
    _downgrade_to_version_1(store)
    store.close()


def test_a_version_1_store_of_schema_1_items_reads_choice_keys_and_keeps_their_hashes(store_url):
    records = _schema_1_records()
    _version_1_store(store_url, records)
    store = Store(store_url)  # migrated to the current store version on opening
    items = {stored.item.id: stored.item for stored in store.iter_items()}
    assert items["s-single"].answer == ChoiceKey(options=[3])
    assert items["s-any"].answer == ChoiceKey(options=[1, 3])
    assert items["s-any"].accepts(1) and not items["s-any"].requires_all_answers()
    assert items["s-all"].answer == ChoiceKey(options=[2, 4], require_all=True)
    assert items["s-all"].accepts([2, 4]) and not items["s-all"].accepts(2)
    assert items["s-picture"].answer == ChoiceKey(options=[2]) and items["s-unkeyed"].answer is None
    assert all(item.schema_version == 2 for item in items.values())

    old = {record["id"]: _old_content_hash(record) for record in records}
    assert store.hashes() == old  # the column the migration filled
    assert {item_id: content_hash(item) for item_id, item in items.items()} == old
    explicit = records[0] | {"explicit_variant": "한국의 " + records[0]["stem"]}
    assert content_hash(parse_item(explicit), "explicit") == _old_content_hash(explicit, "explicit")

    # the raw readers: the stored text is schema 1 as written; the answer view and history upgrade it
    with store.engine.connect() as conn:
        data = dict(conn.execute(text("SELECT id, data FROM items")).all())
    assert json.loads(data["s-all"])["answer"] == [2, 4] and '"schema_version":1' in data["s-all"]
    assert view_from_data(data["s-all"]).answer == items["s-all"].answer == item_from_data(data["s-all"]).answer
    first = store.history("s-single")[0].snapshot
    assert first["answer"] == {"format": "choice", "options": [3], "require_all": False}
    assert first["schema_version"] == 2
    assert store.columns(["status", "multimodal"], ItemQuery(ids=["s-picture"]))["multimodal"] == [True]

    # an edit writes the current schema; the untouched items keep their hashes
    store.update_fields("s-any", {"answer": 2}, expect_rev=1, author="alice", stage="edit")
    store.update_fields("s-all", {"stem": "옳은 것을 모두 고르시오!"}, expect_rev=1, author="alice", stage="edit")
    edited = store.get("s-all").item
    assert edited.answer == ChoiceKey(options=[2, 4], require_all=True)  # the key kept what it required
    history = store.history("s-all")
    assert history[1].changed_fields == ["stem"]  # the schema-1 snapshot is no change of answer
    assert store.get("s-any").item.answer == ChoiceKey(options=[2])
    after = store.hashes()
    assert after["s-any"] != old["s-any"] and after["s-all"] != old["s-all"]
    assert {k: after[k] for k in ("s-single", "s-picture", "s-unkeyed")} == {
        k: old[k] for k in ("s-single", "s-picture", "s-unkeyed")}
    assert after == {stored.item.id: content_hash(stored.item) for stored in store.iter_items()}


def test_exported_items_import_as_the_same_items(workspace, tmp_path):
    records = _schema_1_records()
    workspace.store.save_items([parse_item(record) for record in records], author="t", stage="import")
    typed = parse_item(make_record("s-numeric", answer={"format": "numeric", "value": "2.5", "unit": "hPa"},
                                   n_options=0))
    workspace.store.save_items([typed], author="t", stage="import")
    out = io.StringIO()
    assert export_jsonl(workspace.store, out) == len(records) + 1
    path = tmp_path / "items.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    other = Store(f"sqlite:///{tmp_path / 'other.db'}", create=True)
    report = import_file(path, other)
    assert report.ok and report.created == len(records) + 1, report.errors
    mine = {s.item.id: s.item for s in workspace.store.iter_items()}
    assert {s.item.id: s.item for s in other.iter_items()} == mine
    assert other.hashes() == workspace.store.hashes()
    assert mine["s-numeric"].answer_format == "numeric" and mine["s-all"].requires_all_answers()


def test_a_run_log_written_before_typed_scores_still_counts(workspace):
    from evaluation.metrics import accuracy_by_subset, load_run
    from evaluation.models import resolve_model
    from evaluation.runlog import RESPONSES
    from evaluation.runner import RunRequest, run_model
    from filtering.adversarial import matrix_from_workspace
    from filtering.matrix import model_verdict

    records = _schema_1_records()
    workspace.store.save_items([parse_item(record) for record in records], author="t", stage="import")
    summary = run_model(workspace, RunRequest(resolve_model("baseline:position-3"), run_id="typed"))
    assert summary.skipped == {"s-unkeyed": "no answer key", "s-picture": "has images; the model is text-only"}
    before = load_run(summary.run_dir, workspace)
    scores_before = [(s.subset, s.n, s.correct, s.accuracy) for s in accuracy_by_subset(before)]
    assert scores_before[0][1:] == (3, 2, 2 / 3)
    matrix_before = matrix_from_workspace(workspace).table.select(["item_id", "outcome"]).to_pylist()

    # the same log as benchsmith wrote it before typed scores: an outcome, no `score`
    log = summary.run_dir / RESPONSES
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert all(line["score"]["checker"] == "choice" and line["score"]["outcome"] == line["outcome"] for line in lines)
    assert {line["item_id"]: line["gold"] for line in lines} == {
        "s-single": 3, "s-any": [1, 3], "s-all": [2, 4]}  # option numbers, as schema 1 wrote them
    log.write_text("".join(json.dumps({k: v for k, v in line.items() if k != "score"}, ensure_ascii=False) + "\n"
                           for line in lines), encoding="utf-8")
    (summary.run_dir / "cells.parquet").unlink()

    after = load_run(summary.run_dir, workspace)
    assert [(s.subset, s.n, s.correct, s.accuracy) for s in accuracy_by_subset(after)] == scores_before
    assert matrix_from_workspace(workspace).table.select(["item_id", "outcome"]).to_pylist() == matrix_before
    typed = {item_id: record.typed_score() for item_id, record in after.records.items()}
    assert set(typed) == {"s-single", "s-any", "s-all"}
    for item_id, score in typed.items():
        assert isinstance(score, Score) and after.records[item_id].score is None
        assert score.outcome == after.outcome_of[item_id] and score.decided_by == "checker"
        assert score.value == (1.0 if score.outcome == "correct" else 0.0) and score.extracted == 3
    assert typed["s-single"].outcome == typed["s-any"].outcome == "correct"  # 3 is one of 1, 3
    assert typed["s-all"].outcome == "wrong" and model_verdict([typed["s-single"].outcome]) == "solved"
    error = AnswerRecord.model_validate({"item_id": "x", "outcome": "error", "error": {"kind": "timeout",
                                                                                     "message": "no reply"}})
    assert error.typed_score().error_kind == "timeout" and error.typed_score().explanation == "no reply"


def test_choice_items_from_schema_1_are_asked_and_open_keys_only_by_models():
    from evaluation.models import resolve_model
    from evaluation.runner import select_items

    numeric = parse_item(make_record("n-1", answer={"format": "numeric", "value": "7"}, n_options=0))
    judged = parse_item(make_record("j-1", answer={"format": "judged", "reference": "해설"}))
    unkeyed_open = parse_item(make_record("o-1", answer=None, n_options=0))
    single = parse_item(make_record("c-1", answer=2))
    items = [numeric, judged, unkeyed_open, single]
    chosen, skipped = select_items(items, resolve_model("openai-compatible:m@http://127.0.0.1:9/v1"))
    assert [item.id for item in chosen] == ["n-1", "j-1", "c-1"] and skipped == {"o-1": "no options"}
    chosen, skipped = select_items(items, resolve_model("baseline:longest"))
    assert [item.id for item in chosen] == ["c-1"]
    assert skipped == {"n-1": "not a choice item", "j-1": "not a choice item", "o-1": "no options"}
