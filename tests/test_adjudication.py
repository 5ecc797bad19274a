"""Each reviewer's own decision on an overlapped item (assigned to two or more reviewers): agreeing
decisions apply once with every decision in the history, differing ones leave the item unchanged
and go to the Adjudicate queue, where only the lead (admin) may decide; the reviewers' agreement
figures (Cohen's/Fleiss' κ, Krippendorff's α nominal) equal the textbook formulas computed here."""

from __future__ import annotations

import json
from collections import Counter
from itertools import permutations

import pytest
from sqlalchemy import select

from annotator.review import adjudication, auth, queues, stats
from annotator.review.actions import Reviewer, Session
from annotator.review.render import PdfRenderer
from annotator.review.tables import ensure_tables, reviews
from curation.core.blobs import BlobStore
from curation.core.item import parse_item
from curation.core.store import Store

from .test_queue_specs import PASSWORDS, _client, _save, http_server  # noqa: F401  (the module's server fixture)

CAROL, DAVE, FRANK = (auth.User(name, "annotator") for name in ("carol", "dave", "frank"))
ALICE = auth.User("alice", "admin")


def _record(item_id: str, **fields) -> dict:
    return {"id": item_id, "source": {"exam": "시험"}, "stem": f"{item_id} 문제",
            "options": [{"text": "보기 1"}, {"text": "보기 2"}], "answer": 1, **fields}


ITEMS = [_record(f"q{n}") for n in range(1, 7)] + [_record(f"k{n}", flags={"korea_reasons": ["우리나라"]})
                                                   for n in range(1, 5)]


@pytest.fixture
def desk(store_url, tmp_path):
    store = Store(store_url, create=True)
    ensure_tables(store.engine)
    store.save_items([parse_item(r) for r in ITEMS], author="test", stage="import")
    yield Reviewer(store, PdfRenderer(BlobStore(tmp_path / "blobs")))
    store.close()


def _decide(reviewer: Reviewer, user: auth.User, queue: str, item_id: str, decision: str | None, reason: str = "",
            edits: dict | None = None):
    rev = reviewer.store.get(item_id).rev
    return reviewer.save(user, Session(queue, item_id, rev, dict(edits or {})), decision, reason)


def _reviews(reviewer: Reviewer) -> list[tuple]:
    with reviewer.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(select(reviews.c.queue, reviews.c.item_id, reviews.c.user,
                                                          reviews.c.decision).order_by(reviews.c.id))]


def test_two_reviewers_who_agree_apply_once_with_both_in_the_history(desk):
    queues.assign(desk.engine, "item", ["carol", "dave"], 2, item_ids=["q1"])
    first = _decide(desk, CAROL, "item", "q1", "accept", edits={"stem": "고친 문제"})
    assert not first.error and "1/2" in first.message
    assert desk.store.get("q1").rev == 1  # kept apart until dave decides
    assert desk.store.get("q1").item.stem == "q1 문제"
    second = _decide(desk, DAVE, "item", "q1", "accept", edits={"stem": "고친 문제"})
    assert not second.error and "agree" in second.message
    history = desk.store.history("q1")
    assert [revision.rev for revision in history] == [1, 2]
    applied = history[-1]
    assert (applied.snapshot["status"], applied.snapshot["stem"]) == ("accepted", "고친 문제")
    assert applied.author == "carol+dave" and applied.stage == adjudication.STAGE_AGREED
    assert "carol: accept" in applied.reason and "dave: accept" in applied.reason
    assert adjudication.cases(desk.engine) == []
    # each reviewer's decision counts as theirs (progress, next unreviewed), at the revision it was made on
    assert _reviews(desk) == [("item", "q1", "carol", "accept"), ("item", "q1", "dave", "accept")]


def test_two_reviewers_who_differ_leave_the_item_unchanged_and_the_lead_decides(desk):
    queues.assign(desk.engine, "item", ["carol", "dave"], 2, item_ids=["q2"])
    _decide(desk, CAROL, "item", "q2", "accept")
    differs = _decide(desk, DAVE, "item", "q2", "needs_fix", "보기 2 OCR", edits={"options.2.text": "보기 이"})
    assert not differs.error and "Adjudicate" in differs.message
    assert [revision.rev for revision in desk.store.history("q2")] == [1]
    assert desk.store.get("q2").item.status != "accepted"
    [case] = adjudication.cases(desk.engine)
    assert (case.queue, case.item_id) == ("item", "q2")
    assert [(row.user, row.decision, row.edits, row.reason, row.base_rev) for row in case.decisions] == [
        ("carol", "accept", {}, None, 1), ("dave", "needs_fix", {"options.2.text": "보기 이"}, "보기 2 OCR", 1)]
    # a reviewer deciding again while it waits for the lead is refused, nothing written
    again = _decide(desk, CAROL, "item", "q2", "needs_fix", "다시")
    assert again.error and desk.store.get("q2").rev == 1

    from annotator.review.queue_specs import NotAllowed

    with pytest.raises(NotAllowed, match="may not use the adjudicate queue"):
        adjudication.resolve(desk.store, CAROL, "item", "q2", 1, "accept")
    assert desk.store.get("q2").rev == 1

    new_rev = adjudication.resolve(desk.store, ALICE, "item", "q2", 1, "needs_fix", reason="보기 2 OCR",
                                   edits={"options.2.text": "보기 이"})
    applied = desk.store.history("q2")[-1]
    assert (new_rev, applied.author, applied.stage) == (2, "alice", adjudication.STAGE_ADJUDICATED)
    assert applied.snapshot["options"][1]["text"] == "보기 이"
    assert applied.snapshot["flags"]["review_reasons"] == ["보기 2 OCR"]
    assert "carol: accept" in applied.reason and "dave: needs_fix (보기 2 OCR)" in applied.reason
    assert adjudication.cases(desk.engine) == []
    assert _reviews(desk)[-1] == ("adjudicate", "q2", "alice", "adjudicate")


def test_an_item_with_one_assignee_is_decided_directly(desk):
    queues.assign(desk.engine, "item", ["carol"], 1, item_ids=["q3"])
    view = _decide(desk, CAROL, "item", "q3", "accept")
    assert view.session.rev == 2 and desk.store.get("q3").item.status == "accepted"
    history = desk.store.history("q3")[-1]
    assert (history.author, history.stage, history.reason) == ("carol", "annotate", "accept")
    # on an overlapped item a reviewer's plain save does not write the shared record
    queues.assign(desk.engine, "item", ["carol", "dave"], 2, item_ids=["q4"])
    plain = _decide(desk, CAROL, "item", "q4", None, edits={"stem": "내 수정"})
    assert plain.error and desk.store.get("q4").rev == 1


def test_reviewers_deciding_at_the_same_moment_settle_each_item_exactly_once(desk):
    import threading

    ids = ["q1", "q2", "q3", "q4", "q5", "q6"]
    queues.assign(desk.engine, "item", ["carol", "dave"], 2, item_ids=ids)
    for item_id in ids:
        barrier, views = threading.Barrier(2), {}

        def decide(user: auth.User, item_id: str = item_id, barrier: threading.Barrier = barrier,
                   views: dict = views) -> None:
            barrier.wait()
            views[user.name] = _decide(desk, user, "item", item_id, "accept")

        threads = [threading.Thread(target=decide, args=(user,)) for user in (CAROL, DAVE)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not any(view.error for view in views.values()), views
        assert [revision.rev for revision in desk.store.history(item_id)] == [1, 2], item_id
        assert desk.store.get(item_id).item.status == "accepted"
    assert adjudication.cases(desk.engine) == []


# -- agreement: the formulas written out here, not read from the code under test ------------------

def cohen(pairs: list[tuple[str, str]]) -> float:
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    categories = {c for pair in pairs for c in pair}
    expected = sum((sum(a == c for a, _ in pairs) / n) * (sum(b == c for _, b in pairs) / n) for c in categories)
    return (observed - expected) / (1 - expected)


def fleiss(units: list[list[str]]) -> float:
    """Fleiss' κ for a constant number of raters m per unit."""
    m, n = len(units[0]), len(units)
    categories = {c for unit in units for c in unit}
    p_i = [(sum(unit.count(c) ** 2 for c in categories) - m) / (m * (m - 1)) for unit in units]
    p_j = {c: sum(unit.count(c) for unit in units) / (n * m) for c in categories}
    p_bar, p_e = sum(p_i) / n, sum(v * v for v in p_j.values())
    return (p_bar - p_e) / (1 - p_e)


def alpha_nominal(units: list[list[str]]) -> float:
    """Krippendorff's α (nominal) from the coincidence matrix."""
    coincidences: Counter = Counter()
    for unit in units:
        for a, b in permutations(range(len(unit)), 2):
            coincidences[(unit[a], unit[b])] += 1 / (len(unit) - 1)
    totals: Counter = Counter()
    for (c, _), value in coincidences.items():
        totals[c] += value
    n = sum(totals.values())
    disagree = sum(value for (c, k), value in coincidences.items() if c != k)
    chance = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    return 1 - (n - 1) * disagree / chance


ITEM_DECISIONS = {"q1": ("accept", "accept"), "q2": ("accept", "needs_fix"), "q3": ("needs_fix", "needs_fix"),
                  "q4": ("accept", "accept"), "q5": ("needs_fix", "accept"), "q6": ("accept", "accept")}
KOREA_DECISIONS = {"k1": ("confirm", "confirm", "deny"), "k2": ("deny", "deny", "deny"),
                   "k3": ("confirm", "confirm", "confirm"), "k4": ("confirm", "deny", "deny")}


def test_agreement_figures_on_item_decisions_and_korea_flags_equal_the_formulas(desk):
    queues.assign(desk.engine, "item", ["carol", "dave"], 2, item_ids=list(ITEM_DECISIONS))
    for item_id, made in ITEM_DECISIONS.items():
        for user, decision in zip((CAROL, DAVE), made, strict=True):
            assert not _decide(desk, user, "item", item_id, decision, "이유" if decision == "needs_fix" else "").error
    queues.assign(desk.engine, "korea", ["carol", "dave", "frank"], 3, item_ids=list(KOREA_DECISIONS))
    for item_id, made in KOREA_DECISIONS.items():
        for user, decision in zip((CAROL, DAVE, FRANK), made, strict=True):
            assert not _decide(desk, user, "korea", item_id, decision).error

    rows = {row.what: row for row in stats.decision_agreement_rows(desk.engine)}
    item, korea = rows["item decisions"], rows["Korea flags"]
    assert (item.kappa_kind, item.items, item.pairs, item.raters) == ("Cohen", 6, 6, 2)
    assert item.kappa == pytest.approx(cohen(list(ITEM_DECISIONS.values())))
    assert item.alpha_nominal == pytest.approx(alpha_nominal([list(v) for v in ITEM_DECISIONS.values()]))
    assert (korea.kappa_kind, korea.items, korea.pairs, korea.raters) == ("Fleiss", 4, 12, 3)
    assert korea.kappa == pytest.approx(fleiss([list(v) for v in KOREA_DECISIONS.values()]))
    assert korea.alpha_nominal == pytest.approx(alpha_nominal([list(v) for v in KOREA_DECISIONS.values()]))
    # the agreeing items applied, the others wait for the lead
    assert {case.item_id for case in adjudication.cases(desk.engine)} == {"q2", "q5", "k1", "k4"}
    assert desk.store.get("k2").item.flags.korea_specific is False and desk.store.get("q3").item.status == "in_review"


def test_annotate_stats_json_gives_the_reviewers_agreement(workspace):
    from annotator.review.sample import load_sample

    from .conftest import run_cli

    ids = load_sample(workspace)[:3]
    reviewer = Reviewer(workspace.store, PdfRenderer(workspace.blobs))
    queues.assign(workspace.store.engine, "item", ["carol", "dave"], 2, item_ids=ids)
    made = list(zip(ids, (("accept", "accept"), ("accept", "needs_fix"), ("needs_fix", "needs_fix")), strict=True))
    for item_id, decisions in made:
        for user, decision in zip((CAROL, DAVE), decisions, strict=True):
            assert not _decide(reviewer, user, "item", item_id, decision, "이유").error
    result = run_cli("annotate", "stats", "--json", "-w", str(workspace.root))
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)["decision_agreement"]
    pairs = [decisions for _, decisions in made]
    assert (row["what"], row["kappa_kind"], row["items"], row["pairs"], row["raters"]) == (
        "item decisions", "Cohen", 3, 3, 2)
    assert row["kappa"] == pytest.approx(cohen(pairs)) and row["kappa"] == pytest.approx(0.4)
    assert row["alpha_nominal"] == pytest.approx(alpha_nominal([list(p) for p in pairs]))


# -- over HTTP ---------------------------------------------------------------------------------------

def test_over_http_reviewers_decide_apart_and_only_the_lead_may_adjudicate(http_server):  # noqa: F811
    from gradio_client.exceptions import AppError

    url, workspace = http_server
    store = workspace.store
    queues.assign(store.engine, "item", ["carol", "bob"], 2, item_ids=["sample-003"])
    carol, bob, alice = (_client(url, name) for name in ("carol", "bob", "alice"))
    first = _save(carol, "item", "sample-003", 1, {}, "accept")
    second = _save(bob, "item", "sample-003", 1, {"answer": 2}, "reject", "정답 오류")
    assert first["status"] == second["status"] == "saved" and "Adjudicate" in second["message"]
    assert store.get("sample-003").rev == 1

    with pytest.raises(AppError, match="may not use the adjudicate queue"):
        carol.predict("item", "sample-003", 1, "accept", "{}", "", api_name="/adjudicate")
    with pytest.raises(AppError, match="may not use the adjudicate queue"):
        bob.predict("item", "sample-003", 1, "reject", json.dumps({"answer": 2}), "", api_name="/adjudicate")
    assert store.get("sample-003").rev == 1 and adjudication.case(store.engine, "item", "sample-003") is not None

    done = alice.predict("item", "sample-003", 1, "reject", json.dumps({"answer": 2}), "정답 오류",
                         api_name="/adjudicate")
    assert done["status"] == "saved" and done["rev"] == 2
    applied = store.history("sample-003")[-1]
    assert (applied.author, applied.snapshot["status"], applied.snapshot["answer"]) == (
        "alice", "rejected", {"format": "choice", "options": [2], "require_all": False})
    assert "carol: accept" in applied.reason and "bob: reject (정답 오류)" in applied.reason
