"""The review loop in a real Chromium: models answering from a local server agree on another
option than the key of one item; `analyze suspects` puts it first in the Suspects queue; an
expert fixes the key there; the store has the revision with the reason, the item's old
records are stale, and a rerun of the same models asks exactly that item again."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("playwright.sync_api", reason="playwright is not installed (extra: test)")
pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")

from playwright.sync_api import expect  # noqa: E402

from annotator.review import auth  # noqa: E402
from annotator.review.suspects import STAGE  # noqa: E402
from annotator.review.tables import ensure_tables  # noqa: E402
from curation.core.workspace import open_workspace  # noqa: E402
from scoring.keys import ChoiceKey  # noqa: E402
from tests import suspects_support as support  # noqa: E402
from tests.conftest import run_cli  # noqa: E402
from tests.fault_server import ServerConfig, ServerThread  # noqa: E402
from tests.test_annotator_browser import (  # noqa: E402  (it skips where Chromium is missing)
    BROWSER_ARGS,
    CHROMIUM,
    _wait_until_up,
    login,
    open_page,
    playwright_api,
    start_annotator,
)
from tests.test_annotator_laptop_browser import LAPTOP, in_viewport  # noqa: E402

REASON = "해설서의 정답은 3번: 키 입력 오류"


@pytest.fixture
def annotator(tmp_path):
    with ServerThread(ServerConfig(responder=support.responder_for(support.records()))) as models:
        built = support.build(tmp_path, models.url)
        engine = open_workspace(built.ws).store.engine
        ensure_tables(engine)
        auth.add_user(engine, "bob", "expert", "password-bob")
        log = tmp_path / "server.log"
        process, url = start_annotator(built.ws, log)
        try:
            _wait_until_up(url, process, log)
            yield url, built, models
        finally:
            process.terminate()
            process.wait(timeout=30)


def test_a_suspect_fixed_in_the_queue_is_a_revision_its_records_go_stale_and_a_rerun_asks_it_again(annotator):
    url, built, models = annotator
    ws: Path = built.ws
    store = open_workspace(ws).store
    before = store.get(support.MISKEYED)
    assert before.item.answer_list() == [support.STORED_KEY]
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        context, page = login(browser, url, "bob", viewport=LAPTOP)
        open_page(page, "Experts")
        page.locator("button[role=tab]:has-text('Suspects')").click()
        status = page.locator("#suspects-status")
        expect(status).to_contain_text(support.MISKEYED, timeout=30_000)  # the highest score comes first
        analysed = page.locator("#suspects-summary time.bs-time")  # the analysis's time in the reader's zone
        expect(analysed).to_have_attribute("data-local", "1")
        assert not re.search(r"\d{4}-\d\d-\d\dT", analysed.inner_text()), analysed.inner_text()
        evidence = page.locator("#suspects-evidence")
        expect(evidence.locator(f"tr[data-option='{support.RIGHT}'] .bs-count-all")).to_have_text(
            str(support.MODELS))  # every model chose the right option
        expect(evidence).to_contain_text("P(key wrong)")
        for control in ("#suspects-new-key", "#suspects-reason textarea", "#suspects-keep", "#suspects-fix_key"):
            in_viewport(page, control)  # on a 1366×768 laptop, without scrolling
        panel = page.locator("#tab-suspects").inner_text()
        assert not re.search(r"\bm[0-9]\b|openai-compatible", panel), panel  # counts only, no model names

        # the consensus is offered first; "keep", not "fix key", is the primary button
        expect(page.locator(f"#suspects-new-key input[value='{support.RIGHT}']")).to_be_checked()
        assert "primary" not in (page.locator("#suspects-fix_key").get_attribute("class") or "")
        assert "primary" in (page.locator("#suspects-keep").get_attribute("class") or "")
        expect(evidence.locator("th").nth(1)).to_have_text("표시 · Mark")  # every evidence column has a header
        # a refused fix (no reason) keeps the key the reviewer chose, and writes nothing
        other = 2 if support.RIGHT != 2 else 4
        page.locator("#suspects-new-key label", has_text=str(other)).click()
        page.locator("#suspects-fix_key").click()
        expect(status).to_contain_text("Not saved", timeout=30_000)
        expect(page.locator(f"#suspects-new-key input[value='{other}']")).to_be_checked()
        assert store.get(support.MISKEYED).rev == before.rev

        page.locator("#suspects-new-key label", has_text=str(support.RIGHT)).click()
        page.locator("#suspects-reason textarea").fill(REASON)
        page.locator("#suspects-fix_key").click()
        expect(status).to_contain_text(f"Key fixed to option {support.RIGHT}", timeout=30_000)
        expect(page.locator("#suspects-summary")).to_contain_text("1 stale")
        context.close()
        browser.close()

    after = store.get(support.MISKEYED)
    assert after.item.answer == ChoiceKey(options=[support.RIGHT]) and after.rev == before.rev + 1
    last = store.history(support.MISKEYED)[-1]
    assert (last.author, last.stage) == ("bob", STAGE) and REASON in (last.reason or "")
    assert last.changed_fields == ["answer"]

    done = run_cli("analyze", "items", "--json", "--bootstrap", "0", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stale_skipped"] == support.MODELS  # each model's record of the old key

    asked_before, kept_before = models.stats.requests, len(models.stats.bodies)
    # --no-cache: the prompt does not carry the key, so a cached run would answer the item from the cache
    done = run_cli("run", *built.specs, "--no-progress", "--no-cache", "--json", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)["runs"]
    assert len(runs) == support.MODELS
    for run in runs:
        assert (run["items"], run["resumed"], run["stats"]["scheduled"]) == (support.ITEMS, support.ITEMS - 1, 1), run
        lines = (Path(run["run_dir"]) / "responses.jsonl").read_text(encoding="utf-8").splitlines()
        newest = json.loads(lines[-1])
        assert newest["item_id"] == support.MISKEYED and newest["content_hash"] == after.content_hash
    assert models.stats.requests - asked_before == support.MODELS
    asked = [json.dumps(body, ensure_ascii=False) for body in models.stats.bodies[kept_before:]]
    assert len(asked) == support.MODELS and all(f"[{support.MISKEYED}]" in body for body in asked)
