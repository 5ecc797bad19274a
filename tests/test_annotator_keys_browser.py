"""The key editor in a real Chromium against `benchsmith annotate` (the harness of
test_annotator_browser.py): a numeric key's value and a set key's letters edited, saved and shown
highlighted; a format changed; an annotator sees the key read-only."""

from __future__ import annotations

import re

import pytest

from annotator.review import auth
from annotator.review.sample import load_sample
from curation.core.item import parse_item
from curation.core.workspace import init_workspace
from scoring.keys import NumericKey, SetKey, TextKey

from .test_annotator_browser import (  # noqa: F401  (browser: the Chromium fixture)
    PASSWORDS,
    annotator_serving,
    browser,
    choose,
    expect,
    field,
    login,
    open_item,
    stored,
    type_into,
)

EXAM = "기상기사 (예시)"
ITEMS = [
    {"id": "numeric-001", "source": {"exam": EXAM, "number": 27},
     "stem": "지상 기온이 20 ℃이고 기온감률이 6.5 ℃/km일 때 고도 2 km의 기온(℃)을 구하시오.",
     "answer": {"format": "numeric", "value": "7", "unit": "℃"}, "points": 4},
    {"id": "numeric-002", "source": {"exam": EXAM, "number": 28}, "stem": "연교차(℃)를 구하시오.",
     "answer": {"format": "numeric", "value": "28.8"}, "points": 3},
    {"id": "set-001", "source": {"exam": EXAM, "number": 29},
     "stem": "옳은 것을 모두 고르시오.\n〈보기〉\nㄱ. 가\nㄴ. 나\nㄷ. 다", "answer": {"format": "set", "members": ["ㄱ", "ㄷ"]}},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("keys") / "ws"
    workspace = init_workspace(root)
    load_sample(workspace)
    workspace.store.save_items([parse_item(record) for record in ITEMS], author="test", stage="import")
    for name, role in (("alice", "admin"), ("bob", "expert"), ("carol", "annotator")):
        auth.add_user(workspace.store.engine, name, role, PASSWORDS[name])
    with annotator_serving(root, root.parent / "server.log") as url:
        yield url, root


def _save(page) -> None:
    page.locator("#item-save").click()
    expect(page.locator("#item-status")).to_contain_text("Saved as rev", timeout=30_000)


def test_a_numeric_key_edited_saved_and_shown_highlighted(server, browser):  # noqa: F811
    url, root = server
    context, page = login(browser, url, "bob")
    open_item(page, "item", "numeric-001")
    badge = page.locator("#item-key-badge")
    expect(badge.locator(".bs-key-badge")).to_be_visible(timeout=30_000)
    expect(badge).to_contain_text("7 ℃")
    expect(badge).to_contain_text("points 4")
    expect(field(page, "item-key-numeric-value")).to_have_value("7")
    type_into(page, "item-key-numeric-value", "7.5")
    type_into(page, "item-key-numeric-tolerance", "0.1")
    expect(badge).to_contain_text("7.5 ℃", timeout=30_000)  # the key as it reads while typing
    expect(page.locator("#item-draft")).to_contain_text("unsaved", timeout=30_000)
    _save(page)
    expect(badge.locator(".bs-key-numeric")).to_contain_text("7.5 ℃ (± 0.1)", timeout=30_000)
    assert stored(root, "numeric-001").item.answer == NumericKey(value="7.5", tolerance=0.1, unit="℃")

    type_into(page, "item-key-numeric-value", "일곱")  # what is wrong is said, and nothing is saved
    expect(badge.locator(".bs-error")).to_contain_text("not a number", timeout=30_000)
    page.locator("#item-save").click()
    expect(page.locator("#item-status .bs-error")).to_contain_text("저장하지 않았습니다 · Not saved", timeout=30_000)
    assert stored(root, "numeric-001").rev == 2
    context.close()


def test_a_set_key_edited_and_a_format_changed(server, browser):  # noqa: F811
    url, root = server
    context, page = login(browser, url, "alice")
    open_item(page, "item", "set-001")
    expect(page.locator("#item-key-badge .bs-key-set")).to_contain_text("ㄱ, ㄷ", timeout=30_000)
    type_into(page, "item-key-set-members", "ㄴㄷ")
    field(page, "item-points").fill("3")
    _save(page)
    expect(page.locator("#item-key-badge .bs-key-set")).to_contain_text("ㄴ, ㄷ", timeout=30_000)
    expect(page.locator("#item-key-badge")).to_contain_text("points 3")
    item = stored(root, "set-001").item
    assert item.answer == SetKey(members=["ㄴ", "ㄷ"]) and item.points == 3

    open_item(page, "item", "numeric-002")
    choose(page, "item-key-format", "short text")
    expect(field(page, "item-key-text-accepted")).to_be_visible(timeout=30_000)
    expect(field(page, "item-key-text-accepted")).to_have_value("28.8")  # started from the key's text
    type_into(page, "item-key-text-accepted", "28.8\n28.8도")
    page.locator("#item-key-text-strict input").check()
    _save(page)
    expect(page.locator("#item-key-badge .bs-key-text")).to_contain_text("28.8 | 28.8도", timeout=30_000)
    assert stored(root, "numeric-002").item.answer == TextKey(accepted=["28.8", "28.8도"], strict=True)
    context.close()


def test_an_annotator_sees_the_key_read_only(server, browser):  # noqa: F811
    url, root = server
    context, page = login(browser, url, "carol")
    open_item(page, "item", "numeric-002")
    expect(page.locator("#item-key-badge .bs-key-badge")).to_be_visible(timeout=30_000)
    # the key as its badge and a note, not as disabled controls that look editable
    for element in ("item-key-format", "item-points"):
        expect(field(page, element)).to_be_hidden()
    expect(page.locator("#item-key-read-only")).to_contain_text(re.compile("experts and admins edit the key"))
    expect(field(page, "item-stem")).to_be_editable()  # the rest of the item is hers to fix
    context.close()
