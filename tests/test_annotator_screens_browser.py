"""The annotator's screens in a real Chromium against the real server: the page view (zoom, and a
box drawn by dragging saved in PDF points), one field with its preview, the key highlighted,
progress redrawn after a bulk action, and bulk acting on exactly the queue shown. Skips when
Chromium, playwright or gradio are missing."""

from __future__ import annotations

import re

import pytest

from curation.core.item import parse_item
from curation.core.workspace import open_workspace
from tests import test_annotator_browser as browser_tests  # skips this module without Chromium or playwright
from tests.annotator_support import TEAM, sample_team_workspace
from tests.test_annotator_browser import (
    PASSWORDS,
    annotator_serving,
    choose,
    expect,
    field,
    login,
    open_item,
    rendered_after,
    stored,
)

browser = browser_tests.browser  # the module's Chromium, a fixture

SCREEN_EXAM, PROGRESS_EXAM, OTHER_EXAM = "화면 시험", "진행 시험", "다른 시험"
WORD = "찾는낱말"  # in some items of SCREEN_EXAM and in one of another exam


def _items() -> list[dict]:
    def item(item_id: str, exam: str, stem: str) -> dict:
        return {"id": item_id, "source": {"exam": exam}, "stem": stem,
                "options": [{"text": "보기 1"}, {"text": "보기 2"}, {"text": "보기 3"}], "answer": 3}

    screen = [item(f"screen-{n:03d}", SCREEN_EXAM, f"문제 {n} {WORD if n % 2 else ''}") for n in range(1, 7)]
    progress = [item(f"progress-{n:03d}", PROGRESS_EXAM, f"진행 문제 {n}") for n in range(1, 5)]
    decoy = item("decoy-001", OTHER_EXAM, f"다른 시험의 {WORD}")
    math = item("math-001", OTHER_EXAM, "식 $x^2 + 1$ 의 값은?")
    return [*screen, *progress, decoy, math]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("screens") / "ws"
    workspace = sample_team_workspace(root, PASSWORDS, team=TEAM[:1])
    workspace.store.save_items([parse_item(r) for r in _items()], author="test", stage="import")
    log = root.parent / "server.log"
    with annotator_serving(root, log) as url:
        yield url, root


def pdf_page_size(root, item_id: str) -> tuple[float, float]:
    """The page's size in PDF points, read with PyMuPDF from the stored PDF."""
    import pymupdf

    source = stored(root, item_id).item.source
    with pymupdf.open(open_workspace(root).blobs.path(f"{source.pdf_sha256}.pdf")) as document:
        rect = document[source.page - 1].rect
    return rect.width, rect.height


def page_box(page) -> dict:
    stage = page.locator("#item-page .bs-page")
    expect(stage).to_be_visible(timeout=30_000)
    page.locator("#item-page .bs-page-tools").evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_function("() => { const i = document.querySelector('#item-page .bs-page img');"
                           " return i && i.complete && i.naturalWidth > 0; }", timeout=30_000)
    return stage.bounding_box()


def drag(page, start: tuple[float, float], end: tuple[float, float]) -> None:
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, steps=4)
    page.mouse.move(*end, steps=4)
    page.mouse.up()


def expected_points(rect: dict, size: tuple[float, float], start, end) -> list[float]:
    """Pixels on screen → PDF points: the page is shown at rect.width / page width px per point."""
    scale_x, scale_y = rect["width"] / size[0], rect["height"] / size[1]
    xs = sorted(((start[0] - rect["x"]) / scale_x, (end[0] - rect["x"]) / scale_x))
    ys = sorted(((start[1] - rect["y"]) / scale_y, (end[1] - rect["y"]) / scale_y))
    return [xs[0], ys[0], xs[1], ys[1]]


def assert_within_a_point(actual, expected) -> None:
    assert actual is not None and len(actual) == 4, actual
    assert all(abs(a - e) <= 1.0 for a, e in zip(actual, expected, strict=True)), (actual, expected)


def save_drawn_box(page, root, item_id: str) -> list[float]:
    before = page.locator("#item-status .bs-rev").get_attribute("data-shown")
    page.locator("#item-recrop").click()
    rendered_after(page, "item", before)
    expect(page.locator("#item-status")).to_contain_text("Box moved")
    rev = stored(root, item_id).rev
    page.locator("#item-save").click()
    expect(page.locator("#item-status")).to_contain_text(f"Saved as rev {rev + 1}", timeout=30_000)
    return list(stored(root, item_id).item.source.bbox)


def test_a_box_drawn_by_dragging_is_saved_in_pdf_points_before_and_after_zoom(server, browser):
    url, root = server
    context, page = login(browser, url, "alice")
    open_item(page, "item", "sample-003")
    size = pdf_page_size(root, "sample-003")
    rect = page_box(page)
    view = page.locator("#item-page .bs-page-view").bounding_box()
    assert abs(rect["width"] - view["width"]) <= 4  # the page fills the column by default
    assert abs(rect["height"] / rect["width"] - size[1] / size[0]) < 0.005  # and keeps the page's shape

    start, end = (rect["x"] + 0.62 * rect["width"], rect["y"] + 0.41 * view["height"]), \
        (rect["x"] + 0.18 * rect["width"], rect["y"] + 0.12 * view["height"])  # drawn right to left, upwards
    drag(page, start, end)
    expected = expected_points(rect, size, start, end)
    assert_within_a_point([float(field(page, f"item-crop-{n}").input_value()) for n in ("x0", "y0", "x1", "y1")],
                          expected)
    assert_within_a_point(save_drawn_box(page, root, "sample-003"), expected)

    page.locator("#item-page .bs-zoom-in").click()
    page.locator("#item-page .bs-zoom-in").click()
    zoomed = page_box(page)
    assert zoomed["width"] == pytest.approx(rect["width"] * 1.25 ** 2, rel=0.01)
    view = page.locator("#item-page .bs-page-view").bounding_box()
    page.mouse.move(view["x"] + view["width"] / 2, view["y"] + view["height"] / 2)
    page.mouse.wheel(0, -120)  # the wheel zooms in once more
    page.wait_for_function("w => document.querySelector('#item-page .bs-page').getBoundingClientRect().width > w",
                           arg=zoomed["width"] * 1.1, timeout=5_000)
    zoomed = page_box(page)
    assert zoomed["width"] == pytest.approx(rect["width"] * 1.25 ** 3, rel=0.01)
    # inside the part of the page in view
    left, top = max(view["x"], zoomed["x"]), max(view["y"], zoomed["y"])
    start, end = (left + 40, top + 30), (left + 0.6 * view["width"], top + 0.5 * view["height"])
    drag(page, start, end)
    expected = expected_points(zoomed, size, start, end)
    assert_within_a_point(save_drawn_box(page, root, "sample-003"), expected)

    scroll = "() => { const v = document.querySelector('#item-page .bs-page-view'); return [v.scrollLeft, v.scrollTop]; }"
    page_box(page)
    view = page.locator("#item-page .bs-page-view").bounding_box()
    before = page.evaluate(scroll)
    page.keyboard.down("Shift")  # Shift+drag pans: the page moves with the pointer, nothing is drawn
    drag(page, (view["x"] + 300, view["y"] + 300), (view["x"] + 200, view["y"] + 240))
    page.keyboard.up("Shift")
    after = page.evaluate(scroll)
    assert after[0] - before[0] == pytest.approx(100, abs=2) and after[1] - before[1] == pytest.approx(60, abs=2)
    assert_within_a_point([float(field(page, f"item-crop-{n}").input_value()) for n in ("x0", "y0", "x1", "y1")],
                          expected)
    context.close()


def test_each_field_once_with_its_preview_and_the_key_highlighted(server, browser):
    url, root = server
    context, page = login(browser, url, "alice")
    open_item(page, "item", "sample-004")
    [key] = stored(root, "sample-004").item.answer_list()
    options = len(stored(root, "sample-004").item.options)
    highlighted = [n for n in range(1, options + 1)
                   if "bs-key-field" in (page.locator(f".bs-field:has(#item-options-{n}-text)").get_attribute("class") or "")]
    assert highlighted == [key]

    open_item(page, "item", "math-001")
    expect(page.locator(".bs-field:has(#item-options-3-text)")).to_have_class(re.compile(r"\bbs-key-field\b"),
                                                                               timeout=30_000)
    assert page.locator(".bs-field.bs-key-field").count() == 1
    expect(page.locator("#item-stem-preview .katex").first).to_be_visible()  # math: rendered under its field
    expect(page.locator("#item-options-1-text-preview")).to_be_hidden()  # plain text: the field alone
    page.locator("#item-previews input").check()
    expect(page.locator("#item-options-1-text-preview")).to_be_visible()
    expect(page.locator("#item-options-1-text-preview")).to_contain_text("보기 1")

    page.locator("button[role=tab]:has-text('Rationale')").first.click()
    stamp = page.locator("#rationale-status .bs-rev")
    expect(stamp).to_be_visible(timeout=30_000)
    item = stored(root, stamp.get_attribute("data-item")).item
    marked = page.locator("#rationale-question .bs-key")
    expect(marked).to_have_count(1)
    [key] = item.answer_list()
    expect(marked).to_have_class(re.compile(rf"\bbs-key-option-{key}\b"))
    expect(marked).to_contain_text(item.options[key - 1].text)
    context.close()


def decided(root, user: str | None = None) -> int:
    """Distinct items decided in the item queue (by `user`), read from the reviews table."""
    from sqlalchemy import func, select

    from annotator.review.tables import reviews

    query = select(func.count(func.distinct(reviews.c.item_id))).where(reviews.c.queue == "item")
    if user:
        query = query.where(reviews.c.user == user)
    with open_workspace(root).store.engine.connect() as conn:
        return conn.execute(query).scalar_one()


def show_queue(page, exam: str, search: str) -> None:
    """Apply the filters: Find walks the queue they select."""
    before = page.locator("#item-status .bs-rev").get_attribute("data-shown")
    choose(page, "item-exam", exam)
    page.locator("#item-search textarea, #item-search input").first.fill(search)
    page.locator("#item-find").click()
    rendered_after(page, "item", before)


def bulk_count(page) -> None:
    box = page.locator("#item-bulk-box")
    if not page.locator("#item-bulk-count").is_visible():
        box.click()
    page.locator("#item-bulk-count").click()


def test_bulk_accept_redraws_the_progress(server, browser):
    url, root = server
    context, page = login(browser, url, "alice")
    show_queue(page, PROGRESS_EXAM, "")
    items = 4  # progress-001 … 004, none decided yet
    done, mine, total = decided(root) + items, decided(root, "alice") + items, open_workspace(root).store.count()
    bulk_count(page)
    expect(page.locator("#item-bulk-note")).to_contain_text(f"{items} items match", timeout=30_000)
    page.locator("#item-bulk-confirm").click()
    expect(page.locator("#item-bulk-note")).to_contain_text(f"{items} items changed", timeout=30_000)
    expect(page.locator("#item-progress .bs-progress-mine")).to_have_attribute("data-done", str(mine), timeout=10_000)
    expect(page.locator("#item-progress .bs-progress-mine")).to_contain_text(f"Mine decided: {mine}")
    queue = page.locator("#item-progress .bs-progress-queue")
    expect(queue).to_have_attribute("data-done", str(done))
    expect(queue).to_have_attribute("data-total", str(total))
    context.close()


def test_bulk_acts_on_exactly_the_queue_shown(server, browser):
    url, root = server
    context, page = login(browser, url, "alice")
    everything = {record["id"]: record for record in _items()}
    screen = sorted(i for i, r in everything.items() if r["source"]["exam"] == SCREEN_EXAM)

    # an item id in the search box opens that item; the queue shown (Next, bulk) is the exam's
    show_queue(page, SCREEN_EXAM, "screen-002")
    expect(page.locator("#item-status")).to_contain_text("screen-002")
    bulk_count(page)
    expect(page.locator("#item-bulk-note")).to_contain_text(f"{len(screen)} items match", timeout=30_000)

    # filters typed but not applied are not the queue shown: refused, nothing counted
    page.locator("#item-search textarea, #item-search input").first.fill(WORD)
    page.locator("#item-bulk-count").click()
    expect(page.locator("#item-bulk-note")).to_contain_text("press Find", timeout=30_000)
    expect(page.locator("#item-bulk-confirm")).to_be_hidden()

    # a text search filters the queue shown, and bulk acts on exactly its items
    show_queue(page, SCREEN_EXAM, WORD)
    shown = sorted(i for i in screen if WORD in everything[i]["stem"])
    assert 0 < len(shown) < len(screen)
    bulk_count(page)
    expect(page.locator("#item-bulk-note")).to_contain_text(f"{len(shown)} items match", timeout=30_000)
    before = {s.item.id: s.rev for s in open_workspace(root).store.iter_items()}
    page.locator("#item-bulk-confirm").click()
    expect(page.locator("#item-bulk-note")).to_contain_text(f"{len(shown)} items changed", timeout=30_000)
    after = {s.item.id: (s.rev, s.item.status) for s in open_workspace(root).store.iter_items()}
    changed = sorted(i for i, (rev, _) in after.items() if rev != before[i])
    assert changed == shown and all(after[i][1] == "accepted" for i in shown)
    context.close()
