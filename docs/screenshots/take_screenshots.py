"""Screenshots of each annotator queue with the sample exam (extracted from its PDF), one PNG per queue.

    python docs/screenshots/take_screenshots.py   # needs the annotator extra, playwright, Debian chromium
"""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from PIL import Image
from playwright.sync_api import expect, sync_playwright

from annotator.review import auth, queues, scoring
from annotator.review.tables import ensure_tables
from curation.core.workspace import init_workspace
from evaluation.records import JUDGE_AXES, JudgeScores, JudgeVerdict

HERE = Path(__file__).resolve().parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
MAX_BYTES = 300_000


# Rationales the project wrote for the sample exam's lapse-rate question (blind scoring shows them
# as 응답 A/B/C); the judge scores are what an LLM judge would have recorded for them.
MODEL_RATIONALES = {
    "model-alpha": "건조 공기가 단열 상승하면 팽창하여 냉각되며, 그 비율은 $\\Gamma_d = g/c_p \\approx 9.8\\,\\mathrm{K/km}$ 이다.",
    "model-beta": "습윤단열감률과 같으므로 약 $6\\,\\mathrm{K/km}$ 이다.",
    "model-gamma": "$g/c_p$ 로 주어지며 기압과 무관하고 약 $9.8\\,^{\\circ}\\mathrm{C/km}$ 이다.",
}
JUDGE = {"model-alpha": (5, 5, 4, 5), "model-beta": (1, 2, 2, 4), "model-gamma": (5, 4, 3, 4)}


def prepare(root: Path) -> dict[str, str]:
    """The sample exam as the demo makes it: extracted from its PDF, Korea candidates tagged,
    explicit variants proposed; one draft rationale and three blind model rationales; one 〈보기〉
    question's key made a set key (as an expert would). Returns the ids of a short-answer (numeric
    key) question and of that set-key question."""

    from curation.core.revise import active_items, revise
    from curation.extract.pipeline import ExtractOptions, extract_pdf
    from curation.sample_exam import write_sample_exam
    from curation.steps.korea import KoreaLexicon, tag_korea, with_explicit_variant

    workspace = init_workspace(root)
    pdf, _ = write_sample_exam(root / "sample-exam.pdf")
    extract_pdf(pdf, workspace, ExtractOptions(exam="기상기사", session="sample-0", author="extract"))
    lexicon = KoreaLexicon()
    revise(workspace.store, active_items(workspace.store), lambda i: (tag_korea(i, lexicon), "korea lexicon"),
           stage="tag-korea", author="demo")
    revise(workspace.store, active_items(workspace.store),
           lambda i: (with_explicit_variant(i, lexicon), "explicit rules") if i.flags.korea_reasons else None,
           stage="explicit", author="demo")
    lapse = next(s.item for s in active_items(workspace.store) if "건조단열감률" in s.item.stem)
    workspace.store.update_fields(lapse.id, {"rationale": {
        "text": "건조 공기 덩이가 단열 상승하면 팽창하며 냉각된다. 이 비율 $\\Gamma_d = g/c_p$ 는 약 "
                "$9.8\\,\\mathrm{K/km}$ 로, 수증기 응결이 없으므로 습윤단열감률보다 크다.",
        "status": "draft", "author": "sample"}}, expect_rev=workspace.store.get(lapse.id).rev, author="sample",
        stage="rationale-draft", reason="draft rationale for review")
    engine = workspace.store.engine
    ensure_tables(engine)
    for name, role in (("alice", "admin"), ("bob", "expert"), ("erin", "expert"), ("carol", "annotator")):
        auth.add_user(engine, name, role, f"password-{name}")
    scoring.load_rationales(engine, [scoring.RationaleTask(lapse.id, model, text, "sample-run")
                                     for model, text in MODEL_RATIONALES.items()])
    scoring.load_judge(engine, [JudgeVerdict(item_id=lapse.id, run_id="sample-run", model=model, judge="sample-judge",
                                             rubric_version="judge-v1", status="ok",
                                             scores=JudgeScores(**dict(zip(JUDGE_AXES, values, strict=True))))
                                for model, values in JUDGE.items()])
    for task, bob, erin in zip(scoring.tasks(engine), ((5, 5, 4, 5), (1, 2, 2, 3), (4, 4, 3, 4)),
                               ((5, 4, 4, 5), (2, 2, 1, 4), (5, 4, 3, 3)), strict=True):
        for expert, values in (("bob", bob), ("erin", erin)):
            scoring.save_score(engine, task.id, expert, dict(zip(scoring.AXES, values, strict=True)), "", 0)
    item_ids = workspace.store.ids()
    queues.assign(engine, "item", ["alice", "carol"], 1)  # one reviewer an item: a save needs no decision
    for item_id in item_ids[3:5]:
        queues.record_review(engine, "item", item_id, "carol", "accept", 1)
    numeric = next(s.item for s in active_items(workspace.store) if s.item.answer_format == "numeric")
    bogi = next(s for s in active_items(workspace.store) if "〈보기〉" in s.item.stem and s.item.answer_format == "choice")
    [key] = bogi.item.answer_list()
    members = [m.strip() for m in bogi.item.options[key - 1].text.split(",")]
    workspace.store.update_fields(bogi.item.id, {"answer": {"format": "set", "members": members}}, expect_rev=bogi.rev,
                                  author="bob", stage="annotate", reason="ㄱㄴㄷ 묶음으로 채점")
    return {"numeric": numeric.id, "set": bogi.item.id}


def save(page, name: str) -> None:
    time.sleep(1.0)
    png = page.screenshot(full_page=False)
    if len(png) > MAX_BYTES:  # fewer colours keep UI shots small and sharp
        image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=128)
        buffer = io.BytesIO()
        image.save(buffer, "PNG", optimize=True)
        png = buffer.getvalue()
    (HERE / f"{name}.png").write_bytes(png)
    print(f"{name}.png {len(png) // 1024} KB")


def open_tab(page, title: str) -> None:
    page.locator(f"button[role=tab]:has-text('{title}')").click()
    time.sleep(1.0)


def open_page(page, title: str) -> None:
    """The review page ("Review") or the expert page ("Experts"), by the navbar."""
    before = page.url
    page.locator(f"a:has-text('{title}')").first.click()
    expect(page).not_to_have_url(before, timeout=30_000)
    expect(page.locator("#whoami")).to_contain_text(" · ", timeout=60_000)
    time.sleep(1.0)


def key_screens(browser, url: str, ids: dict[str, str]) -> None:  # noqa: ANN001
    """The item review at 1366×768 with a short answer's numeric key and with a set key, each
    edited in its own format's controls (an admin's view)."""
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.goto(url)
    page.locator("input[type=text]").first.fill("alice")
    page.locator("input[type=password]").fill("password-alice")
    page.get_by_role("button", name="Login").click()
    expect(page.locator("#whoami")).to_contain_text("alice", timeout=60_000)
    for kind, item_id in ids.items():
        page.locator("#item-search textarea, #item-search input").first.fill(item_id)
        page.locator("#item-find").click()
        expect(page.locator("#item-status")).to_contain_text(item_id, timeout=30_000)
        expect(page.locator("#item-key-badge .bs-key-badge")).to_be_visible(timeout=30_000)
        if kind == "numeric":
            tolerance = page.locator("#item-key-numeric-tolerance textarea, #item-key-numeric-tolerance input").first
            tolerance.fill("0.1")
            tolerance.press("Tab")
            expect(page.locator("#item-key-badge")).to_contain_text("± 0.1", timeout=30_000)
        # the key editor at the bottom of the window: the source page, the stem and the options above it
        page.evaluate("document.querySelector('#item-key').scrollIntoView({block: 'end'}); window.scrollBy(0, 12)")
        save(page, f"item-review-{kind}")
    page.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        ids = prepare(root)
        port = 7931
        server = subprocess.Popen([sys.executable, "-m", "benchsmith.cli", "annotate", "-w", str(root), "--port", str(port)])
        url = f"http://127.0.0.1:{port}/"
        try:
            for _ in range(300):
                try:
                    if httpx.get(url, timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
                page = browser.new_page(viewport={"width": 1440, "height": 1100})
                page.goto(url)
                page.locator("input[type=text]").first.fill("alice")
                page.locator("input[type=password]").fill("password-alice")
                page.get_by_role("button", name="Login").click()
                expect(page.locator("#whoami")).to_contain_text("alice", timeout=60_000)
                stem = page.locator("#item-stem textarea")
                stem.click()
                stem.press("End")
                stem.press_sequentially(" (단, $g = 9.8\\,\\mathrm{m/s^2}$)")
                expect(page.locator("#item-draft")).to_contain_text("unsaved", timeout=30_000)
                page.evaluate("window.scrollTo(0, 0)")
                save(page, "item-review")
                page.locator("#item-guidelines-box").click()
                expect(page.locator("#item-guidelines")).to_contain_text("guidelines", timeout=30_000)
                save(page, "guidelines-and-progress")
                page.locator("#item-guidelines-box").click()
                page.locator("#whoami").click()
                page.keyboard.press("Shift+Slash")
                save(page, "help-overlay")
                page.keyboard.press("Escape")
                page.locator("#item-save").click()
                expect(page.locator("#item-status")).to_contain_text("Saved as rev", timeout=30_000)
                page.locator("#item-history-box").click()
                page.locator("#item-revert-rev input").fill("1")
                page.locator("#item-revert-reason textarea").fill("단위 표기를 원문대로 되돌림")
                page.locator("#item-history-box").scroll_into_view_if_needed()
                save(page, "history-revert")
                page.evaluate("window.scrollTo(0, 0)")
                page.locator("#item-bulk-box").click()
                page.locator("#item-status-filter input").first.click()
                page.locator("ul[role=listbox] li", has_text="extracted").first.click()
                page.locator("#whoami").click()
                page.locator("#item-find").click()  # bulk acts on the queue shown: apply the filter first
                time.sleep(1.5)
                page.locator("#item-bulk-count").click()
                expect(page.locator("#item-bulk-note")).to_contain_text("items match", timeout=30_000)
                save(page, "bulk-actions")
                page.locator("#item-bulk-box").click()
                open_tab(page, "Korea-specific")
                variant = page.locator("#korea-explicit_variant textarea")
                variant.click()
                variant.press("End")
                variant.press_sequentially(" (검토)")
                expect(page.locator("#korea-draft")).to_contain_text("unsaved", timeout=30_000)
                page.locator("#korea-reason textarea").fill("영동 지방의 지형을 알아야 풀 수 있음")
                save(page, "korea-review")
                open_tab(page, "Rationale review")
                box = page.locator("#rationale-rationale-text textarea")
                box.click()
                box.press("End")
                box.press_sequentially(" 습윤단열감률은 약 $6\\,\\mathrm{K/km}$ 이다.")
                expect(page.locator("#rationale-draft")).to_contain_text("unsaved", timeout=30_000)
                time.sleep(1.5)  # let the preview finish before the picture
                save(page, "rationale-review")
                open_page(page, "Experts")  # its first tab: expert scoring
                for key in ("Digit4", "Digit5", "Digit3"):
                    page.locator("#score-label-1").click()
                    page.keyboard.press(key)
                save(page, "expert-scoring")
                open_tab(page, "Admin")
                expect(page.locator("#admin-users")).to_contain_text("carol", timeout=30_000)
                save(page, "admin")
                open_tab(page, "Stats")
                page.locator("#stats-refresh").click()
                time.sleep(1.0)
                save(page, "stats")
                key_screens(browser, url, ids)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
