"""`benchsmith items set-status`: bulk, a dry run first, one revision per item, compare-and-swap."""

from __future__ import annotations

import json

import pytest

from curation.core.errors import BenchsmithError
from curation.core.item import parse_item
from curation.core.store import ItemQuery
from curation.core.workspace import init_workspace

from .conftest import run_cli
from .helpers import make_record


@pytest.fixture
def ws(tmp_path):
    workspace = init_workspace(tmp_path / "ws")
    records = [make_record(f"s-{n:02d}", exam="기상기사" if n < 6 else "방재기사") for n in range(8)]
    for n, record in enumerate(records):
        record["status"] = "accepted" if n == 0 else "in_review"
    workspace.store.save_items([parse_item(r) for r in records], author="t", stage="import")
    return workspace


def _set(ws, *args):
    return run_cli("items", "set-status", *args, "-w", str(ws.root), "--json")


def test_dry_run_writes_nothing_then_each_item_gets_one_revision(ws):
    where = "exam=기상기사"
    planned = _set(ws, "accepted", "--where", where, "--reason", "검토 완료", "--dry-run")
    assert planned.returncode == 0, planned.stderr
    plan = json.loads(planned.stdout)
    assert (plan["matched"], plan["changed"], plan["dry_run"]) == (6, [f"s-{n:02d}" for n in range(1, 6)], True)
    assert ws.store.count(ItemQuery(status=["accepted"])) == 1 and ws.store.revision_count() == 8

    done = _set(ws, "accepted", "--where", where, "--reason", "검토 완료", "--author", "kim")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["changed"] == plan["changed"]
    assert ws.store.ids(ItemQuery(status=["accepted"])) == [f"s-{n:02d}" for n in range(6)]
    assert ws.store.revision_count() == 8 + 5  # one revision per changed item, none for s-00 (already accepted)
    last = ws.store.history("s-03")[-1]
    assert (last.rev, last.stage, last.author, last.reason, last.changed_fields) == (2, "status", "kim", "검토 완료", ["status"])
    assert ws.store.get("s-07").item.status == "in_review"  # outside the query
    again = json.loads(_set(ws, "accepted", "--where", where, "--reason", "again").stdout)
    assert again["changed"] == [] and ws.store.revision_count() == 13


def test_dry_run_lists_each_item_that_would_change_with_its_old_and_new_status(ws):
    planned = run_cli("items", "set-status", "rejected", "--where", "exam=기상기사", "--reason", "폐기",
                      "--dry-run", "-w", str(ws.root))
    assert planned.returncode == 0, planned.stderr
    lines = planned.stdout.strip().splitlines()
    # the fixture: s-00 accepted, s-01 … s-05 in review (기상기사); s-06, s-07 another exam
    before = {"s-00": "accepted"} | {f"s-{n:02d}": "in_review" for n in range(1, 6)}
    assert lines[:-1] == [f"{item_id}: {status} → rejected" for item_id, status in before.items()]
    assert lines[-1].startswith("6 items matched; would change 6 to rejected") and "nothing written" in lines[-1]
    as_json = json.loads(_set(ws, "rejected", "--where", "exam=기상기사", "--reason", "폐기", "--dry-run").stdout)
    assert as_json["previous"] == before and as_json["changed"] == list(before)
    assert ws.store.count(ItemQuery(status=["rejected"])) == 0 and ws.store.revision_count() == 8


def test_an_item_edited_meanwhile_is_skipped_not_overwritten(ws, monkeypatch):
    from curation.core.status import set_status

    snapshot = list(ws.store.iter_items(ItemQuery(exam="방재기사")))  # what the bulk write read
    ws.store.update_fields("s-06", {"stem": "고친 문제"}, expect_rev=1, author="lee", stage="edit", reason="오타")
    monkeypatch.setattr(ws.store, "iter_items", lambda query=None: iter(snapshot))
    report = set_status(ws.store, ItemQuery(exam="방재기사"), "accepted", reason="검토 완료", author="kim")
    assert (report.changed, report.conflicts) == (["s-07"], ["s-06"])
    kept = ws.store.get("s-06")
    assert (kept.rev, kept.item.status, kept.item.stem) == (2, "in_review", "고친 문제")


def test_bad_set_status_inputs_are_one_line_errors(ws):
    cases = [(("done", "--where", "exam=기상기사", "--reason", "x"), "status 'done'"),
             (("accepted", "--where", "exam", "--reason", "x"), "--where 'exam': expected FIELD=VALUE"),
             (("accepted", "--where", "", "--reason", "x"), "would match every item"),
             (("accepted", "--where", "exam=기상기사", "--reason", " "), "--reason")]
    for args, message in cases:
        result = _set(ws, *args)
        assert result.returncode != 0 and message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert ws.store.revision_count() == 8
    with pytest.raises(BenchsmithError, match="choose one of"):
        from curation.core.status import set_status

        set_status(ws.store, ItemQuery(exam="x"), "finished", reason="x", author="t")
