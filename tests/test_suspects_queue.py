"""The Suspects queue on a real SQLite workspace: membership from the newest suspects result
(highest score first; stale, decided, closed and missing suspects counted, not shown), a kept
item suppressed until its content or the answers change, the four decisions as revisions, and
the server-side checks, also through the app's handlers called as a script would call them."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from annotator.review import auth, queues
from annotator.review.suspects import STAGE, SuspectDesk, SuspectError, decisions_of
from annotator.review.tables import ensure_tables
from curation.core.errors import ConflictError
from curation.core.item import parse_item
from evaluation.filter_records import ITEM_ANALYSIS_FOLDER, SUSPECTS_FILE, Suspect, SuspectsResult
from scoring.keys import ChoiceKey
from tests.conftest import run_cli

FINGERPRINT = "answers-1"


def _items(workspace, n: int = 5) -> None:
    records = [{"id": f"s{k}", "source": {"exam": "시험"}, "stem": f"문제 {k}",
                "options": [{"text": f"보기 {o}"} for o in range(1, 5)], "answer": 1} for k in range(1, n + 1)]
    workspace.store.save_items([parse_item(r) for r in records], author="test", stage="import")
    ensure_tables(workspace.store.engine)


def _write(workspace, scores: dict[str, float], fingerprint: str | None = FINGERPRINT,
           hashes: dict[str, str] | None = None) -> None:
    stored = workspace.store.get_many(list(scores))
    rows = [Suspect(item_id=i, content_hash=(hashes or {}).get(i, stored[i].content_hash if i in stored else "gone"),
                    score=s, evidence=-float(np.log1p(-s)), reasons=[f"reason for {i}"], key=1, consensus_option=2,
                    key_wrong_posterior=s, option_counts={"2": 5, "1": 1}, option_counts_strong={"2": 2},
                    conflict_partners=["s5"] if i == "s1" else [])
            for i, s in scores.items()]
    result = SuspectsResult(suspects=rows, items=10, models=6, notes=["m-secret without a determined answer"],
                            matrix_fingerprint=fingerprint, created_at="2025-01-01T00:00:00Z")
    folder = workspace.root / ITEM_ANALYSIS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SUSPECTS_FILE).write_text(result.model_dump_json(), encoding="utf-8")


def _fresh(workspace) -> SuspectDesk:
    """A new desk (a restarted server): nothing cached from the last read."""
    return SuspectDesk(workspace.store, workspace.root)


def test_no_result_says_how_to_make_one(workspace):
    _items(workspace)
    found = _fresh(workspace).membership()
    assert found.open == [] and "benchsmith analyze suspects" in found.summary()


def test_membership_is_ordered_by_score_and_stale_suspects_are_counted_not_shown(workspace):
    _items(workspace)
    stored = workspace.store.get("s4")
    workspace.store.update_fields("s4", {"status": "rejected"}, expect_rev=stored.rev, author="t", stage="t")
    _write(workspace, {"s1": 0.4, "s2": 0.9, "s3": 0.6, "s4": 0.8, "gone": 0.7}, hashes={"s3": "other-content"})
    found = _fresh(workspace).membership()
    assert found.ids == ["s2", "s1"]
    assert (found.stale, found.closed, found.missing, found.decided) == (1, 1, 1, 0)
    assert "1 stale" in found.summary() and "2 open" in found.summary()


def test_keep_is_not_suggested_again_until_the_content_or_the_answers_change(workspace):
    _items(workspace)
    _write(workspace, {"s1": 0.9, "s2": 0.5})
    desk = _fresh(workspace)
    rev = workspace.store.get("s1").rev
    outcome = desk.decide("bob", "s1", rev, FINGERPRINT, "keep", "")
    assert outcome.rev == rev and workspace.store.get("s1").rev == rev  # no item change
    kept = decisions_of(workspace.store.engine, "s1")[-1]
    assert kept["decision"] == "keep" and kept["fingerprint"] == FINGERPRINT
    assert kept["content_hash"] == workspace.store.get("s1").content_hash
    assert [r["decision"] for r in queues.reviews_of(workspace.store.engine, "s1")] == ["keep"]
    assert desk.membership().ids == ["s2"] and desk.membership().decided == 1
    assert desk.navigate("erin", None, "unreviewed") == "s2"

    _write(workspace, {"s1": 0.9, "s2": 0.5}, fingerprint="answers-2")  # a new run: other answers
    assert _fresh(workspace).membership().ids == ["s1", "s2"]

    _write(workspace, {"s1": 0.9, "s2": 0.5})  # the answers it was kept on again…
    assert _fresh(workspace).membership().ids == ["s2"]
    workspace.store.update_fields("s1", {"stem": "고친 문제 1"}, expect_rev=rev, author="t", stage="t")
    _write(workspace, {"s1": 0.9, "s2": 0.5})  # …but the item's content has changed since
    assert _fresh(workspace).membership().ids == ["s1", "s2"]


def test_fix_key_ambiguous_and_reject_are_revisions_with_the_reason(workspace):
    _items(workspace)
    _write(workspace, {"s1": 0.9, "s2": 0.8, "s3": 0.7})
    desk = _fresh(workspace)
    before = workspace.store.get("s1")
    outcome = desk.decide("bob", "s1", before.rev, FINGERPRINT, "fix_key", "해설서 정답은 2번", "2")
    after = workspace.store.get("s1")
    assert after.item.answer == ChoiceKey(options=[2]) and after.rev == outcome.rev == before.rev + 1
    last = workspace.store.history("s1")[-1]
    assert (last.author, last.stage) == ("bob", STAGE) and "해설서 정답은 2번" in (last.reason or "")
    assert after.content_hash != before.content_hash
    found = desk.membership()
    assert "s1" not in found.ids and found.stale == 1  # its evidence was found on the old key

    desk.decide("bob", "s2", workspace.store.get("s2").rev, FINGERPRINT, "ambiguous", "보기 2와 3 모두 옳음")
    s2 = workspace.store.get("s2").item
    assert s2.status == "in_review" and any("보기 2와 3 모두 옳음" in r for r in s2.flags.review_reasons)
    desk.decide("bob", "s3", workspace.store.get("s3").rev, FINGERPRINT, "reject", "그림이 없음")
    assert workspace.store.get("s3").item.status == "rejected"
    assert desk.membership().ids == [] and desk.membership().decided == 1 and desk.membership().closed == 1


@pytest.mark.parametrize(("item_id", "decision", "reason", "key", "message"), [
    ("s1", "approve", "x", None, "decision 'approve'"),
    ("s1", "fix_key", "", "2", "Give a reason"),
    ("s1", "fix_key", "x", "5", "choose an option number 1..4"),
    ("s1", "fix_key", "x", "0", "choose an option number 1..4"),
    ("s1", "fix_key", "x", "2; drop", "choose an option number 1..4"),
    ("s1", "fix_key", "x", None, "choose an option number 1..4"),
    ("s1", "fix_key", "x", "1", "is the key already"),
    ("s1", "reject", "x" * 2001, None, "at most 2000"),
    ("s4", "reject", "x", None, "not among the suspects"),
])
def test_bad_decisions_are_refused_and_write_nothing(workspace, item_id, decision, reason, key, message):
    _items(workspace)
    _write(workspace, {"s1": 0.9})
    rev = workspace.store.get(item_id).rev
    with pytest.raises(SuspectError, match=message):
        _fresh(workspace).decide("bob", item_id, rev, FINGERPRINT, decision, reason, key)
    assert workspace.store.get(item_id).rev == rev and decisions_of(workspace.store.engine, item_id) == []


def test_a_stale_revision_or_analysis_is_refused(workspace):
    _items(workspace)
    _write(workspace, {"s1": 0.9})
    desk = _fresh(workspace)
    seen = workspace.store.get("s1").rev
    workspace.store.update_fields("s1", {"status": "in_review"}, expect_rev=seen, author="lee", stage="annotate")
    for decision, key in (("fix_key", "2"), ("keep", None)):
        with pytest.raises(ConflictError) as caught:
            desk.decide("bob", "s1", seen, FINGERPRINT, decision, "이유", key)
        assert any("by lee" in line for line in caught.value.since)
    with pytest.raises(SuspectError, match="analysis changed"):
        desk.decide("bob", "s1", seen + 1, "answers-0", "keep", "")
    assert workspace.store.get("s1").item.answer == ChoiceKey(options=[1]) and decisions_of(workspace.store.engine, "s1") == []


def test_next_undecided_follows_assignments_and_the_cli_lists_and_assigns(workspace):
    _items(workspace)
    for name, role in (("bob", "expert"), ("erin", "expert")):
        auth.add_user(workspace.store.engine, name, role, f"password-{name}")
    _write(workspace, {"s1": 0.9, "s2": 0.8, "s3": 0.7})
    done = run_cli("annotate", "assign", "--queue", "suspects", "--users", "bob,erin", "-w", str(workspace.root))
    assert done.returncode == 0, done.stderr
    assert "3 items, 3 new assignments" in done.stdout
    desk = _fresh(workspace)
    mine = desk.assigned("bob")
    assert mine is not None and desk.navigate("bob", None, "unreviewed") == next(i for i in ("s1", "s2", "s3") if i in mine)
    assert all(desk.navigate("bob", i, "unreviewed") in mine for i in ("s1", "s2", "s3"))
    desk.decide("bob", "s1", workspace.store.get("s1").rev, FINGERPRINT, "keep", "")
    done = run_cli("annotate", "suspects", "--json", "-w", str(workspace.root))
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [row["item_id"] for row in listed["open"]] == ["s2", "s3"] and listed["decided"] == 1
    assert listed["fingerprint"] == FINGERPRINT


def test_the_app_handlers_check_roles_and_values_on_the_server(workspace):
    gr = pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")
    from annotator.review.actions import Reviewer
    from annotator.review.render import PdfRenderer
    from annotator.review.score_desk import ScoreDesk
    from annotator.screens.app import AppContext, item_markdown
    from annotator.screens.suspects_tab import SuspectSession, SuspectsTab

    _items(workspace)
    for name, role in (("bob", "expert"), ("carol", "annotator")):
        auth.add_user(workspace.store.engine, name, role, f"password-{name}")
    _write(workspace, {"s1": 0.9, "s2": 0.5})
    renderer = PdfRenderer(workspace.blobs)
    ctx = AppContext(workspace, Reviewer(workspace.store, renderer), ScoreDesk(workspace.store), renderer, False)
    with gr.Blocks():
        tab = SuspectsTab(ctx, item_markdown)
    as_bob, as_carol = SimpleNamespace(username="bob"), SimpleNamespace(username="carol")
    session = SuspectSession("s1", workspace.store.get("s1").rev, FINGERPRINT)
    for handler in (tab.decision_handler("fix_key"), tab.decision_handler("keep")):
        with pytest.raises(gr.Error, match="may not use the suspects queue"):
            handler(session, "2", "이유", as_carol)
    with pytest.raises(gr.Error, match="may not use the suspects queue"):
        tab.navigate_handler("first")(SuspectSession(), "", as_carol)
    assert workspace.store.get("s1").item.answer == ChoiceKey(options=[1]) and decisions_of(workspace.store.engine, "s1") == []

    outputs = tab.decision_handler("fix_key")(session, "9", "이유", as_bob)  # a key the item does not have
    status = outputs[tab.outputs.index(tab.status)]
    assert "Not saved" in status and "1..4" in status and workspace.store.get("s1").item.answer == ChoiceKey(options=[1])
    outputs = tab.decision_handler("drop_table")(session, "2", "이유", as_bob)
    assert "Not saved" in outputs[tab.outputs.index(tab.status)]

    opened = tab.navigate_handler("first")(SuspectSession(), "", as_bob)
    evidence = opened[tab.outputs.index(tab.evidence)]
    assert 'class="bs-count-all">5<' in evidence and "m-secret" not in "".join(str(o) for o in opened)
    assert "s5" in opened[tab.outputs.index(tab.partners)]  # the dedup conflict partner, with its key
    state = opened[tab.outputs.index(tab.state)]
    saved = tab.decision_handler("fix_key")(state, "2", "해설서 확인", as_bob)
    assert "Key fixed to option 2" in saved[tab.outputs.index(tab.status)]
    assert workspace.store.get("s1").item.answer == ChoiceKey(options=[2])
    again = tab.decision_handler("fix_key")(state, "3", "다시", as_bob)  # the revision it saw is gone
    assert "Someone saved this item" in again[tab.outputs.index(tab.status)]
    assert workspace.store.get("s1").item.answer == ChoiceKey(options=[2])
