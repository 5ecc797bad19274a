"""A team on one annotator server: N annotators, each with its own session, drive the real
HTTP API (Next as the page calls it, then a save through the script API: get_item + save_item)
at a human pace or non-stop, while one real Chromium user clicks Next and is timed (in the
page: page_clock.py).

Prints the browser's Next p50/p95 (target p95 <= 300 ms at a human pace), the team's actions
and HTTP errors, acknowledged saves against the revisions stored by the team (they must be
equal), the server's RSS when it has started, once the team is working (after --warmup s:
every member signed in and acting, the browser user's page loaded) and at the end (target: the
end within 50 MB of the working figure; the peak is printed too), and the 1-minute load average
at both ends (the machine may be shared: read the figures with it).

    python benchmarks/annotator_team_bench.py [--users 20] [--items 21000] [--minutes 3]
        [--pace 2.0] [--db postgresql+psycopg://…/postgres]

--pace 0 runs the team non-stop. With --db (an admin URL such as .ci/postgres.sh prints) the
store is a fresh PostgreSQL database, dropped at the end.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from annotator_browser_bench import (  # noqa: E402
    ARGS,
    CHROMIUM,
    USER,
    load_average,
    make_workspace,
    percentiles,
    signed_in_page,
    start_server,
)
from page_clock import timed_click  # noqa: E402

from annotator.review import auth, queues  # noqa: E402

TEAM_PASSWORD = "password-team-bench"
ITEM_MARK = re.compile(r'data-item=\\?"([^"\\]+)\\?" ')


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Member(threading.Thread):
    """One annotator: Next in the item queue, then a save of the item shown, `pace` s apart."""

    def __init__(self, url: str, name: str, pace: float, until: float):
        super().__init__(daemon=True)
        self.url, self.name, self.pace, self.until = url, name, pace, until
        self.actions = self.errors = self.saved = self.conflicts = 0

    def run(self) -> None:
        import httpx

        with httpx.Client(base_url=self.url, timeout=120) as client:
            if client.post("login", data={"username": self.name, "password": TEAM_PASSWORD}).status_code != 200:
                self.errors += 1
                return
            session = uuid.uuid4().hex[:11]
            while time.time() < self.until:
                try:
                    item_id = self.next(client, session)
                    self.pause()
                    if item_id and time.time() < self.until:
                        self.save(client, item_id)
                        self.pause()
                except (httpx.HTTPError, RuntimeError, ValueError):
                    self.errors += 1

    def pause(self) -> None:
        if self.pace:
            time.sleep(self.pace)

    def next(self, client, session: str) -> str | None:
        reply = client.post("gradio_api/run/item_next", json={
            "data": [None, [], "", "", "", self.name, "", "id"], "session_hash": session})
        self.actions += 1
        if reply.status_code != 200:
            raise RuntimeError(f"next: HTTP {reply.status_code}")
        found = ITEM_MARK.search(json.dumps(reply.json()["data"][1]))
        return found.group(1) if found else None

    def call(self, client, api: str, data: list) -> dict:
        event = client.post(f"gradio_api/call/{api}", json={"data": data})
        if event.status_code != 200:
            raise RuntimeError(f"{api}: HTTP {event.status_code}")
        stream = client.get(f"gradio_api/call/{api}/{event.json()['event_id']}")
        lines = stream.text.splitlines()
        if "event: complete" not in lines:
            raise RuntimeError(f"{api}: {stream.text[:200]}")
        return json.loads(lines[lines.index("event: complete") + 1].removeprefix("data: "))[0]

    def save(self, client, item_id: str) -> None:
        rev = self.call(client, "get_item", [item_id, "item"])["rev"]
        result = self.call(client, "save_item", ["item", item_id, rev, json.dumps({"stem": f"{self.name} {time.time()}"}),
                                                 "", ""])
        self.actions += 1
        if result["status"] == "saved":
            self.saved += 1
        elif result["status"] == "conflict":
            self.conflicts += 1
        else:
            raise RuntimeError(f"save_item: {result}")


class RssSampler(threading.Thread):
    """The server's RSS every 5 s: `working` is the first sample after `warm_at`."""

    def __init__(self, pid: int, warm_at: float, until: float):
        super().__init__(daemon=True)
        self.pid, self.warm_at, self.until = pid, warm_at, until
        self.seen: list[float] = []
        self.working: float | None = None

    def run(self) -> None:
        while time.time() < self.until:
            self.seen.append(rss_mb(self.pid))
            if self.working is None and time.time() >= self.warm_at:
                self.working = self.seen[-1]
            time.sleep(5)


def browser_next(url: str, until: float) -> list[float]:
    """The measured user: clicks Next about once a second until `until`; click → new item shown."""
    from playwright.sync_api import expect, sync_playwright

    samples: list[float] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page, stamp = signed_in_page(browser, url)
        while time.time() < until:
            before = stamp.get_attribute("data-shown") or "-"
            current = stamp.get_attribute("data-item") or "-"

            def shown(before: str = before, current: str = current) -> None:
                expect(stamp).not_to_have_attribute("data-shown", before, timeout=120_000)
                expect(stamp).not_to_have_attribute("data-item", current, timeout=120_000)
            timed_click(page, samples, page.locator("#item-next"), shown, "#item-status .bs-rev")
            time.sleep(1.0)
        browser.close()
    return samples


def team_saves(engine, team: list[str]) -> int:
    from sqlalchemy import func, select

    from curation.core.store import revisions_table

    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(revisions_table)
                            .where(revisions_table.c.author.in_(team))).scalar_one()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--items", type=int, default=21_000)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--pace", type=float, default=2.0, help="seconds between a member's actions (0: non-stop)")
    parser.add_argument("--warmup", type=float, default=20.0, help="seconds of team work before the working RSS")
    parser.add_argument("--db", help="PostgreSQL admin URL (a fresh database is made and dropped)")
    args = parser.parse_args()
    team = [f"annotator{n:02d}" for n in range(args.users)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        workspace, cleanup = make_workspace(root, args.items, args.db)
        backend = "postgresql" if args.db else "sqlite"
        engine = workspace.store.engine
        for name in team:
            auth.add_user(engine, name, "annotator", TEAM_PASSWORD)
        half = args.items // 2  # the team works the first half, the measured user the second
        if team:
            queues.assign(engine, "item", team, 1, item_ids=[f"gen-{n:06d}" for n in range(half)])
        queues.assign(engine, "item", [USER], 1, item_ids=[f"gen-{n:06d}" for n in range(half, args.items)])
        try:
            process, url, start_s = start_server(root)
            try:
                load_start, rss_cold = load_average(), rss_mb(process.pid)
                started = time.time()
                until = started + args.minutes * 60
                members = [Member(url, name, args.pace, until) for name in team]
                for member in members:
                    member.start()
                memory = RssSampler(process.pid, started + args.warmup, until)
                memory.start()
                samples = browser_next(url, until)
                for member in members:
                    member.join(timeout=300)
                memory.join(timeout=60)
                rss_end, load_end = rss_mb(process.pid), load_average()
            finally:
                process.terminate()
                process.wait(timeout=60)
            stored = team_saves(engine, team)
        finally:
            workspace.store.close()
            cleanup()
    p50, p95 = percentiles(samples)
    acknowledged = sum(m.saved for m in members)
    pace = f"{args.pace:g} s between actions" if args.pace else "non-stop"
    print(f"\n{backend}, {args.items} items, {args.users} users ({pace}), {args.minutes:g} min; "
          f"server start {start_s:.1f} s; load average (1 min) {load_start:.1f} → {load_end:.1f}")
    print(f"browser Next: p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, max {max(samples) * 1000:.0f} ms "
          f"over {len(samples)} clicks   (target p95 <= 300 ms) {'met' if p95 <= 0.3 else 'MISSED'}")
    print(f"team: {sum(m.actions for m in members)} actions "
          f"({sum(m.actions for m in members) / (args.minutes * 60):.1f}/s), {sum(m.errors for m in members)} errors, "
          f"{sum(m.conflicts for m in members)} conflicts")
    print(f"saves: {acknowledged} acknowledged, {stored} stored revisions by the team "
          f"{'(equal)' if acknowledged == stored else '(DIFFER)'}")
    working = memory.working or rss_end
    print(f"server RSS: {rss_cold:.0f} MB started, {working:.0f} MB working (after {args.warmup:g} s), "
          f"{rss_end:.0f} MB at end ({rss_end - working:+.0f} MB; target within 50 MB) "
          f"{'met' if abs(rss_end - working) <= 50 else 'MISSED'}; peak {max(memory.seen or [rss_end]):.0f} MB")


if __name__ == "__main__":
    main()
