"""What a reviewer waits for, in a real Chromium: click → the new item visible, on 50,000 items.

For Next, Save, Accept, Search and Login it prints p50 and p95 of the time from the click to
the page showing the result (a fresh status stamp naming the expected item or message), timed
inside the page (page_clock.py: the click's event time to the frame that paints the change; Login,
a new page, from Python); for
Adjudicate, from the lead's Apply on a disputed overlapped item (two reviewers decided it
differently) to the status naming the decision applied and the next case shown; and
the server start time (process start → login page served). Side by side, the baseline is the
same action called in-process on the app's Reviewer (no browser, no Gradio, no HTTP): the
ratio says what the browser round trip costs on top of the work itself.

Targets (issue 15): Next p95 <= 300 ms, Save/Accept p95 <= 500 ms, start <= 5 s; (issue 25)
Adjudicate p95 <= 300 ms.

    python benchmarks/annotator_browser_bench.py [--items 50000] [--repeat 30] [--runs 3]
        [--db postgresql+psycopg://…/postgres] [--save after.json] [--before before.json]

Each run starts the server anew and drives a fresh browser session on the same store; the
figures printed are the median over runs of each run's p50 and p95, with the 1-minute load
average at the start and end of each run (the machine is shared: read figures with it).
`--before` prints a summary saved by `--save` on an earlier commit beside the new one.

With --db (an admin URL such as the one .ci/postgres.sh prints) the store is a fresh
PostgreSQL database, dropped at the end. Needs the annotator and test extras and
Debian's chromium.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from annotator_bench import free_port, generate  # noqa: E402
from page_clock import install, timed_click  # noqa: E402

from annotator.review import adjudication, auth, queues  # noqa: E402
from annotator.review.actions import Reviewer, Session  # noqa: E402
from annotator.review.queues import Filters  # noqa: E402
from annotator.review.render import PdfRenderer  # noqa: E402
from annotator.review.tables import ensure_tables  # noqa: E402

BASELINE = auth.User("baseline", "admin")
from curation.core.workspace import Workspace, init_workspace  # noqa: E402

CHROMIUM = os.environ.get("BENCHSMITH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
USER, PASSWORD = "bench", "password-bench"
# the two reviewers whose differing decisions make the adjudication cases
REVIEWERS = (auth.User("bench-r1", "annotator"), auth.User("bench-r2", "annotator"))


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def make_workspace(root: Path, items: int, db: str | None) -> tuple[Workspace, Callable[[], None]]:
    cleanup: Callable[[], None] = lambda: None  # noqa: E731
    url = None
    if db:
        from sqlalchemy import create_engine, text
        from sqlalchemy.engine import make_url

        name = f"bs_bench_{uuid.uuid4().hex[:10]}"
        admin = create_engine(db, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        url = make_url(db).set(database=name).render_as_string(hide_password=False)

        def cleanup() -> None:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()
    workspace = init_workspace(root, url)
    generated = generate(items)
    for start in range(0, len(generated), 5000):
        workspace.store.save_items(generated[start:start + 5000], author="bench", stage="import")
    ensure_tables(workspace.store.engine)
    auth.add_user(workspace.store.engine, USER, "admin", PASSWORD)
    for reviewer in REVIEWERS:
        auth.add_user(workspace.store.engine, reviewer.name, reviewer.role, PASSWORD)
    return workspace, cleanup


def disputed(workspace: Workspace, ids: list[str]) -> None:
    """Items assigned to both REVIEWERS, who decide them differently: the lead's Adjudicate queue."""
    queues.assign(workspace.store.engine, "item", [r.name for r in REVIEWERS], 2, item_ids=ids)
    reviewer = Reviewer(workspace.store, PdfRenderer(workspace.blobs))
    for item_id in ids:
        for who, decision, reason in zip(REVIEWERS, ("accept", "needs_fix"), ("", "벤치 사유"), strict=True):
            view = reviewer.save(who, Session("item", item_id, workspace.store.get(item_id).rev), decision, reason)
            assert not view.error, view.error


def case_ids(items: int, run: int, repeat: int, part: int) -> list[str]:
    """Items from the end of the store (Next, Save and Accept walk from its start): per run and part
    (0 browser, 1 baseline) their own."""
    first = items - 1 - (run * 2 + part) * repeat
    return [f"gen-{first - k:06d}" for k in range(repeat)]


def start_server(root: Path) -> tuple[subprocess.Popen, str, float]:
    import httpx

    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "benchsmith.cli", "annotate", "-w", str(root), "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    while True:
        if process.poll() is not None:
            raise RuntimeError("annotator exited during start")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return process, url, time.perf_counter() - started
        except httpx.HTTPError:
            time.sleep(0.05)


def timed(samples: list[float], action: Callable[[], None], done: Callable[[], None]) -> None:
    started = time.perf_counter()
    action()
    done()
    samples.append(time.perf_counter() - started)


def signed_in_page(browser: Any, url: str) -> tuple[Any, Any]:
    """A fresh context's page, signed in as the bench user with the first item shown, and the
    item status stamp; the page clock is installed."""
    from playwright.sync_api import expect

    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.goto(url)
    page.locator("input[type=text]").first.fill(USER)
    page.locator("input[type=password]").fill(PASSWORD)
    page.get_by_role("button", name="Login").click()
    stamp = page.locator("#item-status .bs-rev")
    expect(stamp).to_be_visible(timeout=120_000)
    install(page)
    return page, stamp


def browser_figures(url: str, repeat: int, items: int, offset: int = 0,
                    prepare_cases: Callable[[], None] = lambda: None) -> dict[str, list[float]]:
    """`offset`: how far into the store a run starts, so that runs do not redo one another's items.
    `prepare_cases`: makes the disputed items the lead adjudicates (after the other actions: the
    assignments they bring would narrow the bench user's "next unreviewed")."""
    from playwright.sync_api import expect, sync_playwright

    figures: dict[str, list[float]] = {"login": [], "next": [], "save": [], "accept": [], "search": [],
                                       "adjudicate": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _ in range(max(3, repeat // 10)):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.goto(url)
            page.locator("input[type=text]").first.fill(USER)
            page.locator("input[type=password]").fill(PASSWORD)
            login_button, signed_in = page.get_by_role("button", name="Login"), page.locator("#item-status .bs-rev")
            timed(figures["login"], login_button.click, lambda: expect(signed_in).to_be_visible(timeout=120_000))  # noqa: B023
            context.close()
        page, stamp = signed_in_page(browser, url)

        def clicked(samples: list[float], button: str, done: Callable[[], None]) -> None:
            timed_click(page, samples, page.locator(button), done, "#item-status .bs-rev")

        def shows(item_id: str, text: str = "") -> Callable[[], None]:
            before = stamp.get_attribute("data-shown")

            def wait() -> None:
                expect(stamp).not_to_have_attribute("data-shown", before or "-", timeout=60_000)
                expect(stamp).to_have_attribute("data-item", item_id, timeout=60_000)
                if text:
                    expect(page.locator("#item-status")).to_contain_text(text, timeout=60_000)
            return wait

        for _ in range(repeat):
            current = stamp.get_attribute("data-item") or ""
            expected = _next_id(current)
            clicked(figures["next"], "#item-next", shows(expected))
        stem = page.locator("#item-stem textarea").first
        for n in range(repeat):
            current = stamp.get_attribute("data-item") or ""
            stem.fill(f"벤치 수정 {n}: $x^{n}$")
            clicked(figures["save"], "#item-save", shows(current, "Saved as rev"))
            clicked(figures["accept"], "#item-accept", shows(current, "accept"))
            page.locator("#item-next").click()
            expect(stamp).not_to_have_attribute("data-item", current, timeout=60_000)
        search = page.locator("#item-search textarea, #item-search input").first
        for n in range(repeat):
            wanted = f"gen-{(n * 7919 + 123 + offset) % items:06d}"
            search.fill(wanted)
            clicked(figures["search"], "#item-find", shows(wanted))
        prepare_cases()
        adjudicate_figures(page, repeat, figures["adjudicate"])
        browser.close()
    return figures


def adjudicate_figures(page: Any, repeat: int, samples: list[float]) -> None:
    """Open the expert page and its Adjudicate tab (from the tab menu when the window folds it
    there), take the first reviewer's decision, and time Apply → the status naming it and the
    next case on screen."""
    from playwright.sync_api import expect

    page.locator("a:has-text('Experts')").first.click()
    expect(page.locator("#score-status")).to_be_attached(timeout=60_000)
    install(page)  # a new document
    shown = page.locator(".tab-container:not(.visually-hidden) button[role=tab]:has-text('Adjudicate')")
    if shown.count() and shown.first.is_visible():
        shown.first.click()
    else:
        page.locator(".overflow-menu button").first.click()
        page.locator(".overflow-dropdown button:has-text('Adjudicate')").click()
    case, status = page.locator("#adjudicate-case .bs-case"), page.locator("#adjudicate-status")
    expect(case).to_be_visible(timeout=60_000)
    for _ in range(repeat):
        item_id = case.get_attribute("data-item")
        page.locator("#adjudicate-take label").first.click()
        expect(page.locator("#adjudicate-decision input[value='accept']")).to_be_checked(timeout=60_000)

        def applied(item_id: str | None = item_id) -> None:
            # the status naming this item comes in the same response as the next case
            expect(status).to_contain_text(f"{item_id}: 승인 · Accept", timeout=60_000)
        timed_click(page, samples, page.locator("#adjudicate-apply"), applied, "#adjudicate-status", None)


def _next_id(current: str) -> str:
    prefix, _, number = current.rpartition("-")
    return f"{prefix}-{int(number) + 1:06d}"


def baseline_figures(workspace: Workspace, repeat: int, items: int, cases: list[str]) -> dict[str, list[float]]:
    """The same actions on the Reviewer in-process: the work without browser, Gradio or HTTP."""
    reviewer = Reviewer(workspace.store, PdfRenderer(workspace.blobs))
    figures: dict[str, list[float]] = {"next": [], "save": [], "accept": [], "search": [], "adjudicate": []}
    view = reviewer.open("baseline", "item", f"gen-{items // 2:06d}")
    for _ in range(repeat):
        started = time.perf_counter()
        view = reviewer.navigate("baseline", "item", Filters(), view.session.item_id, "next")
        reviewer.history(view.session.item_id or "")
        figures["next"].append(time.perf_counter() - started)
    for n in range(repeat):
        session = view.session
        started = time.perf_counter()
        synced = reviewer.sync(BASELINE, Session("item", session.item_id, session.rev), {"stem": f"기준 수정 {n}"})
        view = reviewer.save(BASELINE, synced)
        figures["save"].append(time.perf_counter() - started)
        started = time.perf_counter()
        view = reviewer.save(BASELINE, view.session, "accept")
        figures["accept"].append(time.perf_counter() - started)
        view = reviewer.navigate("baseline", "item", Filters(), view.session.item_id, "next")
    for n in range(repeat):
        started = time.perf_counter()
        reviewer.navigate("baseline", "item", Filters(search=f"gen-{(n * 104729 + 7) % items:06d}"), None, "first")
        figures["search"].append(time.perf_counter() - started)
    disputed(workspace, cases)
    for item_id in cases:
        started = time.perf_counter()
        adjudication.resolve(workspace.store, BASELINE, "item", item_id, workspace.store.get(item_id).rev, "accept")
        figures["adjudicate"].append(time.perf_counter() - started)
    return figures


def load_average() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0]) if Path("/proc/loadavg").exists() else float("nan")


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per action the median over runs of each run's p50 and p95 (seconds)."""
    actions = list(runs[0]["browser"])
    return {"start_s": statistics.median(run["start_s"] for run in runs),
            "browser": {a: [statistics.median(percentiles(run["browser"][a])[i] for run in runs) for i in (0, 1)]
                        for a in actions},
            "baseline_p50": {a: statistics.median(percentiles(run["baseline"][a])[0] for run in runs)
                             for a in runs[0]["baseline"]},
            "load": [run["load"] for run in runs]}


def report(summary: dict[str, Any], backend: str, items: int, before: dict[str, Any] | None) -> None:
    targets = {"next": 0.300, "save": 0.500, "accept": 0.500, "adjudicate": 0.300}
    runs = len(summary["load"])
    loads = ", ".join(f"{a:.1f}→{b:.1f}" for a, b in summary["load"])
    print(f"\n{backend}, {items} items: median of {runs} run(s); load average (1 min) at start→end of each: {loads}")
    was = f"   (before: {before['start_s']:.2f} s)" if before else ""
    print(f"server start (process → login page): {summary['start_s']:.2f} s   (target <= 5 s)"
          f" {'met' if summary['start_s'] <= 5 else 'MISSED'}{was}")
    print(f"{'action':<10} {'browser p50':>12} {'p95':>8} {'baseline p50':>13} {'ratio p50':>10}  {'target p95':<20}"
          + ("  before p50 / p95" if before else ""))
    for action, (p50, p95) in summary["browser"].items():
        base = summary["baseline_p50"].get(action)
        ratio = f"{p50 / base:9.1f}x" if base else f"{'—':>10}"
        target = (f"<= {targets[action] * 1000:.0f} ms {'met' if p95 <= targets[action] else 'MISSED'}"
                  if action in targets else "")
        old = before["browser"].get(action) if before else None
        print(f"{action:<10} {p50 * 1000:10.0f}ms {p95 * 1000:6.0f}ms {(base or 0) * 1000:11.1f}ms {ratio}  {target:<20}"
              + (f"  {old[0] * 1000:6.0f} / {old[1] * 1000:.0f} ms" if old else ""))
    print("baseline: the same action on the in-process Reviewer (no browser, Gradio or HTTP)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3, help="server start + browser session, repeated on one store")
    parser.add_argument("--db", help="PostgreSQL admin URL (a fresh database is made and dropped)")
    parser.add_argument("--save", type=Path, help="write the summary as JSON")
    parser.add_argument("--before", type=Path, help="a summary saved by --save (an earlier commit) to show beside")
    args = parser.parse_args()
    before = json.loads(args.before.read_text()) if args.before else None
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        t0 = time.perf_counter()
        workspace, cleanup = make_workspace(root, args.items, args.db)
        backend = "postgresql" if args.db else "sqlite"
        print(f"{backend}: {args.items} items written in {time.perf_counter() - t0:.1f} s", flush=True)
        try:
            for n in range(args.runs):
                load_before = load_average()
                process, url, start_s = start_server(root)
                try:
                    cases = case_ids(args.items, n, args.repeat, 0)
                    browser = browser_figures(url, args.repeat, args.items, offset=n * args.repeat * 2,
                                              prepare_cases=lambda: disputed(workspace, cases))  # noqa: B023
                finally:
                    process.terminate()
                    process.wait(timeout=30)
                baseline = baseline_figures(workspace, args.repeat, args.items, case_ids(args.items, n, args.repeat, 1))
                runs.append({"start_s": start_s, "browser": browser, "baseline": baseline,
                             "load": (load_before, load_average())})
                figures = ", ".join(f"{action} {percentiles(samples)[0] * 1000:.0f}/{percentiles(samples)[1] * 1000:.0f}"
                                    for action, samples in browser.items())
                print(f"run {n + 1} (load {load_before:.1f}): start {start_s:.2f} s; p50/p95 ms: {figures}", flush=True)
        finally:
            workspace.store.close()
            cleanup()
    summary = summarise(runs) | {"backend": backend, "items": args.items, "repeat": args.repeat}
    report(summary, backend, args.items, before)
    if args.save:
        args.save.write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
