"""The scoring tab in a real Chromium: an item's blind responses side by side, each with its four
axes, one Save storing every response's scores; no model name on the page."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from annotator.review.scoring import AXES
from annotator.review.tables import expert_scores, scoring_tasks

from . import blind_support as support

pytest.importorskip("playwright.sync_api", reason="playwright is not installed (extra: test)")
pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")
from playwright.sync_api import expect  # noqa: E402

from tests.test_annotator_browser import browser, open_page  # noqa: E402, F401  (the Chromium fixture; skips without it)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    workspace = support.build(tmp_path_factory.mktemp("blind-browser") / "ws")
    with support.serving(workspace) as url:
        yield url, workspace



def login(chromium, url: str, name: str):
    context = chromium.new_context(viewport={"width": 1600, "height": 1100})
    page = context.new_page()
    page.goto(url)
    page.locator("input[type=text]").first.fill(name)
    page.locator("input[type=password]").fill(support.PASSWORDS[name])
    page.get_by_role("button", name="Login").click()
    expect(page.locator("#whoami")).to_contain_text(name, timeout=60_000)
    return context, page


def test_the_responses_stand_side_by_side_and_one_save_scores_each(served, browser):  # noqa: F811
    url, workspace = served
    context, page = login(browser, url, "bob")
    open_page(page, "Experts")  # the scoring tab opens first there
    columns = [page.locator(f"#score-response-{n}") for n in range(1, len(support.MODELS) + 1)]
    for n, column in enumerate(columns, start=1):
        expect(column).to_be_visible(timeout=30_000)
        expect(page.locator(f"#score-label-{n}")).to_contain_text(f"응답 {'ABCD'[n - 1]}")
    expect(page.locator(f"#score-response-{len(support.MODELS) + 1}")).to_be_hidden()
    boxes = [column.bounding_box() for column in columns]
    assert all(abs(box["y"] - boxes[0]["y"]) < 2 for box in boxes)  # one row
    assert all(left["x"] + left["width"] <= right["x"] for left, right in zip(boxes, boxes[1:], strict=False))
    text = page.locator("#tab-score").inner_text()
    assert not any(name in text for name in support.secrets_served(workspace))

    chosen = {}  # the text shown in column n → the scores given to it there
    for n in range(1, len(columns) + 1):
        values = {axis: (n + a) % 5 + 1 for a, axis in enumerate(AXES)}
        for axis, value in values.items():
            page.locator(f"#score-{n}-{axis} input[value='{value}']").check()
        chosen[page.locator(f"#score-rationale-{n}").inner_text().strip()] = values
    page.locator("#score-save").click()
    expect(page.locator("#score-status")).to_contain_text("Saved A, B, C, D", timeout=30_000)

    with workspace.store.engine.connect() as conn:
        rows = conn.execute(select(scoring_tasks.c.rationale, *(expert_scores.c[a] for a in AXES))
                            .join(expert_scores, expert_scores.c.task_id == scoring_tasks.c.id)
                            .where(expert_scores.c.expert == "bob")).all()
    stored = {row.rationale: {axis: getattr(row, axis) for axis in AXES} for row in rows}
    assert {text: stored.get(text) for text in chosen} == chosen and len(stored) == len(chosen)
    context.close()


def test_an_annotator_has_no_stats_tab(served, browser):  # noqa: F811
    url, _ = served
    context, page = login(browser, url, "carol")
    expect(page.locator("button[role=tab]:has-text('Item review')")).to_be_visible(timeout=30_000)
    open_page(page, "Experts")
    expect(page.locator("#expert-none")).to_be_visible()
    expect(page.locator("button[role=tab]:has-text('Stats')")).to_be_hidden()
    expect(page.locator("button[role=tab]:has-text('Expert scoring')")).to_be_hidden()
    context.close()
