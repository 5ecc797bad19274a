"""The review app's key editor: a key in its own format's controls and back (annotator/review/key_form.py),
saved through the compare-and-swap save as a typed key revision, and refused on the server for a
role the queue spec does not let edit the key, whatever the page sends."""

from __future__ import annotations

import json

import pytest

from annotator.review import drafts, key_form
from annotator.review.actions import Session, to_change
from annotator.review.auth import User
from annotator.review.queue_specs import NotAllowed
from curation.core.item import parse_item
from scoring.keys import NumericKey, PartsKey, SetKey, TextKey

from .annotator_support import sample_desk

ALICE, BOB, CAROL = User("alice", "admin"), User("bob", "expert"), User("carol", "annotator")
NUMERIC = {"id": "numeric-001", "source": {"exam": "기상기사 (예시)", "number": 27},
           "stem": "지상 기온이 20 ℃이고 기온감률이 6.5 ℃/km일 때 고도 2 km의 기온(℃)을 구하시오.",
           "answer": {"format": "numeric", "value": "7", "unit": "℃"}, "points": 4}
SET = {"id": "set-001", "source": {"exam": "기상기사 (예시)", "number": 28},
       "stem": "옳은 것을 모두 고르시오.\n〈보기〉\nㄱ. 가\nㄴ. 나\nㄷ. 다", "answer": {"format": "set", "members": ["ㄱ", "ㄷ"]}}

KEYS = [
    {"format": "choice", "options": [2, 4], "require_all": True},
    {"format": "numeric", "value": "28.8", "tolerance": 0.05, "relative_tolerance": 0.01, "unit": "℃"},
    {"format": "numeric", "value": "\\frac{4}{\\sqrt{7}}", "tolerance": None, "relative_tolerance": None, "unit": None},
    {"format": "text", "accepted": ["정체전선", "장마전선"], "normalise": "exact", "strict": True},
    {"format": "set", "members": ["ㄱ", "ㄷ"]},
    {"format": "expression", "latex": "\\frac{x^2}{2} + C"},
    {"format": "judged", "reference": "기압경도력과 전향력이 평형을 이룬다.", "rubric": "두 힘을 모두 말하면 정답"},
    {"format": "parts", "labels": ["(1)", "(2)"],
     "parts": [{"format": "numeric", "value": "3.2", "tolerance": 0.1, "relative_tolerance": None, "unit": "m"},
               {"format": "text", "accepted": ["한랭전선"], "normalise": "default", "strict": False}]},
]


@pytest.fixture
def desk(workspace):
    desk = sample_desk(workspace)
    workspace.store.save_items([parse_item(NUMERIC), parse_item(SET)], author="test", stage="import")
    return desk


def _form(key: dict, **changes) -> dict:
    """The form the page sends for a key, with some controls changed as a reviewer would type them."""
    controls = {**key_form.controls_of(key), **changes}
    return key_form.make_form(controls.pop("format"), controls)


@pytest.mark.parametrize("key", KEYS, ids=[f"{k['format']}-{n}" for n, k in enumerate(KEYS)])
def test_every_format_reads_back_from_its_controls_unchanged(key):
    assert key_form.key_of(_form(key), key) == key


def test_a_changed_part_line_is_read_by_its_format_and_the_unchanged_ones_stay_whole():
    key = KEYS[-1]
    lines = key_form.controls_of(key)["parts_lines"].splitlines()
    assert lines == ["(1): 3.2 m [numeric]", "(2): 한랭전선 [text]"]
    changed = key_form.key_of(_form(key, parts_lines=f"{lines[0]}\n(2): ㄱ, ㄴ [set]\n(3): 12"), key)
    assert changed["parts"][0] == key["parts"][0]  # its tolerance kept
    assert changed["parts"][1] == {"format": "set", "members": ["ㄱ", "ㄴ"]}
    assert changed["parts"][2]["format"] == "numeric" and changed["labels"] == ["(1)", "(2)", "(3)"]
    assert PartsKey.model_validate(changed)


@pytest.mark.parametrize(("key", "changes", "korean", "english"), [
    (KEYS[1], {"numeric_value": "스물"}, "숫자가 아닙니다", "not a number"),
    (KEYS[1], {"numeric_tolerance": "-1"}, "0 이상의 숫자", "tolerance must be a number ≥ 0"),
    (KEYS[3], {"text_accepted": "  \n "}, "한 줄에 하나씩", "one per line"),
    (KEYS[4], {"set_members": "가나다라마"}, "ㄱ, ㄷ 처럼", "give the members"),
    (KEYS[5], {"expression_latex": "\\frac{x^2}{2"}, "수식을 읽을 수 없습니다", "does not render"),
    (KEYS[7], {"parts_lines": "(1): 3.2 m"}, "두 줄 이상", "two or more lines"),
])
def test_what_makes_no_key_is_said_in_korean_and_english(key, changes, korean, english):
    with pytest.raises(key_form.KeyFormError) as raised:
        key_form.key_of(_form(key, **changes), key)
    assert korean in str(raised.value) and english in str(raised.value) and " · " in str(raised.value)


def test_a_number_typed_with_its_unit_and_a_percent_tolerance_are_read():
    form = _form(KEYS[2], numeric_value="9.8 ℃/km", numeric_relative_tolerance="2%")
    assert key_form.key_of(form) == {"format": "numeric", "value": "9.8", "tolerance": None, "relative_tolerance": 0.02,
                                     "unit": "°C/km"}  # the unit as the numeric format reads it
    assert to_change("points", "4점") == 4 and to_change("points", "") is None


def test_an_expert_changes_a_numeric_keys_tolerance_and_it_is_stored_as_a_typed_numeric_key_revision(desk):
    store = desk.workspace.store
    view = desk.reviewer.open("bob", "item", "numeric-001")
    assert desk.reviewer.sync(BOB, view.session, {"answer": _form(NUMERIC["answer"]), "points": "4"}).edits == {}
    desk.reviewer.sync(BOB, view.session, {"answer": _form(NUMERIC["answer"], numeric_tolerance="0.5"), "points": "4"})
    saved = desk.reviewer.save(BOB, view.session)
    assert not saved.error and saved.session.rev == 2
    stored = store.get("numeric-001").item
    assert stored.answer == NumericKey(value="7", tolerance=0.5, unit="℃") and isinstance(stored.answer, NumericKey)
    last = store.history("numeric-001")[-1]
    assert (last.author, last.stage, last.changed_fields) == ("bob", "annotate", ["answer"])
    # 배점 and a change of format, by an admin: a text key, saved the same way
    view = desk.reviewer.open("alice", "item", "numeric-001")
    text = key_form.make_form("text", {"text_accepted": "7\n칠", "text_strict": True})
    desk.reviewer.sync(ALICE, view.session, {"answer": text, "points": "3"})
    assert not desk.reviewer.save(ALICE, view.session, "accept").error
    stored = store.get("numeric-001").item
    assert stored.answer == TextKey(accepted=["7", "칠"], strict=True) and stored.points == 3
    assert stored.status == "accepted"


def test_a_set_key_is_edited_in_its_letters(desk):
    view = desk.reviewer.open("bob", "item", "set-001")
    desk.reviewer.sync(BOB, view.session, {"answer": _form(SET["answer"], set_members="ㄴㄷ")})
    assert not desk.reviewer.save(BOB, view.session).error
    assert desk.workspace.store.get("set-001").item.answer == SetKey(members=["ㄴ", "ㄷ"])


def test_an_invalid_key_is_not_saved_and_stays_in_the_draft_as_typed(desk):
    view = desk.reviewer.open("bob", "item", "numeric-001")
    typed = _form(NUMERIC["answer"], numeric_value="일곱")
    desk.reviewer.sync(BOB, view.session, {"answer": typed})
    refused = desk.reviewer.save(BOB, view.session)
    assert "저장하지 않았습니다 · Not saved" in refused.error and "not a number" in refused.error
    assert desk.workspace.store.get("numeric-001").rev == 1
    assert drafts.load_draft(desk.workspace.store.engine, "bob", "item", "numeric-001").edits == {"answer": typed}
    assert key_form.controls_of(refused.shown["answer"])["numeric_value"] == "일곱"  # shown as typed


def test_an_annotators_key_or_points_change_is_refused_on_the_server_and_writes_nothing(desk):
    store, engine = desk.workspace.store, desk.workspace.store.engine
    view = desk.reviewer.open("carol", "item", "numeric-001")
    # the page sends every field: the key and 배점 as they are are no edit, and the stem is hers to fix
    desk.reviewer.sync(CAROL, view.session, {"answer": _form(NUMERIC["answer"]), "points": "4", "stem": "고친 문제"})
    assert view.session.edits == {"stem": "고친 문제"}
    for change in ({"answer": _form(NUMERIC["answer"], numeric_value="8")}, {"points": "5"}):
        with pytest.raises(NotAllowed, match="not editable by the annotator role"):
            desk.reviewer.sync(CAROL, view.session, change)
    assert drafts.load_draft(engine, "carol", "item", "numeric-001").edits == {"stem": "고친 문제"}
    forged = Session("item", "numeric-001", 1, {"answer": _form(NUMERIC["answer"], numeric_value="8"), "stem": "x"})
    with pytest.raises(NotAllowed, match="'answer' is not editable by the annotator role"):
        desk.reviewer.save(CAROL, forged, "accept")
    assert store.get("numeric-001").rev == 1 and store.get("numeric-001").item.answer == NumericKey(value="7", unit="℃")


def test_over_http_an_annotators_key_save_is_refused_and_an_experts_is_stored(workspace):
    gradio_client = pytest.importorskip("gradio_client", reason="gradio_client is not installed (extra: test)")
    httpx = pytest.importorskip("httpx")
    from annotator.review import auth

    from .annotator_support import running_server

    sample_desk(workspace)
    workspace.store.save_items([parse_item(NUMERIC)], author="test", stage="import")
    for name, role in (("bob", "expert"), ("carol", "annotator")):
        auth.add_user(workspace.store.engine, name, role, f"password-{name}")

    def signed_in(url: str, name: str):
        login = httpx.post(url + "login", data={"username": name, "password": f"password-{name}"})
        assert login.status_code == 200, login.text
        cookie = "; ".join(f"{k}={v}" for k, v in login.cookies.items())
        return gradio_client.Client(url, headers={"cookie": cookie}, verbose=False)

    changed = json.dumps({"answer": _form(NUMERIC["answer"], numeric_tolerance="0.5")})
    with running_server(workspace) as url:
        carol = signed_in(url, "carol")
        with pytest.raises(Exception, match="Not allowed.*'answer' is not editable by the annotator role"):
            carol.predict("item", "numeric-001", 1, changed, "", "", api_name="/save_item")
        with pytest.raises(Exception, match="'points' is not editable by the annotator role"):
            carol.predict("item", "numeric-001", 1, json.dumps({"points": 5}), "", "", api_name="/save_item")
        assert workspace.store.get("numeric-001").rev == 1 and len(workspace.store.history("numeric-001")) == 1
        saved = signed_in(url, "bob").predict("item", "numeric-001", 1, changed, "", "", api_name="/save_item")
        assert saved["status"] == "saved" and saved["rev"] == 2
    assert workspace.store.get("numeric-001").item.answer == NumericKey(value="7", tolerance=0.5, unit="℃")


def test_a_key_edit_made_on_an_older_revision_is_a_conflict_that_shows_the_key(desk):
    from annotator.screens.views import conflict_html

    alice = desk.reviewer.open("alice", "item", "numeric-001").session
    bob = desk.reviewer.open("bob", "item", "numeric-001").session
    desk.reviewer.sync(ALICE, alice, {"points": "5"})
    assert desk.reviewer.save(ALICE, alice).session.rev == 2
    desk.reviewer.sync(BOB, bob, {"answer": _form(NUMERIC["answer"], numeric_tolerance="0.5")})
    refused = desk.reviewer.save(BOB, bob)
    assert refused.conflict is not None and any("points" in line for line in refused.conflict.since)
    shown = conflict_html(refused.conflict)
    assert "&quot;tolerance&quot;: 0.5" in shown and "key_form" not in shown  # the key the edit makes
    assert desk.workspace.store.get("numeric-001").item.answer == NumericKey(value="7", unit="℃")
