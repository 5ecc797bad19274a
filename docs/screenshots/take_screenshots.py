"""Screenshots of each annotator queue with the sample content (one PNG per queue here).

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

from annotator import auth, queues, scoring
from annotator.sample import load_sample, write_scoring_files
from curation.workspace import init_workspace

HERE = Path(__file__).resolve().parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
MAX_BYTES = 300_000


def prepare(root: Path) -> None:
    workspace = init_workspace(root)
    load_sample(workspace)
    engine = workspace.store.engine
    for name, role in (("alice", "admin"), ("bob", "expert"), ("erin", "expert"), ("carol", "annotator")):
        auth.add_user(engine, name, role, f"password-{name}")
    rationales, judge = write_scoring_files(root)
    scoring.load_rationales(engine, rationales)
    scoring.load_judge(engine, judge)
    for task, bob, erin in zip(scoring.tasks(engine), ((5, 5, 4, 5), (1, 2, 2, 3), (4, 4, 3, 4)),
                               ((5, 4, 4, 5), (2, 2, 1, 4), (5, 4, 3, 3)), strict=True):
        for expert, values in (("bob", bob), ("erin", erin)):
            scoring.save_score(engine, task.id, expert, dict(zip(scoring.AXES, values, strict=True)), "", 0)
    queues.assign(engine, "item", ["alice", "carol"], 2)
    for item_id in ("sample-004", "sample-005"):
        queues.record_review(engine, "item", item_id, "carol", "accept", 1)


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


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        prepare(root)
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
                open_tab(page, "Korea-specific")
                variant = page.locator("#korea-explicit_variant textarea")
                variant.click()
                variant.press_sequentially("한국의 동해안에서 겨울철 북동기류에 의해 많은 눈이 내리는 주된 원인은?")
                expect(page.locator("#korea-draft")).to_contain_text("unsaved", timeout=30_000)
                save(page, "korea-review")
                open_tab(page, "Rationale review")
                box = page.locator("#rationale-rationale-text textarea")
                box.click()
                box.press("End")
                box.press_sequentially(" 습윤단열감률은 약 $6\\,\\mathrm{K/km}$ 이다.")
                expect(page.locator("#rationale-draft")).to_contain_text("unsaved", timeout=30_000)
                time.sleep(1.5)  # let the preview finish before the picture
                save(page, "rationale-review")
                open_tab(page, "Expert scoring")
                for key in ("Digit4", "Digit5", "Digit3"):
                    page.locator("#score-label").click()
                    page.keyboard.press(key)
                save(page, "expert-scoring")
                open_tab(page, "Stats")
                page.locator("#stats-refresh").click()
                time.sleep(1.0)
                save(page, "stats")
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
