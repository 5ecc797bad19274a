"""Adjudication as a side-by-side form, in a real Chromium at 1366×768 against `benchsmith annotate`:
two reviewers of an overlapped item edited fields differently and decided differently; the lead
sees both (decisions in words, LaTeX rendered, the item's page), picks the stem from one and an
option from the other and a decision, and exactly that is stored. No JSON anywhere on the form."""

from __future__ import annotations

import pytest

from .test_adjudication_browser import open_tab
from .test_annotator_browser import (  # noqa: F401  (browser: the Chromium fixture)
    PASSWORDS,
    annotator_serving,
    browser,
    expect,
    field,
    login,
    open_page,
    stored,
)

ITEM = "sample-002"
CAROL_STEM = "고친 문제: 값 $x^2 + 1$ 은?"
CAROL_OPTION, DAVE_OPTION = "캐럴의 보기 2", "데이브의 보기 2"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from annotator.review import auth, queues
    from annotator.review.actions import Reviewer, Session
    from annotator.review.render import PdfRenderer
    from tests.annotator_support import sample_team_workspace

    root = tmp_path_factory.mktemp("adjudicate-pick") / "ws"
    workspace = sample_team_workspace(root, PASSWORDS)
    queues.assign(workspace.store.engine, "item", ["carol", "dave"], 2, item_ids=[ITEM])
    reviewer = Reviewer(workspace.store, PdfRenderer(workspace.blobs))
    made = (("carol", "needs_fix", {"stem": CAROL_STEM, "options.2.text": CAROL_OPTION}, "보기 2 OCR"),
            ("dave", "accept", {"options.2.text": DAVE_OPTION}, ""))
    for name, decision, edits, reason in made:
        user = auth.get_user(workspace.store.engine, name)
        view = reviewer.save(user, Session("item", ITEM, 1, dict(edits)), decision, reason)
        assert not view.error, view.error
    assert workspace.store.get(ITEM).rev == 1  # disputed: nothing applied yet
    with annotator_serving(root, root.parent / "server.log") as url:
        yield url, root


def test_the_lead_picks_fields_side_by_side_and_exactly_those_are_stored(server, browser):  # noqa: F811
    url, root = server
    before = stored(root, ITEM).item
    context, page = login(browser, url, "alice", viewport=(1366, 768))
    open_page(page, "Experts")
    open_tab(page, "Adjudicate")
    case = page.locator("#adjudicate-case")
    expect(case).to_contain_text(ITEM, timeout=30_000)
    for text in ("carol", "dave", "수정 필요 · Needs fix", "승인 · Accept", "보기 2 OCR"):
        expect(case).to_contain_text(text)
    expect(case).not_to_contain_text("needs_fix")  # words, not codes
    fields = page.locator("#adjudicate-fields")
    for text in (CAROL_OPTION, DAVE_OPTION, "지금 · Now"):
        expect(fields).to_contain_text(text)
    expect(fields.locator(".katex").first).to_be_visible()  # carol's stem with its LaTeX rendered
    expect(fields).not_to_contain_text("$x^2")
    expect(page.locator("#adjudicate-page .bs-page img")).to_be_visible()
    assert page.locator("#tab-adjudicate textarea").count() == 1  # the reason; no JSON box
    # each reviewer in a column of their own, beside the field's name and the item's value now
    stem_row = fields.locator("tr", has_text="stem")
    expect(stem_row.locator("td")).to_have_count(4)
    expect(stem_row.locator("td").nth(2)).to_contain_text("고친 문제")  # carol's column
    expect(stem_row.locator("td").nth(3)).to_contain_text("unchanged")  # dave left it

    picks = {path: page.locator(f"#adjudicate-pick-{n}") for n, path in enumerate(("options.2.text", "stem"), start=1)}
    expect(picks["stem"]).to_contain_text("stem")
    picks["stem"].locator("label", has_text="carol").click()
    picks["options.2.text"].locator("label", has_text="dave").click()
    page.locator("#adjudicate-decision label", has_text="승인 · Accept").click()
    field(page, "adjudicate-reason").fill("문제는 캐럴, 보기는 데이브")
    page.locator("#adjudicate-apply").click()
    expect(page.locator("#adjudicate-status")).to_contain_text("applied as rev 2", timeout=30_000)

    after = stored(root, ITEM)
    assert after.rev == 2 and after.item.status == "accepted"
    assert after.item.stem == CAROL_STEM
    assert after.item.options[1].text == DAVE_OPTION
    assert [o.text for n, o in enumerate(after.item.options) if n != 1] == \
        [o.text for n, o in enumerate(before.options) if n != 1]
    context.close()
