"""The review layer on a real SQLite workspace: drafts, compare-and-swap saves, conflicts,
decisions, navigation, assignment and re-cropping from the PDF."""

import pytest

from annotator.review import drafts, queues
from annotator.review.actions import Session
from annotator.review.auth import User
from annotator.review.queue_specs import NotAllowed
from annotator.review.queues import Filters
from annotator.review.render import RenderError
from scoring.keys import ChoiceKey, NumericKey

from .annotator_support import fresh_reviewer, sample_desk

ALICE, BOB = User("alice", "admin"), User("bob", "expert")


@pytest.fixture
def desk(workspace):
    return sample_desk(workspace)


def test_unsaved_edits_survive_a_new_session_and_are_only_a_draft(desk):
    view = desk.reviewer.open("alice", "item", "sample-001")
    desk.reviewer.edit(ALICE, view.session, "stem", "고친 문제 $x^2$")
    assert desk.workspace.store.get("sample-001").rev == 1  # nothing saved yet
    again = fresh_reviewer(desk).resume("alice", "item")
    assert again.session.item_id == "sample-001" and again.restored_draft
    assert again.shown["stem"] == "고친 문제 $x^2$"
    assert fresh_reviewer(desk).resume("bob", "item").shown["stem"] != "고친 문제 $x^2$"  # drafts are per user


def test_save_is_a_revision_by_the_user_with_stage_annotate(desk):
    view = desk.reviewer.open("alice", "item", "sample-001")
    desk.reviewer.edit(ALICE, view.session, "stem", "새 문제 $\\Gamma$")
    saved = desk.reviewer.save(ALICE, view.session)
    assert saved.session.rev == 2 and not saved.error
    last = desk.workspace.store.history("sample-001")[-1]
    assert (last.rev, last.author, last.stage, last.changed_fields) == (2, "alice", "annotate", ["stem"])
    assert drafts.load_draft(desk.workspace.store.engine, "alice", "item", "sample-001") is None


def test_concurrent_edits_conflict_and_both_stay_recoverable(desk):
    alice = desk.reviewer.open("alice", "item", "sample-001").session
    bob = desk.reviewer.open("bob", "item", "sample-001").session
    desk.reviewer.edit(ALICE, alice, "stem", "앨리스의 수정")
    desk.reviewer.edit(BOB, bob, "options.2.text", "밥의 수정")
    assert desk.reviewer.save(ALICE, alice).session.rev == 2
    refused = desk.reviewer.save(BOB, bob)
    assert refused.conflict is not None and refused.conflict.current_rev == 2
    assert any("rev 2 by alice" in line and "stem" in line for line in refused.conflict.since)
    assert refused.session.edits == {"options.2.text": "밥의 수정"}  # bob's edit is kept
    assert drafts.load_draft(desk.workspace.store.engine, "bob", "item", "sample-001").edits == refused.session.edits
    rebased = desk.reviewer.reapply("bob", refused.session)
    assert rebased.session.rev == 2
    final = desk.reviewer.save(BOB, rebased.session)
    item = desk.workspace.store.get("sample-001").item
    assert final.session.rev == 3 and item.stem == "앨리스의 수정" and item.options[1].text == "밥의 수정"


def test_reload_drops_the_users_edits(desk):
    bob = desk.reviewer.open("bob", "item", "sample-001").session
    desk.reviewer.edit(BOB, bob, "stem", "버릴 수정")
    reloaded = desk.reviewer.reload("bob", bob)
    assert reloaded.session.edits == {} and reloaded.shown["stem"] != "버릴 수정"


@pytest.mark.parametrize(("path", "value", "message"), [
    ("answer", "7", "answer 7 is not an option number 1..4"),
    ("answer", "가", "give option numbers"),
    ("options.1.text", "", "an option needs text or an image"),
])
def test_an_invalid_edit_is_refused_and_loses_nothing(desk, path, value, message):
    session = desk.reviewer.open("alice", "item", "sample-001").session
    desk.reviewer.edit(ALICE, session, path, value)
    view = desk.reviewer.save(ALICE, session, "accept")
    assert message in view.error and view.session.edits == {path: value}
    assert desk.workspace.store.get("sample-001").rev == 1
    assert drafts.load_draft(desk.workspace.store.engine, "alice", "item", "sample-001").edits == {path: value}
    assert queues.reviews_of(desk.workspace.store.engine, "sample-001") == []


def test_the_answer_box_edits_a_choice_keys_option_numbers_and_keeps_what_it_requires(desk):
    store = desk.workspace.store
    stored = store.get("sample-002")
    every = {"format": "choice", "options": [1, 2], "require_all": True}
    store.update_fields("sample-002", {"answer": every}, expect_rev=stored.rev, author="t", stage="edit")
    view = desk.reviewer.open("alice", "item", "sample-002")
    assert view.shown["answer"] == every
    unchanged = desk.reviewer.sync(ALICE, view.session, {"answer": "1,2"})  # the box shows "1,2": no edit
    assert unchanged.edits == {}
    desk.reviewer.edit(ALICE, view.session, "answer", "2, 4")
    saved = desk.reviewer.save(ALICE, view.session)
    assert not saved.error and store.get("sample-002").item.answer == ChoiceKey(options=[2, 4], require_all=True)
    assert store.history("sample-002")[-1].changed_fields == ["answer"]

    numeric = {"format": "numeric", "value": "9.8", "unit": "℃/km"}
    store.update_fields("sample-001", {"answer": numeric, "options": []}, expect_rev=1, author="t", stage="edit")
    view = desk.reviewer.open("alice", "item", "sample-001")
    assert desk.reviewer.sync(ALICE, view.session, {"answer": "9.8 ℃/km"}).edits == {}  # shown as its text
    desk.reviewer.edit(ALICE, view.session, "answer", "3")
    refused = desk.reviewer.save(ALICE, view.session)
    assert "numeric key" in refused.error and store.get("sample-001").item.answer == NumericKey(**numeric)


def test_fields_outside_the_queue_cannot_be_edited(desk):
    session = desk.reviewer.open("alice", "korea", "sample-003").session
    with pytest.raises(NotAllowed, match="not editable"):
        desk.reviewer.edit(ALICE, session, "answer", "2")
    forged = Session("korea", "sample-003", 1, {"status": "accepted"})
    with pytest.raises(NotAllowed, match="not editable"):
        desk.reviewer.save(ALICE, forged)


def test_item_decisions_set_status_record_reviews_and_need_a_reason(desk):
    session = desk.reviewer.open("alice", "item", "sample-005").session
    assert "reason" in desk.reviewer.save(ALICE, session, "reject").error.lower()
    view = desk.reviewer.save(ALICE, session, "needs_fix", "보기 3 OCR 오류")
    item = desk.workspace.store.get("sample-005").item
    assert item.status == "in_review" and item.flags.review_reasons == ["보기 3 OCR 오류"]
    accepted = desk.reviewer.save(ALICE, view.session, "accept")
    assert desk.workspace.store.get("sample-005").item.status == "accepted" and not accepted.error
    decisions = [(r["user"], r["decision"]) for r in queues.reviews_of(desk.workspace.store.engine, "sample-005")]
    assert decisions == [("alice", "needs_fix"), ("alice", "accept")]


def test_korea_review_confirms_and_keeps_the_explicit_variant(desk):
    assert queues.neighbour(desk.workspace.store.engine, "korea", Filters(), None, "next") == "sample-003"
    session = desk.reviewer.open("alice", "korea", "sample-003").session
    desk.reviewer.edit(ALICE, session, "explicit_variant", "한국의 동해안에서 겨울철 …")
    desk.reviewer.save(ALICE, session, "confirm")
    item = desk.workspace.store.get("sample-003").item
    assert item.flags.korea_specific is True and item.explicit_variant == "한국의 동해안에서 겨울철 …"


def test_rationale_review_records_the_edit_distance(desk):
    session = desk.reviewer.open("bob", "rationale", "sample-004").session
    draft = desk.workspace.store.get("sample-004").item.rationale.text
    desk.reviewer.edit(BOB, session, "rationale.text", draft + " 추가")
    assert "minor fix or major fix" in desk.reviewer.save(BOB, session, "adopted").error
    desk.reviewer.save(BOB, session, "minor_fix")
    rationale = desk.workspace.store.get("sample-004").item.rationale
    assert (rationale.status, rationale.edit_distance, rationale.author) == ("minor_fix", 3, "bob")
    assert desk.reviewer.draft_rationale("sample-004") == draft


def test_next_unreviewed_for_me_follows_assignments_with_overlap(desk):
    engine = desk.workspace.store.engine
    report = queues.assign(engine, "item", ["alice", "bob", "carol"], 2)
    assert report.added == 10 and sorted(report.per_user.values()) == [3, 3, 4]
    assert queues.assign(engine, "item", ["alice", "bob", "carol"], 2).added == 0  # idempotent
    with pytest.raises(queues.QueueError, match="overlap"):
        queues.assign(engine, "item", ["alice"], 2)
    mine = Filters(assignee="alice")
    seen = []
    current = None
    while (found := queues.next_unreviewed(engine, "item", Filters(), "alice", current)) and found not in seen:
        seen.append(found)
        queues.record_review(engine, "item", found, "alice", "accept", 1)
        current = found
    assert sorted(seen) == sorted(_assigned(engine, "alice")) and len(seen) == report.per_user["alice"]
    assert queues.count(engine, "item", mine) == len(seen)


def _assigned(engine, user):
    from sqlalchemy import select

    from annotator.review.tables import assignments
    with engine.connect() as conn:
        return set(conn.execute(select(assignments.c.item_id).where(assignments.c.user == user)).scalars())


def test_filters_and_search(desk):
    engine = desk.workspace.store.engine
    assert queues.count(engine, "item", Filters(flag="multimodal")) == 1
    assert queues.count(engine, "item", Filters(search="동해안")) == 1
    assert queues.count(engine, "item", Filters(search="100%")) == 1  # a LIKE wildcard is matched literally
    assert queues.count(engine, "item", Filters(status=("accepted",))) == 1
    assert queues.count(engine, "rationale", Filters()) == 1
    assert desk.reviewer.navigate("alice", "item", Filters(search="sample-004"), None, "first").session.item_id == "sample-004"
    with pytest.raises(queues.QueueError, match="flag filter"):
        queues.count(engine, "item", Filters(flag="nope"))


def test_recrop_renders_a_new_blob_from_the_pdf_with_provenance(desk):
    session = desk.reviewer.open("alice", "item", "sample-002").session
    old = desk.workspace.store.get("sample-002").item.options[2].image
    box = [old.provenance.bbox[0] + 5, old.provenance.bbox[1] + 5, old.provenance.bbox[2] - 5, old.provenance.bbox[3]]
    view = desk.reviewer.recrop(ALICE, session, "options.3.image", box)
    new = view.shown["options"][2]["image"]
    assert new["blob"] != old.blob and new["provenance"]["bbox"] == box
    assert desk.workspace.blobs.get(new["blob"]).startswith(b"\x89PNG")
    desk.reviewer.save(ALICE, view.session)
    assert desk.workspace.store.get("sample-002").item.options[2].image.blob == new["blob"]
    with pytest.raises(RenderError, match="outside page"):
        desk.reviewer.recrop(ALICE, view.session, "options.3.image", [0, 0, 9000, 50])


def test_an_edit_event_landing_after_the_save_leaves_no_stale_draft(desk):
    session = desk.reviewer.open("alice", "item", "sample-001").session
    desk.reviewer.edit(ALICE, Session("item", "sample-001", 1, {}), "stem", "빠른 저장")
    desk.reviewer.edit(ALICE, Session("item", "sample-001", 1, {}), "options.1.text", "보기도 고침")
    saved = desk.reviewer.save(ALICE, desk.reviewer.sync(ALICE, session, {"stem": "빠른 저장"}))
    item = desk.workspace.store.get("sample-001").item
    assert saved.session.rev == 2 and item.options[0].text == "보기도 고침"  # both fields' edits saved
    desk.reviewer.edit(ALICE, Session("item", "sample-001", 1, {}), "stem", "빠른 저장")  # the late event
    assert drafts.load_draft(desk.workspace.store.engine, "alice", "item", "sample-001") is None


def test_revert_refuses_bad_requests_and_a_stale_revision(desk):
    store = desk.workspace.store
    view = desk.reviewer.open("alice", "item", "sample-001")
    original = store.get("sample-001").item.stem
    assert "reason" in desk.reviewer.revert(ALICE, view.session, 1, " ").error
    assert "choose an earlier revision" in desk.reviewer.revert(ALICE, view.session, 1, "why").error  # rev 1 is current
    desk.reviewer.edit(ALICE, view.session, "stem", "바뀐 문제")
    saved = desk.reviewer.save(ALICE, view.session)
    assert "choose an earlier revision" in desk.reviewer.revert(ALICE, saved.session, 7, "why").error
    store.update_fields("sample-001", {"answer": 2}, expect_rev=2, author="bob", stage="annotate")
    stale = desk.reviewer.revert(ALICE, saved.session, 1, "원래대로")  # bob saved rev 3 meanwhile
    assert stale.conflict is not None and store.get("sample-001").rev == 3
    done = desk.reviewer.revert(ALICE, Session("item", "sample-001", 3), 1, "원래대로")
    assert done.session.rev == 4 and store.get("sample-001").item.stem == original
    assert store.get("sample-001").item.to_record()["answer"] == store.history("sample-001")[0].snapshot["answer"]
    assert store.get("sample-001").item.answer_list() == [1]


def test_bulk_accept_skips_an_item_saved_after_the_count_and_progress_counts_it(desk):
    from annotator.review import bulk

    store = desk.workspace.store
    counted = bulk.matching(store, "item", Filters())
    ids = sorted(desk.ids)
    assert list(counted) == ids and all(rev == store.get(i).rev for i, rev in counted.items())
    store.update_fields(ids[0], {"stem": "방금 고침"}, expect_rev=counted[ids[0]], author="bob", stage="annotate")
    report = bulk.apply(store, "item", "accept", counted, ALICE)
    assert report.skipped == [ids[0]] and sorted(report.changed) == ids[1:]
    assert store.get(ids[0]).item.status == "extracted" and store.get(ids[1]).item.status == "accepted"
    assert store.history(ids[1])[-1].stage == "annotate-bulk"
    progress = queues.queue_progress(store.engine, "item", "alice")
    assert (progress.total, progress.done, progress.mine) == (len(ids), len(ids) - 1, len(ids) - 1)
    with pytest.raises(NotAllowed, match="'delete' does not belong to the item queue"):
        bulk.apply(store, "item", "delete", counted, ALICE)
