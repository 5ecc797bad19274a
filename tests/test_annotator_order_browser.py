"""The item queue ordered by extraction confidence, in a real Chromium against `benchsmith annotate
--order confidence`: the first item shown is the lowest-confidence one, and the order control walks it."""

from __future__ import annotations

import math
import os

import pytest

pytest.importorskip("playwright.sync_api", reason="playwright is not installed (extra: test)")
pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from annotator.review.sample import load_sample  # noqa: E402
from curation.core.item import parse_item  # noqa: E402
from curation.core.workspace import init_workspace, open_workspace  # noqa: E402
from curation.extract.confidence import EXTRA_KEY, confidence_record  # noqa: E402
from tests.test_annotator_browser import (  # noqa: E402
    BROWSER_ARGS,
    CHROMIUM,
    _wait_until_up,
    choose,
    start_annotator,
)

TOKEN = "order-test-token-0123456789abcdef"
MEASURED = {"conf-a": {"ocr"}, "conf-b": set(), "zz-doubtful": {"ocr", "key_mismatch", "no_stem"}, "mid-1": {"vlm"}}


@pytest.fixture(scope="module")
def ordered_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("order") / "ws"
    workspace = init_workspace(root)
    load_sample(workspace)  # items with no confidence
    workspace.store.save_items([parse_item({
        "id": item_id, "source": {"exam": "신뢰도 시험"}, "stem": f"{item_id} 문제", "answer": 1,
        "options": [{"text": "보기 1"}, {"text": "보기 2"}], "extra": {EXTRA_KEY: confidence_record(signals)}})
        for item_id, signals in MEASURED.items()], author="test", stage="extract")
    log = root.parent / "server.log"
    process, url = start_annotator(root, log, "--order", "confidence", env={**os.environ, "BENCHSMITH_ANNOTATOR_TOKEN": TOKEN})
    try:
        _wait_until_up(url, process, log, status=401)
        yield url, root
    finally:
        process.terminate()
        process.wait(timeout=30)


def _by_confidence(root) -> list[str]:  # noqa: ANN001
    """The store's items, lowest confidence first, those without one last — computed here from the items."""
    def key(stored):  # noqa: ANN001
        value = stored.item.extra.get(EXTRA_KEY)
        return (value["score"] if value else math.inf, stored.item.id)

    return [stored.item.id for stored in sorted(open_workspace(root).store.iter_items(), key=key)]


def test_the_first_item_shown_is_the_lowest_confidence_one(ordered_server):
    url, root = ordered_server
    expected = _by_confidence(root)
    assert expected[0] == "zz-doubtful" != min(expected)  # not what id order would show first
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.goto(f"{url}?token={TOKEN}")
        shown = page.locator("#item-status .bs-rev")
        expect(shown).to_have_attribute("data-item", expected[0], timeout=60_000)
        page.locator("#item-next").click()
        expect(shown).to_have_attribute("data-item", expected[1], timeout=30_000)
        choose(page, "item-order", "By id")
        page.locator("#item-find").click()
        expect(shown).to_have_attribute("data-item", min(expected), timeout=30_000)
        choose(page, "item-order", "Lowest extraction confidence first")
        page.locator("#item-find").click()
        expect(shown).to_have_attribute("data-item", expected[0], timeout=30_000)
        browser.close()
