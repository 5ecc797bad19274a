"""The review page on a 1366×768 laptop screen, in a real Chromium against `benchsmith annotate`:
after Next the item (stem, options, the page with the item's box), its key and Save/Accept are on
screen without scrolling; the key is read-only for annotators; a refused save or revert keeps what
the user chose and says so in the status line. Skips as tests/test_annotator_browser.py does."""

from __future__ import annotations

import re

import pytest

from annotator.review import queues
from curation.core.item import parse_item
from curation.core.workspace import open_workspace
from tests import test_annotator_browser as browser_tests  # skips this module without Chromium or playwright
from tests.annotator_support import sample_team_workspace
from tests.test_annotator_browser import PASSWORDS, annotator_serving, expect, field, login, open_item, stored

browser = browser_tests.browser  # the module's Chromium, a fixture

LAPTOP = (1366, 768)
EXAM = "노트북 시험"


def _items() -> list[dict]:
    return [{"id": f"laptop-{n:03d}", "source": {"exam": EXAM}, "stem": f"노트북 화면 문제 {n}: 옳은 것은?",
             "options": [{"text": f"보기 {k}"} for k in range(1, 5)], "answer": 2} for n in range(1, 4)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("laptop") / "ws"
    workspace = sample_team_workspace(root, PASSWORDS)
    workspace.store.save_items([parse_item(r) for r in _items()], author="test", stage="import")
    # three revisions: the revert test chooses rev 1, not the control's default (the one before the shown)
    workspace.store.update_fields("laptop-003", {"stem": "둘째 문제"}, expect_rev=1, author="test", stage="clean")
    workspace.store.update_fields("laptop-003", {"stem": "셋째 문제"}, expect_rev=2, author="test", stage="clean")
    with annotator_serving(root, root.parent / "server.log") as url:
        yield url, root


def in_viewport(page, selector: str) -> dict:
    """The element's box, asserted to lie wholly inside the window (no scrolling needed)."""
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not shown"
    width, height = LAPTOP
    assert box["x"] >= 0 and box["y"] >= 0, (selector, box)
    assert box["x"] + box["width"] <= width and box["y"] + box["height"] <= height, (selector, box)
    return box


def _next(page) -> None:
    stamp = page.locator("#item-status .bs-rev")
    before = stamp.get_attribute("data-shown")
    page.locator("#item-next").click()
    expect(stamp).not_to_have_attribute("data-shown", before or "-", timeout=30_000)


@pytest.mark.parametrize("name", ["carol", "alice"])
def test_after_next_the_item_its_key_and_save_are_on_a_laptop_screen(server, browser, name):
    url, _ = server
    context, page = login(browser, url, name, viewport=LAPTOP)
    open_item(page, "item", "sample-002")
    _next(page)
    expect(page.locator("#item-status")).to_contain_text("sample-00")  # the next sample item, with its page
    expect(page.locator("#item-status")).not_to_contain_text("sample-002")
    assert page.evaluate("window.scrollY") == 0
    stem = in_viewport(page, "#item-stem textarea")
    for n in range(1, 5):
        in_viewport(page, f"#item-options-{n}-text textarea, #item-options-{n}-text input")
    key = in_viewport(page, "#item-key-badge")
    expect(page.locator("#item-key-badge")).to_contain_text("정답 · Key")
    save, accept = in_viewport(page, "#item-save"), in_viewport(page, "#item-accept")
    assert stem["y"] < key["y"] < save["y"] and abs(save["y"] - accept["y"]) < 2
    # the page with the item's box drawn on it, beside the form
    page.wait_for_function("() => { const i = document.querySelector('#item-page .bs-page img');"
                           " return i && i.complete && i.naturalWidth > 0; }", timeout=30_000)
    crop = in_viewport(page, "#item-page .bs-item-box")
    assert crop["x"] + crop["width"] <= stem["x"]
    # who is signed in and the logout share the navbar's line, above the tabs
    who, tabs = page.locator("#whoami").bounding_box(), page.locator("#tab-item").bounding_box()
    assert who["y"] + who["height"] <= tabs["y"] and who["y"] < 60
    if name == "alice":
        assert page.locator("#logout").bounding_box()["y"] < 60
    context.close()


def test_the_annotator_sees_the_key_read_only_and_a_refused_save_keeps_the_edit_without_a_stale_saved(
        server, browser):
    url, root = server
    context, page = login(browser, url, "carol", viewport=LAPTOP)
    open_item(page, "item", "laptop-001")
    expect(page.locator("#item-key-read-only")).to_be_visible()
    expect(page.locator("#item-key-controls")).to_be_hidden()  # no editable-looking key that fails on save
    expect(page.locator("#item-key-badge")).to_contain_text("②")
    field(page, "item-stem").fill("노트북 화면 문제 1: 고친 문제")
    page.locator("#item-save").click()
    status = page.locator("#item-status")
    expect(status).to_contain_text("Saved as rev 2", timeout=30_000)
    assert stored(root, "laptop-001").item.stem == "노트북 화면 문제 1: 고친 문제"

    # meanwhile the item goes to dave alone: carol's next save is refused
    queues.assign(open_workspace(root).store.engine, "item", ["dave"], 1, item_ids=["laptop-001"])
    field(page, "item-stem").fill("노트북 화면 문제 1: 다시 고친 문제")
    page.locator("#item-save").click()
    expect(status).to_contain_text("Not saved", timeout=30_000)
    expect(status).to_contain_text("저장하지 않았습니다")
    expect(status).not_to_contain_text("Saved as rev")
    expect(field(page, "item-stem")).to_have_value("노트북 화면 문제 1: 다시 고친 문제")
    assert stored(root, "laptop-001").rev == 2
    assert page.dialogs == []  # said in the page, not in a pop-up
    context.close()


def test_a_refused_revert_keeps_the_chosen_revision_and_its_preview(server, browser):
    url, root = server
    context, page = login(browser, url, "alice", viewport=LAPTOP)
    open_item(page, "item", "laptop-003")
    page.locator("#item-history-box .label-wrap").click()
    chooser = field(page, "item-revert-rev")
    expect(chooser).to_have_value(re.compile(r"^rev 2 "), timeout=30_000)  # the default: the one before
    chooser.click()
    page.locator("ul[role=listbox] li", has_text="rev 1 ").first.click()
    rows = page.locator("#item-revert-preview .bs-revert-row")
    expect(rows).to_have_count(1, timeout=30_000)
    expect(rows.first).to_contain_text("셋째 문제")
    expect(rows.first).to_contain_text("노트북 화면 문제 3")
    page.locator("#item-revert").click()  # no reason: refused
    expect(page.locator("#item-status")).to_contain_text("Give a reason for the revert", timeout=30_000)
    expect(chooser).to_have_value(re.compile(r"^rev 1 "))
    expect(rows).to_have_count(1)
    expect(page.locator("#item-revert")).to_be_visible()
    assert stored(root, "laptop-003").rev == 3

    field(page, "item-revert-reason").fill("처음 문제로")
    page.locator("#item-revert").click()
    expect(page.locator("#item-status")).to_contain_text("Reverted to rev 1", timeout=30_000)
    item = stored(root, "laptop-003")
    assert (item.rev, item.item.stem) == (4, "노트북 화면 문제 3: 옳은 것은?")
    context.close()
