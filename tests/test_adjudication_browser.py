"""Adjudication in a real Chromium against `benchsmith annotate`: two reviewers decide differently
on an overlapped item, the item waits unchanged in the lead's Adjudicate tab with both decisions
side by side, the lead's decision applies with both in the history, and the stats tab shows the
reviewers' agreement as the formulas give it. Skips as tests/test_annotator_browser.py does."""

from __future__ import annotations

import pytest

from .test_adjudication import alpha_nominal, cohen
from .test_annotator_browser import (  # noqa: F401  (browser: the Chromium fixture)
    annotator_serving,
    browser,
    expect,
    field,
    login,
    open_item,
    open_page,
    start_annotator,
    stored,
)

# carol and dave review three items each; they differ on sample-002 only
DECISIONS = {"sample-001": ("accept", "accept"), "sample-002": ("accept", "needs_fix"),
             "sample-003": ("needs_fix", "needs_fix")}
REASON = "보기 2 OCR"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from annotator.review import queues
    from tests.annotator_support import sample_team_workspace

    from .test_annotator_browser import PASSWORDS

    root = tmp_path_factory.mktemp("adjudicate") / "ws"
    workspace = sample_team_workspace(root, PASSWORDS)
    queues.assign(workspace.store.engine, "item", ["carol", "dave"], 2, item_ids=list(DECISIONS))
    log = root.parent / "server.log"
    with annotator_serving(root, log) as url:
        yield url, root


def _decide(page, item_id: str, decision: str) -> None:
    open_item(page, "item", item_id)
    field(page, "item-reason").fill(REASON if decision == "needs_fix" else "")
    page.locator(f"#item-{decision}").click()
    expect(page.locator("#item-status")).to_contain_text("reviewers", timeout=30_000)


def open_tab(page, title: str) -> None:
    """Click a tab, through the tab menu when the window is too narrow to show it."""
    shown = page.locator(f".tab-container:not(.visually-hidden) button[role=tab]:has-text('{title}')")
    if shown.count() and shown.first.is_visible():
        shown.first.click()
        return
    page.locator(".overflow-menu button").first.click()
    page.locator(f".overflow-dropdown button:has-text('{title}')").click()


def test_two_reviewers_differ_and_the_leads_decision_applies_with_both_in_the_history(server, browser):  # noqa: F811
    url, root = server
    for n, name in enumerate(("carol", "dave")):
        context, page = login(browser, url, name)
        for item_id, made in DECISIONS.items():
            _decide(page, item_id, made[n])
        context.close()
    assert stored(root, "sample-002").rev == 1  # the differing decisions left it unchanged
    assert stored(root, "sample-001").item.status == "accepted"  # the agreeing ones applied

    context, page = login(browser, url, "alice")
    open_page(page, "Experts")
    open_tab(page, "Adjudicate")
    case = page.locator("#adjudicate-case")
    expect(case).to_contain_text("sample-002", timeout=30_000)
    for text in ("carol", "dave", "승인 · Accept", "수정 필요 · Needs fix", REASON):  # decisions in words
        expect(case).to_contain_text(text)
    expect(page.locator("#adjudicate-page .bs-page img")).to_be_visible()  # the item's page beside it
    page.locator("#adjudicate-take label:has-text('dave')").click()
    expect(field(page, "adjudicate-reason")).to_have_value(REASON, timeout=30_000)
    expect(page.locator("#adjudicate-decision input[value='needs_fix']")).to_be_checked()
    page.locator("#adjudicate-apply").click()
    expect(page.locator("#adjudicate-status")).to_contain_text("applied as rev 2", timeout=30_000)
    expect(page.locator("#adjudicate-status")).to_contain_text("Nothing to adjudicate")

    item = stored(root, "sample-002")
    assert (item.rev, item.item.status, item.item.flags.review_reasons) == (2, "in_review", [REASON])
    open_page(page, "Review")
    open_item(page, "item", "sample-002")
    page.locator("#item-history-box").click()
    row = page.locator("#item-history tr[data-rev='2']")
    for text in ("alice", "adjudicate", "carol: accept", f"dave: needs_fix ({REASON})"):
        expect(row).to_contain_text(text)

    open_page(page, "Experts")
    open_tab(page, "Stats")
    figures = page.locator("#stats")
    pairs = list(DECISIONS.values())
    expect(figures).to_contain_text("Cohen", timeout=30_000)
    expect(figures).to_contain_text(f"{cohen(pairs):.3f}")
    expect(figures).to_contain_text(f"{alpha_nominal([list(pair) for pair in pairs]):.3f}")
    context.close()
