"""The annotator in a real Chromium against the real server on 127.0.0.1 (a subprocess of
`benchsmith annotate`), and its API through gradio_client. Skips when Chromium, playwright
or gradio are missing."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (extra: test)")
pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")
CHROMIUM = os.environ.get("BENCHSMITH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip("Chromium is not installed (Debian package chromium)", allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402
from sqlalchemy import delete  # noqa: E402

from annotator.review import auth  # noqa: E402
from annotator.review.sample import load_sample, sample_scoring  # noqa: E402
from annotator.review.scoring import load_rationales  # noqa: E402
from annotator.review.tables import reservations  # noqa: E402
from annotator.web import throttle  # noqa: E402
from curation.core.item import parse_item  # noqa: E402
from curation.core.workspace import CONFIG_NAME, init_workspace, open_workspace  # noqa: E402

PASSWORDS = {"alice": "password-alice", "bob": "password-bob", "carol": "password-carol", "dave": "password-dave",
             "erin": "password-erin", "frank": "password-frank", "gina": "password-gina", "hana": "password-hana"}
# dave and hana each belong to one login-backoff test, so neither test depends on the other having run
ROLES = {"alice": "admin", "bob": "expert", "carol": "annotator", "dave": "annotator", "erin": "expert", "frank": "annotator",
         "hana": "annotator"}
XSS = "<img src=x onerror=alert(1)> <script>alert(2)</script> 태그가 글자로 보여야 한다"
BRACKETS = "다음 식에서 전류는? [3점]  [ I = 3000 / t ]"
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]


def start_annotator(root: Path, log: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """`benchsmith annotate` on a port the system picks (--port 0), and its base URL as it prints it."""
    with log.open("w") as handle:
        process = subprocess.Popen([sys.executable, "-m", "benchsmith.cli", "annotate", "-w", str(root), "--port", "0",
                                    *args], stdout=handle, stderr=subprocess.STDOUT, env=env)
    for _ in range(600):
        printed = re.search(r"http://127\.0\.0\.1:\d+/", log.read_text())
        if printed:
            return process, printed[0]
        if process.poll() is not None:
            break
        time.sleep(0.2)
    process.terminate()
    raise RuntimeError(f"annotator printed no URL: {log.read_text()}")


@contextlib.contextmanager
def annotator_serving(root: Path, log: Path) -> Iterator[str]:
    """`benchsmith annotate` on the workspace at `root`, up and answering; yields its URL."""
    process, url = start_annotator(root, log)
    try:
        _wait_until_up(url, process, log)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def _wait_until_up(url: str, process: subprocess.Popen, log: Path, status: int = 200) -> None:
    import httpx

    for _ in range(600):
        if process.poll() is not None:
            raise RuntimeError(f"annotator exited: {log.read_text()}")
        try:
            if httpx.get(url, timeout=2).status_code == status:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"annotator did not come up: {log.read_text()}")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("annotator") / "ws"
    workspace = init_workspace(root)
    load_sample(workspace)
    xss = {"id": "xss-001", "source": {"exam": "기상기사 (예시)"}, "stem": XSS,
           "options": [{"text": "<b>굵게?</b>"}, {"text": "보기 2"}], "answer": 1}
    brackets = {"id": "bracket-001", "source": {"exam": "기상기사 (예시)"}, "stem": BRACKETS,
                "options": [{"text": "[ I = 3000 / t ]"}, {"text": "보기 2"}], "answer": 2}
    ime = {"id": "ime-001", "source": {"exam": "기상기사 (예시)"}, "stem": "입력기 시험 문제",
           "options": [{"text": "보기 1"}, {"text": "보기 2"}], "answer": 1}
    revert = {"id": "revert-001", "source": {"exam": "기상기사 (예시)"}, "stem": "원래 문제",
              "options": [{"text": "보기 1"}, {"text": "보기 2"}], "answer": 1}
    bulk = [{"id": f"bulk-{n:03d}", "source": {"exam": "벌크 시험"}, "stem": f"일괄 승인 문제 {n}",
             "options": [{"text": "보기 1"}, {"text": "보기 2"}], "answer": 2} for n in range(1, 4)]
    workspace.store.save_items([parse_item(r) for r in (xss, brackets, ime, revert, *bulk)], author="test", stage="import")
    # a later revision that changes fields the item queue edits and one it does not (the Korea queue's variant)
    workspace.store.update_fields("revert-001", {"stem": "잘못 바뀐 문제", "options.1.text": "잘못 바뀐 보기",
                                                 "explicit_variant": "변형 문제"}, expect_rev=1, author="test", stage="clean")
    for name, role in ROLES.items():  # gina is added in the admin tab by a test
        auth.add_user(workspace.store.engine, name, role, PASSWORDS[name])
    config = root / CONFIG_NAME  # long login backoff: the lock-out tests do not depend on how fast they run
    config.write_text(config.read_text(encoding="utf-8") + "\n[annotator]\nlogin_backoff_seconds = 600\n",
                      encoding="utf-8")
    rationales, _ = sample_scoring()
    load_rationales(workspace.store.engine, rationales)
    log = root.parent / "server.log"
    with annotator_serving(root, log) as url:
        yield url, root


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield chromium
        chromium.close()


def login(browser, url: str, name: str, viewport: tuple[int, int] = (1400, 1000)):
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))  # type: ignore[attr-defined]
    page.goto(url)
    page.locator("input[type=text]").first.fill(name)
    page.locator("input[type=password]").fill(PASSWORDS[name])
    page.get_by_role("button", name="Login").click()
    expect(page.locator("#whoami")).to_contain_text(name, timeout=60_000)
    return context, page


def open_page(page, title: str) -> None:
    """Go to the review page ("Review") or the expert page ("Experts") by the navbar, and wait
    until the page has loaded its user."""
    before = page.url
    page.locator(f"a:has-text('{title}')").first.click()
    expect(page).not_to_have_url(before, timeout=30_000)
    expect(page.locator("#whoami")).to_contain_text(" · ", timeout=60_000)


def open_item(page, queue: str, item_id: str) -> None:
    """Search the id and wait for this response (each render stamps data-shown anew)."""
    stamp = page.locator(f"#{queue}-status .bs-rev")
    before = stamp.get_attribute("data-shown") if stamp.count() else None
    page.locator(f"#{queue}-search textarea, #{queue}-search input").first.fill(item_id)
    page.locator(f"#{queue}-find").click()
    expect(stamp).not_to_have_attribute("data-shown", before or "-", timeout=30_000)
    expect(page.locator(f"#{queue}-status")).to_contain_text(item_id, timeout=30_000)


def stored(root: Path, item_id: str):
    return open_workspace(root).store.get(item_id)


def field(page, element_id: str):
    return page.locator(f"#{element_id} textarea, #{element_id} input").first


def type_into(page, element_id: str, text: str) -> None:
    """Replace a field's text by typing it, key by key, as a person does."""
    box = field(page, element_id)
    box.click()
    box.press("Control+A")
    box.press("Delete")
    box.press_sequentially(text)


def test_wrong_password_is_refused(server, browser):
    url, _ = server
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.locator("input[type=text]").first.fill("alice")
    page.locator("input[type=password]").fill("not-her-password")
    page.get_by_role("button", name="Login").click()
    expect(page.get_by_text("Incorrect credentials")).to_be_visible(timeout=30_000)
    expect(page.locator("#whoami")).to_have_count(0)
    context.close()


def _login_from(address: str, url: str, name: str, password: str):
    """A login from another client address (127.0.0.N): the page's own client, 127.0.0.1, must not
    collect failures here, or the per-client backoff would slow down every later test's login."""
    import httpx

    with httpx.Client(transport=httpx.HTTPTransport(local_address=address)) as http:
        return http.post(url + "login", data={"username": name, "password": password})


def _fail_logins(address: str, url: str, name: str) -> list[int]:
    return [_login_from(address, url, name, "guess").status_code for _ in range(throttle.FREE_TRIES)]


def test_failed_logins_are_rate_limited_over_http(server):
    url, _ = server
    assert _fail_logins("127.0.0.2", url, "dave") == [400] * throttle.FREE_TRIES
    right = _login_from("127.0.0.2", url, "dave", PASSWORDS["dave"])
    assert right.status_code == 429  # the client that failed waits, even with the right password
    assert "Too many failed logins" in right.json()["detail"] and "10 minutes" in right.json()["detail"]
    assert int(right.headers["retry-after"]) > 500  # login_backoff_seconds = 600, set by the fixture
    # no hard lock: a client that has not failed (the user's own browser) still gets in
    assert _login_from("127.0.0.3", url, "dave", PASSWORDS["dave"]).status_code == 200


def test_a_slowed_down_login_says_so_and_for_how_long(server, browser):
    url, _ = server
    assert _fail_logins("127.0.0.4", url, "hana") == [400] * throttle.FREE_TRIES  # someone guessing hana's password
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.locator("input[type=text]").first.fill("hana")
    page.locator("input[type=password]").fill("not-her-password")  # this browser fails once on hana too
    page.get_by_role("button", name="Login").click()
    banner = page.locator("#bs-login-error")
    expect(banner).to_contain_text("Incorrect credentials", timeout=30_000)
    page.locator("input[type=password]").fill(PASSWORDS["hana"])
    page.get_by_role("button", name="Login").click()
    expect(banner).to_contain_text("Too many failed logins", timeout=30_000)
    # six failures on hana: 600 s doubled once, capped at CAP_S
    expect(banner).to_contain_text(f"{round(min(2 * 600, throttle.CAP_S) / 60)} minutes")
    context.close()


def test_the_logout_button_ends_the_session(server, browser):
    url, _ = server
    context, page = login(browser, url, "carol")
    assert context.request.get(url + "config").status == 200
    page.locator("#logout").click()
    expect(page.locator("input[type=password]")).to_be_visible(timeout=30_000)  # back on the login page
    expect(page.locator("#whoami")).to_have_count(0)
    assert context.request.get(url + "config").status == 401
    context.close()


def test_everything_but_the_login_page_needs_a_session(server, browser):
    url, _ = server
    anonymous = browser.new_context()
    for path in ("openapi.json", "config", "gradio_api/info", "gradio_api/openapi.json", "bs/draft", "docs"):
        assert anonymous.request.get(url + path).status == 401, path
    assert anonymous.request.get(url).status == 200  # the login page
    context, _ = login(browser, url, "carol")
    assert context.request.get(url + "config").status == 200
    anonymous.close()
    context.close()


@pytest.fixture(scope="module")
def local_server(tmp_path_factory):
    """No users: the server prints a token URL, as Jupyter does."""
    root = tmp_path_factory.mktemp("local") / "ws"
    load_sample(init_workspace(root))
    log = root.parent / "server.log"
    process, url = start_annotator(root, log)
    try:
        printed = [w for w in log.read_text().split() if "?token=" in w]  # printed with the URL, before serving
        assert printed, log.read_text()
        _wait_until_up(url, process, log, status=401)  # up, and closed without the token
        yield url, printed[0]
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_with_no_users_only_the_token_url_opens_the_app(local_server, browser):
    import httpx

    url, token_url = local_server
    assert token_url.startswith(url + "?token=") and len(token_url.split("=", 1)[1]) == 32  # 24 random bytes, URL-safe base64
    for path in ("", "openapi.json", "config", "gradio_api/info", "bs/draft", "?token=wrong-token"):
        assert httpx.get(url + path).status_code == 401, path
    context = browser.new_context()
    page = context.new_page()
    page.goto(token_url)
    expect(page.locator("#whoami")).to_contain_text("local mode", timeout=60_000)
    assert "token" not in page.url  # the token left the address bar; a cookie holds the session
    assert context.request.get(url + "config").status == 200
    context.close()


def test_edit_latex_stem_preview_save_and_history(server, browser):
    url, root = server
    context, page = login(browser, url, "alice")
    open_item(page, "item", "sample-001")
    stem = "수정된 문제: $\\frac{dT}{dz} = -\\Gamma_d$ 일 때 비용 \\$5 는?"
    type_into(page, "item-stem", stem)
    preview = page.locator("#item-stem-preview")
    expect(preview.locator(".katex").first).to_be_visible(timeout=30_000)
    expect(preview).to_contain_text("수정된 문제")
    expect(preview).to_contain_text("$")  # the literal dollar, rendered, not a formula opener
    # the preview follows the typing; wait for the render of the final text, not an intermediate one
    expect(preview.locator(".katex annotation").first).to_have_text("\\frac{dT}{dz} = -\\Gamma_d", timeout=30_000)
    page.locator("#item-save").click()
    expect(page.locator("#item-status")).to_contain_text("Saved as rev 2", timeout=30_000)
    assert stored(root, "sample-001").item.stem == stem and stored(root, "sample-001").rev == 2
    page.locator("#item-history-box").click()
    row = page.locator("#item-history tr[data-rev='2']")
    expect(row).to_contain_text("alice")
    expect(row).to_contain_text("annotate")
    expect(row).to_contain_text("stem")
    context.close()


def test_unsaved_edit_survives_a_page_refresh(server, browser):
    url, root = server
    context, page = login(browser, url, "alice")
    open_item(page, "item", "sample-005")
    type_into(page, "item-options-2-text", "새로고침 뒤에도 남는 수정")
    expect(page.locator("#item-draft")).to_contain_text("1 unsaved edit", timeout=30_000)
    page.reload()
    expect(field(page, "item-options-2-text")).to_have_value("새로고침 뒤에도 남는 수정", timeout=60_000)
    expect(page.locator("#item-status")).to_contain_text("Restored your unsaved edits")
    assert stored(root, "sample-005").item.options[1].text == "hPa"
    context.close()


def test_two_users_editing_the_same_item_see_the_conflict_and_keep_both_edits(server, browser):
    url, root = server
    first, page_a = login(browser, url, "alice")
    second, page_b = login(browser, url, "carol")
    open_item(page_a, "item", "sample-003")
    open_item(page_b, "item", "sample-003")
    rev = stored(root, "sample-003").rev
    type_into(page_a, "item-stem", "앨리스가 고친 문제")
    type_into(page_b, "item-options-4-text", "캐롤이 고친 보기")
    expect(page_b.locator("#item-draft")).to_contain_text("1 unsaved edit", timeout=30_000)
    page_a.locator("#item-save").click()
    expect(page_a.locator("#item-status")).to_contain_text(f"Saved as rev {rev + 1}", timeout=30_000)
    page_b.locator("#item-save").click()
    conflict = page_b.locator("#item-conflict")
    expect(conflict).to_contain_text(f"rev {rev + 1} by alice", timeout=30_000)
    expect(conflict).to_contain_text("캐롤이 고친 보기")
    expect(field(page_b, "item-options-4-text")).to_have_value("캐롤이 고친 보기")
    page_b.locator("#item-reapply").click()
    expect(page_b.locator("#item-status")).to_contain_text(f"rev {rev + 1}", timeout=30_000)
    expect(field(page_b, "item-stem")).to_have_value("앨리스가 고친 문제")
    page_b.locator("#item-save").click()
    expect(page_b.locator("#item-status")).to_contain_text(f"Saved as rev {rev + 2}", timeout=30_000)
    item = stored(root, "sample-003").item
    assert item.stem == "앨리스가 고친 문제" and item.options[3].text == "캐롤이 고친 보기"
    first.close()
    second.close()


def test_html_in_item_text_renders_as_text(server, browser):
    url, _ = server
    context, page = login(browser, url, "alice")
    open_item(page, "item", "xss-001")
    preview = page.locator("#item-stem-preview")
    expect(preview).to_contain_text("<img src=x onerror=alert(1)>", timeout=30_000)
    expect(preview).to_contain_text("<script>alert(2)</script>")
    assert preview.locator("img, script").count() == 0
    expect(page.locator("#item-options-1-text-preview")).to_contain_text("<b>굵게?</b>")
    page.locator("#tab-korea-button, button[role=tab]:has-text('Korea')").first.click()
    page.locator("button[role=tab]:has-text('Item review')").first.click()
    assert page.dialogs == []  # type: ignore[attr-defined]
    context.close()


def test_shortcuts_use_event_code_and_ignore_ime_composition(server, browser):
    url, root = server
    context, page = login(browser, url, "alice")
    open_item(page, "item", "sample-001")
    page.locator("#whoami").click()  # focus outside any text field
    composing = "{code: 'KeyA', key: 'ㅁ', isComposing: true, keyCode: 229, bubbles: true}"
    page.evaluate(f"document.body.dispatchEvent(new KeyboardEvent('keydown', {composing}))")
    page.locator("#item-next").click()  # a round trip, so a stray accept would have landed before we look
    open_item(page, "item", "sample-001")
    assert stored(root, "sample-001").item.status == "extracted"
    korean_layout = "{code: 'KeyA', key: 'ㅁ', bubbles: true}"  # the A key under a Korean layout
    page.evaluate(f"document.body.dispatchEvent(new KeyboardEvent('keydown', {korean_layout}))")
    expect(page.locator("#item-status")).to_contain_text("accepted", timeout=30_000)
    assert stored(root, "sample-001").item.status == "accepted"
    context.close()


def test_expert_scores_with_digit_keys_and_sees_no_model_names(server, browser):
    url, root = server
    context, page = login(browser, url, "bob")
    open_page(page, "Experts")  # the scoring tab opens first there
    expect(page.locator("#score-label-1")).to_contain_text("응답 A", timeout=30_000)
    body = page.locator("#tab-score").inner_text()
    assert "model-alpha" not in body and "model-beta" not in body and "model-gamma" not in body
    page.locator("#score-label-1").click()
    for key in ("Digit4", "Digit5", "Digit3", "Digit4"):  # the first response's four axes
        page.keyboard.press(key)
    expect(page.locator("#score-1-clarity input[value='4']")).to_be_checked(timeout=30_000)
    page.locator("#score-save").click()
    expect(page.locator("#score-status")).to_contain_text("Saved A", timeout=30_000)
    from sqlalchemy import select

    from annotator.review.tables import expert_scores
    with open_workspace(root).store.engine.connect() as conn:
        row = conn.execute(select(expert_scores).where(expert_scores.c.expert == "bob")).one()
    assert (row.factuality, row.logic, row.depth, row.clarity) == (4, 5, 3, 4)
    context.close()


def test_annotators_do_not_get_the_scoring_tab(server, browser):
    url, _ = server
    context, page = login(browser, url, "carol")
    expect(page.locator("button[role=tab]:has-text('Item review')")).to_be_visible()
    open_page(page, "Experts")
    expect(page.locator("#expert-none")).to_be_visible()
    expect(page.locator("button[role=tab]:has-text('Expert scoring')")).to_be_hidden()
    open_page(page, "Review")
    expect(page.locator("button[role=tab]:has-text('Item review')")).to_be_visible()
    open_page(page, "Experts")
    page.locator("#logout").click()  # from the expert page too, back to the login page
    expect(page.locator("input[type=password]")).to_be_visible(timeout=30_000)
    context.close()


def test_images_come_only_from_the_blob_store_by_hash(server, browser):
    url, root = server
    anonymous = browser.new_context()
    crop = stored(root, "sample-002").item.options[0].image.blob
    assert anonymous.request.get(url + f"bs/blob/{crop}").status == 401
    context, page = login(browser, url, "alice")
    good = context.request.get(url + f"bs/blob/{crop}")
    assert good.status == 200 and good.headers["content-type"] == "image/png"
    for bad in ("..%2Fstore.db", "..%2F..%2Fbenchsmith.toml", crop.replace(".png", ".PNG"), "x" * 64 + ".png"):
        assert context.request.get(url + f"bs/blob/{bad}").status == 404, bad
    pdf_sha = stored(root, "sample-002").item.source.pdf_sha256
    assert context.request.get(url + f"bs/blob/{pdf_sha}.pdf").status == 404  # not an image
    assert context.request.get(url + f"bs/page/{pdf_sha}/1").headers["content-type"] == "image/png"
    assert context.request.get(url + "bs/page/..%2Fstore.db/1").status == 404
    open_item(page, "item", "sample-002")
    expect(page.locator("#item-crops img")).to_have_count(4)
    assert all(src.startswith("/bs/blob/") for src in page.locator("#item-crops img").evaluate_all("e => e.map(i => i.getAttribute('src'))"))
    anonymous.close()
    context.close()


def test_api_save_and_score_endpoints_with_gradio_client(server):
    client_module = pytest.importorskip("gradio_client")
    url, root = server
    client = client_module.Client(url, auth=("bob", PASSWORDS["bob"]), verbose=False)
    current = client.predict("sample-004", api_name="/get_item")
    rev = current["rev"]
    saved = client.predict("item", "sample-004", rev, json.dumps({"stem": "API로 고친 문제"}), "", "",
                           api_name="/save_item")
    assert saved["status"] == "saved" and saved["rev"] == rev + 1
    stale = client.predict("item", "sample-004", rev, json.dumps({"answer": "3"}), "", "", api_name="/save_item")
    assert stale["status"] == "conflict" and any("by bob" in line for line in stale["since"])
    invalid = client.predict("item", "sample-004", rev + 1, json.dumps({"answer": "7"}), "", "", api_name="/save_item")
    assert invalid["status"] == "invalid" and "answer 7 is not an option number 1..4" in invalid["message"]
    assert stored(root, "sample-004").rev == rev + 1
    from annotator.review.scoring import get_score, tasks
    engine = open_workspace(root).store.engine
    task = next(t for t in tasks(engine) if get_score(engine, t.id, "bob") is None)  # not the one scored in the page
    shown = client.predict(task.item_id, api_name="/score_responses")["responses"]
    label = next(r["label"] for r in shown if r["rationale"] == task.rationale)  # the expert knows only labels
    first = client.predict(task.item_id, label, 0, 5, 4, 4, 5, "API 채점", api_name="/save_score")
    assert first["status"] == "saved"
    assert client.predict(task.item_id, label, 0, 1, 1, 1, 1, "", api_name="/save_score")["status"] == "conflict"
    assert client.predict(task.item_id, label, 1, 9, 1, 1, 1, "", api_name="/save_score")["status"] == "invalid"
    assert get_score(engine, task.id, "bob").values == dict(
        factuality=5, logic=4, depth=4, clarity=5)


def draft_edits(root: Path, user: str, queue: str, item_id: str) -> dict:
    from annotator.review.drafts import load_draft

    draft = load_draft(open_workspace(root).store.engine, user, queue, item_id)
    return draft.edits if draft else {}


def wait_for_draft(root: Path, user: str, item_id: str, path: str, value: str, timeout_s: float = 60.0) -> None:
    """Until the server-side draft holds `value` at `path` (a generous limit: a loaded machine is slow)."""
    deadline = time.monotonic() + timeout_s
    while draft_edits(root, user, "item", item_id).get(path) != value:
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} = {value!r} never reached the server-side draft: "
                                 f"{draft_edits(root, user, 'item', item_id)}")
        time.sleep(0.05)


IME_COMMIT = """(el, text) => {
  el.focus();
  el.dispatchEvent(new CompositionEvent("compositionstart", {bubbles: true}));
  el.value = text;
  el.dispatchEvent(new CompositionEvent("compositionend", {bubbles: true, data: text}));
  el.dispatchEvent(new InputEvent("input", {bubbles: true, inputType: "insertCompositionText", data: text}));
}"""


def test_ime_commit_without_key_events_reaches_the_draft_and_the_preview(server, browser):
    url, root = server
    context, page = login(browser, url, "carol")
    open_item(page, "item", "ime-001")
    text = "입력기로 확정한 한글 문장"
    field(page, "item-stem").evaluate(IME_COMMIT, text)
    wait_for_draft(root, "carol", "ime-001", "stem", text)
    expect(page.locator("#item-stem-preview")).to_contain_text(text, timeout=5_000)
    expect(page.locator("#item-draft")).to_contain_text("1 unsaved edit", timeout=5_000)
    context.close()


def test_reload_right_after_a_paste_keeps_the_text(server, browser):
    url, root = server
    context, page = login(browser, url, "frank")
    open_item(page, "item", "ime-001")
    text = "메뉴로 붙여 넣은 보기"
    field(page, "item-options-2-text").evaluate(
        "(el, text) => { el.focus(); el.value = text; el.dispatchEvent(new InputEvent('input', "
        "{bubbles: true, inputType: 'insertFromPaste'})); }", text)
    page.reload()
    expect(field(page, "item-options-2-text")).to_have_value(text, timeout=60_000)
    assert draft_edits(root, "frank", "item", "ime-001")["options.2.text"] == text
    context.close()


def test_square_brackets_are_text_not_display_math(server, browser):
    url, _ = server
    context, page = login(browser, url, "alice")
    open_item(page, "item", "bracket-001")
    preview = page.locator("#item-stem-preview")
    expect(preview).to_contain_text("[3점]", timeout=30_000)
    expect(preview).to_contain_text("[ I = 3000 / t ]")
    expect(page.locator("#item-options-1-text-preview")).to_contain_text("[ I = 3000 / t ]")
    assert preview.locator(".katex").count() == 0
    context.close()


def choose(page, element_id: str, label: str) -> None:
    """Pick `label` in a dropdown; a queue's filters sit in a closed bar, opened first."""
    if not page.locator(f"#{element_id}").is_visible():
        page.locator(f"#{element_id.split('-')[0]}-filters-box .label-wrap").click()
    page.locator(f"#{element_id} input").first.click()
    page.locator("ul[role=listbox] li", has_text=label).first.click()


def rendered_after(page, queue: str, before: str | None) -> None:
    stamp = page.locator(f"#{queue}-status .bs-rev")
    expect(stamp).not_to_have_attribute("data-shown", before or "-", timeout=30_000)


def test_a_second_recrop_keeps_the_figure_box(server, browser):
    url, root = server
    context, page = login(browser, url, "alice")
    open_item(page, "item", "sample-002")
    figure = stored(root, "sample-002").item.options[0].image.provenance.bbox
    choose(page, "item-crop-target", "Option 1 image")
    expect(field(page, "item-crop-x1")).to_have_value(str(int(figure[2])) if figure[2] == int(figure[2]) else str(figure[2]),
                                                     timeout=30_000)
    wider = [figure[0], figure[1], figure[2] + 10, figure[3]]
    field(page, "item-crop-x1").fill(str(wider[2]))
    for _ in range(2):  # the second re-crop starts from what the first one left in the box fields
        before = page.locator("#item-status .bs-rev").get_attribute("data-shown")
        page.locator("#item-recrop").click()
        rendered_after(page, "item", before)
        expect(page.locator("#item-status")).to_contain_text("New crop rendered")
        edits = draft_edits(root, "alice", "item", "sample-002")
        assert edits["options.1.image"]["provenance"]["bbox"] == wider
        assert "source.bbox" not in edits
    context.close()


def test_search_without_match_keeps_the_item_and_an_id_does_not_filter_next(server, browser):
    url, _ = server
    context, page = login(browser, url, "alice")
    open_item(page, "item", "sample-003")
    stem = field(page, "item-stem").input_value()
    before = page.locator("#item-status .bs-rev").get_attribute("data-shown")
    page.locator("#item-search textarea, #item-search input").first.fill("no-such-item-anywhere")
    page.locator("#item-find").click()
    rendered_after(page, "item", before)
    expect(page.locator("#item-status")).to_contain_text("No item matches")
    expect(page.locator("#item-status")).to_contain_text("sample-003")
    expect(field(page, "item-stem")).to_have_value(stem)
    open_item(page, "item", "sample-003")  # the id stays in the search box
    page.locator("#item-next").click()
    expect(page.locator("#item-status")).to_contain_text("sample-004", timeout=30_000)
    context.close()


def test_next_unscored_starts_at_the_unscored_task_on_screen(server, browser):
    url, _ = server
    context, page = login(browser, url, "erin")  # has scored nothing yet
    open_page(page, "Experts")
    expect(page.locator("#score-status")).to_contain_text("1 /", timeout=30_000)
    position = page.locator("#score-status span").first.inner_text()
    page.locator("#score-mine").click()
    expect(page.locator("#score-status")).to_contain_text("not scored yet", timeout=30_000)  # the same item
    assert page.locator("#score-status span").first.inner_text() == position
    context.close()


def test_progress_guidelines_and_the_help_overlay(server, browser):
    url, root = server
    context, page = login(browser, url, "alice")
    total = open_workspace(root).store.count()
    expect(page.locator("#item-progress .bs-progress-queue")).to_have_attribute("data-total", str(total), timeout=30_000)
    page.locator("#item-guidelines-box").click()
    expect(page.locator("#item-guidelines")).to_contain_text("Item review guidelines")
    marker = "새 지침: 그림은 반드시 원본과 대조 (test)"
    field(page, "item-guidelines-editor").fill(f"### {marker}")
    page.locator("#item-guidelines-save").click()
    expect(page.locator("#item-guidelines")).to_contain_text(marker, timeout=30_000)
    assert marker in (root / "guidelines" / "item.md").read_text(encoding="utf-8")
    page.locator("#whoami").click()
    page.keyboard.press("Shift+Slash")
    expect(page.locator("#bs-help")).to_be_visible()
    expect(page.locator("#bs-help")).to_contain_text("Keyboard shortcuts")
    page.keyboard.press("Escape")
    expect(page.locator("#bs-help")).to_be_hidden()
    carol, carol_page = login(browser, url, "carol")  # an annotator reads the new text but gets no editor
    carol_page.locator("#item-guidelines-box").click()
    expect(carol_page.locator("#item-guidelines")).to_contain_text(marker, timeout=30_000)
    expect(carol_page.locator("#item-guidelines-editor")).to_be_hidden()
    expect(carol_page.locator("#item-bulk-box")).to_be_hidden()
    carol.close()
    context.close()


def _at(record: dict, path: str):
    for part in path.split("."):
        record = record[int(part) - 1] if isinstance(record, list) else (record or {}).get(part)
    return record


def test_revert_to_a_past_revision_and_bulk_accept_over_the_filter(server, browser):
    url, root = server
    with open_workspace(root).store.engine.begin() as conn:  # an earlier test's reviewer may have left it open
        conn.execute(delete(reservations).where(reservations.c.item_id == "revert-001"))
    context, page = login(browser, url, "alice")
    open_item(page, "item", "revert-001")
    page.locator("#item-history-box").click()
    # the control starts at the previous revision, not at 0; nothing is reverted before a preview
    expect(field(page, "item-revert-rev")).to_have_value(re.compile(r"^rev 1 "), timeout=30_000)
    expect(page.locator("#item-revert")).to_be_hidden()
    page.locator("#item-revert-preview-button").click()
    rows = page.locator("#item-revert-preview .bs-revert-row")
    expect(rows.first).to_be_visible(timeout=30_000)
    history = open_workspace(root).store.history("revert-001")
    old, new = history[0].snapshot, history[1].snapshot
    # the fields the revert may change: those differing between the two revisions that the item queue edits
    differing = {path for path in ("stem", "options.1.text", "options.2.text", "answer", "explicit_variant")
                 if _at(old, path) != _at(new, path)}
    assert differing == {"stem", "options.1.text", "explicit_variant"}
    assert {rows.nth(n).get_attribute("data-path") for n in range(rows.count())} == differing - {"explicit_variant"}
    field(page, "item-revert-reason").fill("잘못된 정리 되돌림")
    page.locator("#item-revert").click()
    expect(page.locator("#item-status")).to_contain_text("Reverted to rev 1, saved as rev 3", timeout=30_000)
    item = stored(root, "revert-001")
    assert item.rev == 3 and item.item.stem == "원래 문제" and item.item.options[0].text == "보기 1"
    assert item.item.explicit_variant == "변형 문제"  # not the item queue's field: left as it is
    last = open_workspace(root).store.history("revert-001")[-1]
    assert last.stage == "revert" and last.author == "alice" and "잘못된 정리 되돌림" in last.reason

    others = {s.item.id: s.item.status for s in open_workspace(root).store.iter_items() if not s.item.id.startswith("bulk-")}
    page.locator("#item-search textarea, #item-search input").first.fill("")  # the count shows every filter in use
    choose(page, "item-exam", "벌크 시험")
    before = page.locator("#item-status .bs-rev").get_attribute("data-shown")
    page.locator("#item-find").click()  # bulk acts on the queue shown: apply the filter first
    rendered_after(page, "item", before)
    page.locator("#item-bulk-box").click()
    page.locator("#item-bulk-count").click()
    expect(page.locator("#item-bulk-note")).to_contain_text("3 items match", timeout=30_000)
    page.locator("#item-bulk-confirm").click()
    expect(page.locator("#item-bulk-note")).to_contain_text("3 items changed", timeout=30_000)
    workspace = open_workspace(root)
    assert {s.item.id: s.item.status for s in workspace.store.iter_items() if s.item.id.startswith("bulk-")} == {
        f"bulk-{n:03d}": "accepted" for n in range(1, 4)}
    assert {s.item.id: s.item.status for s in workspace.store.iter_items() if not s.item.id.startswith("bulk-")} == others
    context.close()


def test_admin_tab_users_and_assignment_korea_reason_and_rubric(server, browser):
    url, root = server
    context, page = login(browser, url, "alice")
    open_page(page, "Experts")
    page.locator("button[role=tab]:has-text('Admin')").click()
    expect(page.locator("#admin-users")).to_contain_text("carol", timeout=30_000)
    field(page, "admin-user-name").fill("gina")
    choose(page, "admin-user-role", "expert")
    field(page, "admin-user-password").fill("password-gina")
    page.locator("#admin-user-add").click()
    expect(page.locator("#admin-note")).to_contain_text("gina (expert) saved", timeout=30_000)
    expect(page.locator("#admin-users")).to_contain_text("gina")
    assert auth.get_user(open_workspace(root).store.engine, "gina").role == "expert"
    choose(page, "admin-assign-queue", "korea")
    choose(page, "admin-assign-users", "gina")
    choose(page, "admin-assign-users", "carol")
    field(page, "admin-assign-overlap").fill("2")
    page.locator("#admin-assign").click()
    from annotator.review import queues
    korea_items = queues.count(open_workspace(root).store.engine, "korea", queues.Filters())
    expect(page.locator("#admin-note")).to_contain_text(f"{2 * korea_items} new assignments over {korea_items} items",
                                                        timeout=30_000)
    context.close()

    gina, page = login(browser, url, "gina")
    page.locator("button[role=tab]:has-text('Korea')").first.click()
    expect(page.locator("#korea-status .bs-rev")).to_be_visible(timeout=30_000)
    expect(page.locator("#korea-progress .bs-progress-mine")).to_contain_text(f"0 / {korea_items}")
    item_id = page.locator("#korea-status .bs-rev").get_attribute("data-item")
    field(page, "korea-reason").fill("한국 고유의 지명이 답에 필요함")
    page.locator("#korea-confirm").click()
    expect(page.locator("#korea-decision")).to_contain_text("한국 고유의 지명이 답에 필요함", timeout=30_000)
    reviews = [r for r in queues.reviews_of(open_workspace(root).store.engine, item_id) if r["queue"] == "korea"]
    assert reviews[-1]["user"] == "gina" and reviews[-1]["reason"] == "한국 고유의 지명이 답에 필요함"
    open_page(page, "Experts")
    from annotator.review.scoring import RUBRIC
    page.locator("#score-rubric-box").click()
    expect(page.locator("#score-rubric")).to_contain_text(RUBRIC["factuality"][1], timeout=30_000)
    gina.close()
