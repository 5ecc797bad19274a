"""The queue specs (annotator/review/queue_specs.py) drive what a queue selects, what a decision writes
from the single-item view and from a bulk action alike, and what the server lets each role do —
checked through the real HTTP API, not only by hidden buttons."""

from __future__ import annotations

import json

import pytest

from annotator.review import auth, bulk, queues
from annotator.review.actions import Session
from annotator.review.queues import Filters
from annotator.review.tables import ensure_tables, reviews
from curation.core.item import parse_item
from curation.core.store import Store
from curation.core.workspace import init_workspace
from scoring.keys import ChoiceKey

from .annotator_support import Desk, running_server, sample_desk


def _record(item_id: str, **fields) -> dict:
    return {"id": item_id, "source": {"exam": "시험"}, "stem": f"{item_id} 문제",
            "options": [{"text": "보기 1"}, {"text": "보기 2"}, {"text": "보기 3"}], "answer": 1, **fields}


# Items whose `extra` holds keys named like the flags: a match on the serialised JSON took them for
# Korea candidates, needs-fix items and items with a rationale.
FACET_ITEMS = [
    _record("plain"),
    _record("decoy", extra={"korea_reasons": ["not a flag"], "review_reasons": ["nor this"],
                            "rationale": {"text": "not a rationale"}}),
    _record("candidate", flags={"korea_reasons": ["우리나라"]}),
    _record("decided-no", flags={"korea_specific": False}),
    _record("fix-me", flags={"review_reasons": ["보기 2 OCR"]}),
    _record("explained", rationale={"text": "풀이", "status": "draft"}),
]
# what each queue and flag filter holds, read off the records above by hand
EXPECTED_QUEUES = {"item": {r["id"] for r in FACET_ITEMS}, "korea": {"candidate", "decided-no"},
                   "rationale": {"explained"}}
EXPECTED_FLAGS = {"korea_candidate": {"candidate"}, "korea_no": {"decided-no"}, "korea_yes": set(),
                  "needs_fix": {"fix-me"}, "has_rationale": {"explained"},
                  "korea_undecided": {r["id"] for r in FACET_ITEMS} - {"decided-no"}}


def _ids(engine, queue: str, filters: Filters) -> set[str]:
    found, current = set(), None
    while (current := queues.neighbour(engine, queue, filters, current, "next")) is not None:
        found.add(current)
    return found


def test_queues_and_flag_filters_select_by_the_item_fields_not_by_text_in_the_record(store_url):
    store = Store(store_url, create=True)
    ensure_tables(store.engine)
    store.save_items([parse_item(r) for r in FACET_ITEMS], author="test", stage="import")
    for queue, expected in EXPECTED_QUEUES.items():
        assert _ids(store.engine, queue, Filters()) == expected, queue
        assert queues.count(store.engine, queue, Filters()) == len(expected), queue
    for flag, expected in EXPECTED_FLAGS.items():
        assert _ids(store.engine, "item", Filters(flag=flag)) == expected, flag
    store.close()


def _revisions(store: Store, item_id: str) -> list[dict]:
    return [vars(revision) for revision in store.history(item_id)]


def _reviews(engine) -> list[tuple]:
    from sqlalchemy import select

    with engine.connect() as conn:
        rows = conn.execute(select(reviews.c.queue, reviews.c.item_id, reviews.c.user, reviews.c.decision,
                                   reviews.c.reason, reviews.c.rev).order_by(reviews.c.id)).all()
    return [tuple(row) for row in rows]


def _desk(root) -> Desk:
    """A workspace holding FACET_ITEMS (written alike in every workspace: no PDF, no timestamps in them)."""
    from annotator.review.actions import Reviewer
    from annotator.review.render import PdfRenderer

    workspace = init_workspace(root)
    ensure_tables(workspace.store.engine)
    workspace.store.save_items([parse_item(r) for r in FACET_ITEMS], author="test", stage="import")
    return Desk(workspace, Reviewer(workspace.store, PdfRenderer(workspace.blobs)), [r["id"] for r in FACET_ITEMS])


@pytest.mark.parametrize(("queue", "decision", "reason", "field", "value"), [
    ("item", "accept", "", "status", "accepted"),
    ("item", "accept", "출처 확인함", "status", "accepted"),
    ("korea", "confirm", "", ("flags", "korea_specific"), True),
    ("korea", "deny", "지역 무관", ("flags", "korea_specific"), False),
])
def test_a_decision_from_the_item_view_and_from_bulk_gives_the_same_revision(tmp_path, queue, decision, reason,
                                                                             field, value):
    single, many = (_desk(tmp_path / name) for name in ("single", "bulk"))
    admin = auth.User("alice", "admin")
    item_id = "candidate"
    before = single.workspace.store.history(item_id)[-1].snapshot

    session = single.reviewer.open(admin.name, queue, item_id).session
    view = single.reviewer.save(admin, session, decision, reason)
    assert not view.error and view.session.rev == 2
    counted = {item_id: many.workspace.store.get(item_id).rev}
    report = bulk.apply(many.workspace.store, queue, decision, counted, admin, reason)
    assert report.changed == [item_id] and report.skipped == []

    by_view, by_bulk = (_revisions(desk.workspace.store, item_id) for desk in (single, many))
    assert len(by_view) == len(by_bulk) == 2 and by_view[0]["snapshot"] == by_bulk[0]["snapshot"]
    for name in by_view[1]:
        if name == "created_at":
            continue
        if name == "stage":  # the one difference, by design: which path wrote it
            assert (by_view[1][name], by_bulk[1][name]) == ("annotate", "annotate-bulk")
            continue
        assert by_view[1][name] == by_bulk[1][name], name
    expected = json.loads(json.dumps(before))
    path = field if isinstance(field, tuple) else (field,)
    target = expected
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    assert by_view[1]["snapshot"] == expected  # only the decision's field changed, review reasons untouched
    assert by_view[1]["reason"] == (reason or decision) and by_view[1]["author"] == "alice"
    recorded = [(queue, item_id, "alice", decision, reason or None, 2)]
    assert _reviews(single.workspace.store.engine) == _reviews(many.workspace.store.engine) == recorded


def test_the_reviewer_refuses_what_the_role_does_not_have_and_writes_nothing(workspace):
    from annotator.review.queue_specs import NotAllowed

    desk = sample_desk(workspace)
    carol, bob = auth.User("carol", "annotator"), auth.User("bob", "expert")
    session = desk.reviewer.open("carol", "item", "sample-001").session
    with pytest.raises(NotAllowed, match="not editable by the annotator role"):
        desk.reviewer.edit(carol, session, "answer", "2")
    with pytest.raises(NotAllowed, match="may not decide 'reject'"):
        desk.reviewer.save(carol, Session("item", "sample-001", 1), "reject", "틀린 문제")
    with pytest.raises(NotAllowed, match="may not use the rationale queue"):
        desk.reviewer.save(carol, Session("rationale", "sample-004", 1, {"rationale.text": "새 풀이"}), "minor_fix")
    with pytest.raises(NotAllowed, match="not a bulk action"):
        bulk.apply(workspace.store, "item", "needs_fix", {"sample-001": 1}, auth.User("alice", "admin"), "이유")
    with pytest.raises(NotAllowed, match="may not run bulk actions"):
        bulk.apply(workspace.store, "item", "accept", {"sample-001": 1}, bob)
    assert [workspace.store.get(i).rev for i in desk.ids] == [1] * len(desk.ids)
    assert _reviews(workspace.store.engine) == []
    # the form sends every field it shows: an unchanged answer is not an edit, and an expert may change it
    synced = desk.reviewer.sync(carol, session, {"stem": "고친 문제", "answer": "1"})
    assert synced.edits == {"stem": "고친 문제"}
    assert desk.reviewer.save(bob, desk.reviewer.sync(bob, Session("item", "sample-002", 1), {"answer": "3"})).session.rev == 2


# -- over HTTP: the server the `annotate` command runs, called as a script calls it -----------------

PASSWORDS = {"alice": "password-alice", "bob": "password-bob", "carol": "password-carol"}
ROLES = {"alice": "admin", "bob": "expert", "carol": "annotator"}


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")
    pytest.importorskip("gradio_client", reason="gradio_client is not installed (extra: test)")
    from annotator.review.sample import load_sample

    root = tmp_path_factory.mktemp("specs") / "ws"
    workspace = init_workspace(root)
    load_sample(workspace)
    for name, role in ROLES.items():
        auth.add_user(workspace.store.engine, name, role, PASSWORDS[name])
    with running_server(workspace) as url:
        yield url, workspace


def _client(url: str, name: str):
    from gradio_client import Client

    return Client(url, auth=(name, PASSWORDS[name]), verbose=False)


def _save(client, queue: str, item_id: str, rev: int, edits: dict, decision: str = "", reason: str = "") -> dict:
    return client.predict(queue, item_id, rev, json.dumps(edits), decision, reason, api_name="/save_item")


def test_an_annotator_asking_over_http_for_what_the_spec_does_not_give_is_refused(http_server):
    from gradio_client.exceptions import AppError

    url, workspace = http_server
    store = workspace.store
    carol = _client(url, "carol")
    refused = [("item", "sample-001", {}, "reject", "틀린 문제"),  # an expert's decision
               ("item", "sample-001", {"answer": 2}, "", ""),  # an expert's field
               ("item", "sample-001", {"status": "accepted"}, "", ""),  # no one's field
               ("korea", "sample-003", {}, "accept", ""),  # another queue's decision
               ("rationale", "sample-004", {"rationale.text": "새 풀이"}, "minor_fix", "")]  # an expert's queue
    for queue, item_id, edits, decision, reason in refused:
        with pytest.raises(AppError, match="Not allowed|may not use"):
            _save(carol, queue, item_id, 1, edits, decision, reason)
    assert {item_id: store.get(item_id).rev for _, item_id, *_ in refused} == dict.fromkeys(
        ["sample-001", "sample-003", "sample-004"], 1)
    assert store.get("sample-001").item.answer == ChoiceKey(options=[1]) and _reviews(store.engine) == []

    import httpx

    with httpx.Client(base_url=url) as browser:  # the edit relay's draft endpoint, as the page calls it
        assert browser.post("login", data={"username": "carol", "password": PASSWORDS["carol"]}).status_code == 200
        draft = browser.post("bs/draft", headers={"x-benchsmith": "1"},
                             json={"queue": "item", "item_id": "sample-001", "rev": 1, "path": "answer", "value": "2"})
        assert draft.status_code == 403 and "not editable by the annotator role" in draft.json()["detail"]
    from annotator.review.drafts import load_draft

    assert load_draft(store.engine, "carol", "item", "sample-001") is None

    # what the spec gives is done: the annotator's accept, the expert's reject and key change
    accepted = _save(carol, "item", "sample-001", 1, {"stem": "고친 문제"}, "accept")
    assert accepted["status"] == "saved" and accepted["rev"] == 2
    rejected = _save(_client(url, "bob"), "item", "sample-005", 1, {"answer": 2}, "reject", "정답 없음")
    assert rejected["status"] == "saved"
    item = store.get("sample-005").item
    assert (item.status, item.answer, item.flags.review_reasons) == ("rejected", ChoiceKey(options=[2]), ["정답 없음"])
    assert [(r[1], r[2], r[3]) for r in _reviews(store.engine)] == [("sample-001", "carol", "accept"),
                                                                    ("sample-005", "bob", "reject")]
