"""Who may write an item (annotator/review/claims.py), over the real HTTP API: assignments are enforced on
the server (an admin's override is recorded in the revision's reason), an item a reviewer opened is
reserved for them (others see who has it, their saves are refused until it is saved, skipped or
lapses), Skip, and a revert that brings back only the fields the role may edit, previewed first."""

from __future__ import annotations

import copy
import json
import re

import pytest
from sqlalchemy import select, update

from annotator.review import auth, claims, queues
from annotator.review.actions import Reviewer, Session
from annotator.review.queues import Filters
from annotator.review.render import PdfRenderer
from annotator.review.tables import ensure_tables, reservations, reviews
from curation.core.item import parse_item
from curation.core.workspace import init_workspace

from .annotator_support import running_server

PASSWORDS = {"alice": "password-alice", "bob": "password-bob", "carol": "password-carol", "dave": "password-dave"}
ROLES = {"alice": "admin", "bob": "expert", "carol": "annotator", "dave": "annotator"}
DRAFT = "공기가 상승하면 단열 팽창으로 냉각된다."


def _record(item_id: str, **fields) -> dict:
    return {"id": item_id, "source": {"exam": "시험"}, "stem": f"{item_id} 문제",
            "options": [{"text": "보기 1"}, {"text": "보기 2"}, {"text": "보기 3"}], "answer": 1, **fields}


ITEMS = [_record(f"task-{n:02d}") for n in range(1, 9)] + [
    _record("explained", rationale={"text": DRAFT, "status": "draft", "author": "draft-model"})]


def _workspace(root, db_url: str | None = None):
    workspace = init_workspace(root, db_url)
    ensure_tables(workspace.store.engine)
    workspace.store.save_items([parse_item(r) for r in ITEMS], author="test", stage="import")
    for name, role in ROLES.items():
        auth.add_user(workspace.store.engine, name, role, PASSWORDS[name])
    return workspace


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")
    pytest.importorskip("gradio_client", reason="gradio_client is not installed (extra: test)")
    workspace = _workspace(tmp_path_factory.mktemp("assign") / "ws")
    with running_server(workspace) as url:
        yield url, workspace


@pytest.fixture(scope="module")
def clients(http_server):
    from gradio_client import Client

    url, _ = http_server
    return {name: Client(url, auth=(name, password), verbose=False) for name, password in PASSWORDS.items()}


def _save(client, queue: str, item_id: str, rev: int, edits: dict, decision: str = "", reason: str = "") -> dict:
    return client.predict(queue, item_id, rev, json.dumps(edits), decision, reason, api_name="/save_item")


def _open(client, item_id: str) -> str:
    """Open an item in the item queue as the page's Find does; the outputs as one text."""
    outputs = client.predict([], "", "", "", "", item_id, "id", api_name="/item_first")
    return json.dumps(outputs, ensure_ascii=False)


def _history(store, item_id: str) -> list[tuple[int, str, str, str | None]]:
    return [(r.rev, r.author, r.stage, r.reason) for r in store.history(item_id)]


def _reviews(engine, item_id: str) -> list[tuple[str, str]]:
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(select(reviews.c.user, reviews.c.decision)
                                                   .where(reviews.c.item_id == item_id).order_by(reviews.c.id))]


def test_an_item_assigned_to_another_annotator_is_refused_and_an_admins_override_is_recorded(http_server, clients):
    from gradio_client.exceptions import AppError

    _, workspace = http_server
    store, engine = workspace.store, workspace.store.engine
    queues.assign(engine, "item", ["dave"], 1, item_ids=["task-01", "task-02"])
    before = _history(store, "task-01")

    with pytest.raises(AppError, match="assigned to dave"):
        _save(clients["carol"], "item", "task-01", 1, {"stem": "carol 고침"}, "accept")
    with pytest.raises(AppError, match="assigned to dave"):
        _save(clients["carol"], "item", "task-01", 1, {"stem": "carol 고침"})
    assert _history(store, "task-01") == before and _reviews(engine, "task-01") == []

    # the assignee saves; an item with no assignment stays open to everyone
    assert _save(clients["dave"], "item", "task-01", 1, {}, "accept")["status"] == "saved"
    assert _save(clients["carol"], "item", "task-03", 1, {"stem": "아무나"}, "accept")["status"] == "saved"

    overridden = _save(clients["alice"], "item", "task-02", 1, {"stem": "관리자 고침"}, "needs_fix", "보기 확인")
    assert overridden["status"] == "saved"
    rev, author, stage, reason = _history(store, "task-02")[-1]
    assert (rev, author, stage) == (2, "alice", "annotate")
    assert reason.startswith("보기 확인") and "admin override" in reason and "dave" in reason
    # the override stays out of the item's own review reasons and the review record's reason
    assert store.get("task-02").item.flags.review_reasons == ["보기 확인"]
    assert _reviews(engine, "task-02") == [("alice", "needs_fix")]


def _leaves(value, prefix: str = "") -> dict[str, object]:
    """Every leaf of a record by dotted path (1-based list positions), written here independently of
    curation.core.diff."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _leaves(item, f"{prefix}.{key}" if prefix else key).items()}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return {k: v for n, item in enumerate(value, start=1) for k, v in _leaves(item, f"{prefix}.{n}").items()}
    return {prefix: value}


# what an annotator may edit in the item queue, read off queue_specs.py's item queue by hand
ANNOTATOR_ITEM_FIELDS = [r"stem", r"options\.\d+\.text", r"source\.bbox", r"images\.\d+(\..*)?",
                         r"options\.\d+\.image(\..*)?"]


def _changed(old: dict, new: dict) -> set[str]:
    before, after = _leaves(old), _leaves(new)
    return {path for path in set(before) | set(after) if before.get(path) != after.get(path)}


def test_an_annotators_revert_leaves_an_experts_adopted_rationale_alone_and_the_preview_says_what_changes(
        http_server, clients):
    from gradio_client.exceptions import AppError

    _, workspace = http_server
    store = workspace.store
    carol, bob = clients["carol"], clients["bob"]
    assert _save(bob, "rationale", "explained", 1, {}, "adopted")["status"] == "saved"  # rev 2: adopted by bob
    adopted = store.history("explained")[-1].snapshot["rationale"]
    assert adopted["status"] == "adopted" and adopted["author"] == "bob"

    # rev 1 differs from rev 2 only in the expert's rationale fields: nothing the annotator may revert
    assert carol.predict("item", "explained", 2, 1, api_name="/revert_preview") == {"fields": []}
    refused = carol.predict("item", "explained", 2, 1, "초안으로", api_name="/revert_item")
    assert refused["status"] == "invalid" and "no field you may edit" in refused["message"]
    assert store.get("explained").rev == 2

    assert _save(carol, "item", "explained", 2, {"stem": "carol이 바꾼 문제", "options.2.text": "바뀐 보기"})["rev"] == 3
    snapshots = {r.rev: r.snapshot for r in store.history("explained")}
    changed = _changed(snapshots[3], snapshots[1])
    assert {"stem", "options.2.text", "rationale.status", "rationale.author"} <= changed
    expected = sorted(path for path in changed if any(re.fullmatch(p, path) for p in ANNOTATOR_ITEM_FIELDS))
    assert expected == ["options.2.text", "stem"]

    preview = carol.predict("item", "explained", 3, 1, api_name="/revert_preview")
    assert sorted(field["field"] for field in preview["fields"]) == expected
    assert {f["field"]: (f["now"], f["then"]) for f in preview["fields"]} == {
        path: (_leaves(snapshots[3])[path], _leaves(snapshots[1])[path]) for path in expected}

    with pytest.raises(AppError, match="may not use the rationale queue"):  # nor through the expert's queue
        carol.predict("rationale", "explained", 3, 1, "초안으로", api_name="/revert_item")
    done = carol.predict("item", "explained", 3, 1, "잘못 고침", api_name="/revert_item")
    assert done["status"] == "saved" and done["rev"] == 4
    last = store.history("explained")[-1]
    want = copy.deepcopy(snapshots[3])
    want["stem"], want["options"][1]["text"] = snapshots[1]["stem"], snapshots[1]["options"][1]["text"]
    assert last.snapshot == want  # only the previewed fields changed: the rationale is still bob's adoption
    assert (last.author, last.stage) == ("carol", "revert") and "잘못 고침" in last.reason


def test_an_item_being_edited_is_reserved_others_see_who_has_it_and_cannot_save_until_it_is_released(
        http_server, clients):
    from gradio_client.exceptions import AppError

    _, workspace = http_server
    store, engine = workspace.store, workspace.store.engine
    carol, dave = clients["carol"], clients["dave"]

    assert "is editing this item" not in _open(carol, "task-05")
    assert "is editing this item" not in _open(dave, "task-05")  # opening reserves nothing
    assert claims.holder(engine, "item", "task-05") is None
    claims.reserve(engine, "carol", "item", "task-05")  # what her first edit takes (tests/test_annotator_hardening.py)
    seen = _open(dave, "task-05")
    notice = re.search(r"bs-warning(.*?)</div>", seen)  # the notice itself; the page has UTC times elsewhere (as <time> titles)
    assert notice and "carol is editing this item" in notice.group(1) and "UTC" not in notice.group(1), seen[:3000]
    assert dave.predict("task-05", "item", api_name="/get_item")["reserved_by"] == "carol"
    with pytest.raises(AppError, match="carol is editing it"):
        _save(dave, "item", "task-05", 1, {"stem": "dave 고침"}, "accept")
    assert store.get("task-05").rev == 1 and _reviews(engine, "task-05") == []

    assert _save(carol, "item", "task-05", 1, {}, "accept")["rev"] == 2  # carol's save releases it
    assert dave.predict("task-05", "item", api_name="/get_item")["reserved_by"] is None
    assert _save(dave, "item", "task-05", 2, {"stem": "dave 고침"})["rev"] == 3

    claims.reserve(engine, "carol", "item", "task-06")
    with pytest.raises(AppError, match="carol is editing it"):
        _save(dave, "item", "task-06", 1, {"stem": "dave 고침"})
    with engine.begin() as conn:  # the reservation lapses (as the idle time without an edit would leave it)
        conn.execute(update(reservations).where(reservations.c.item_id == "task-06").values(expires_at=0.0))
    assert "is editing this item" not in _open(dave, "task-06")
    assert _save(dave, "item", "task-06", 1, {"stem": "dave 고침"})["rev"] == 2


def test_next_passes_over_items_reserved_by_others_and_skip_releases_and_moves_on(tmp_path, store_url):
    workspace = _workspace(tmp_path / "ws", store_url)
    reviewer = Reviewer(workspace.store, PdfRenderer(workspace.blobs))
    engine = workspace.store.engine
    filters = Filters(search="task-")
    first = reviewer.navigate("carol", "item", filters, None, "unreviewed")
    assert first.session.item_id == "task-01" and claims.holder(engine, "item", "task-01") is None  # only opened
    reviewer.edit(auth.User("carol", "annotator"), first.session, "stem", "carol 고치는 중")  # the first edit reserves
    assert claims.holder(engine, "item", "task-01").user == "carol"

    dave_next = reviewer.navigate("dave", "item", filters, None, "unreviewed")
    assert dave_next.session.item_id == "task-02"  # task-01 is carol's
    assert reviewer.navigate("dave", "item", filters, None, "first").session.item_id == "task-02"
    assert reviewer.navigate("dave", "item", Filters(), "task-02", "prev").session.item_id != "task-01"
    reviewer.edit(auth.User("dave", "annotator"), Session("item", "task-02", 1), "stem", "dave 고치는 중")

    skipped = reviewer.skip("carol", first.session, filters)
    assert skipped.session.item_id == "task-03"  # task-02 is dave's now
    assert claims.holder(engine, "item", "task-01") is None
    # carol's next unreviewed item is not the one she skipped while others remain
    assert reviewer.navigate("carol", "item", filters, "task-08", "unreviewed").session.item_id == "task-03"
    # dave may now take task-01: carol left it
    assert reviewer.navigate("dave", "item", filters, None, "first").session.item_id == "task-01"
    saved = reviewer.save(auth.User("dave", "annotator"), Session("item", "task-01", 1), "accept")
    assert saved.session.rev == 2 and claims.holder(engine, "item", "task-01") is None


def test_an_admins_bulk_action_records_its_assignment_overrides(tmp_path, store_url):
    from annotator.review import bulk

    workspace = _workspace(tmp_path / "ws", store_url)
    store, engine = workspace.store, workspace.store.engine
    queues.assign(engine, "item", ["dave"], 1, item_ids=["task-02"])
    counted = {item_id: 1 for item_id in ("task-02", "task-03")}
    report = bulk.apply(store, "item", "accept", counted, auth.User("alice", "admin"))
    assert (report.changed, report.skipped) == (["task-02", "task-03"], [])
    assert [store.history(i)[-1].reason for i in ("task-02", "task-03")] == [
        "accept · admin override: assigned to dave", "accept"]


def test_a_reservation_goes_to_one_reviewer_and_lapses(store_url, tmp_path):
    engine = _workspace(tmp_path / "ws", store_url).store.engine
    assert claims.reserve(engine, "carol", "item", "task-01") is None
    held = claims.reserve(engine, "dave", "item", "task-01")
    assert held is not None and held.user == "carol"
    assert claims.reserve(engine, "carol", "item", "task-01") is None  # her own, renewed
    assert claims.reserve(engine, "carol", "korea", "task-01") is None  # per queue
    with engine.begin() as conn:
        conn.execute(update(reservations).where(reservations.c.queue == "item").values(expires_at=0.0))
    assert claims.holder(engine, "item", "task-01") is None
    assert claims.reserve(engine, "dave", "item", "task-01") is None
    assert claims.holder(engine, "item", "task-01").user == "dave"
    claims.release(engine, "dave")  # logout: all of dave's
    assert claims.holder(engine, "item", "task-01") is None
    assert claims.holder(engine, "korea", "task-01").user == "carol"


def test_the_assignees_of_an_overlapped_item_are_not_kept_out_of_it_by_each_others_reservation(tmp_path):
    workspace = _workspace(tmp_path / "ws")
    store, engine = workspace.store, workspace.store.engine
    reviewer = Reviewer(store, PdfRenderer(workspace.blobs))
    queues.assign(engine, "item", ["carol", "dave"], 2, item_ids=["task-07"])
    assert reviewer.open("carol", "item", "task-07").reserved_by is None
    opened = reviewer.open("dave", "item", "task-07")
    assert opened.reserved_by is None and "working on this item" not in opened.message
    assert reviewer.navigate("dave", "item", Filters(), None, "unreviewed").session.item_id == "task-07"
    # an overlapped item: dave's decision is kept as his own (adjudication.py) while carol's is missing
    decided = reviewer.save(auth.User("dave", "annotator"), Session("item", "task-07", 1), "accept")
    assert decided.session.rev == 1 and not decided.error and store.get("task-07").rev == 1
    with pytest.raises(claims.Claimed, match="assigned to carol, dave"):
        reviewer.save(auth.User("bob", "expert"), Session("item", "task-07", 1), "reject", "틀림")
