"""Annotator speed and safety with 50,000 items in a SQLite workspace.

1. "next" → item rendered, server side: the work the Next buttons do (queue query, item
   read, draft lookup, history, page/crops/previews as HTML), timed in-process on the real
   app objects, for Next, "next unreviewed for me" (after 2,000 items decided) and the
   Korea-specific queue. Then the same Next over HTTP through gradio_client against
   `benchsmith annotate` on 127.0.0.1 (round trip, includes the queue and the network stack).
   Target: server-side p95 <= 200 ms.
2. 10 concurrent clients (gradio_client, one user each) each save 100 edits to 20 shared
   items through the save_item endpoint: read, append a unique token to the stem, save on
   the revision read; on a conflict read again and retry. Lost updates = tokens of saves
   reported as saved that are missing from the final stems (target 0); conflicts reported.

    python benchmarks/annotator_bench.py [--items 50000] [--clients 10] [--saves 100]
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from annotator.review import auth, queues
from annotator.review.queues import Filters
from annotator.review.sample import load_sample
from annotator.review.tables import ensure_tables
from curation.core.item import parse_item
from curation.core.workspace import Workspace, init_workspace

SUBJECTS = ["기상학개론", "일기분석및예보법", "기상관측법", "대기역학", "기후학"]


def generate(n: int, seed: int = 11) -> list:
    rng = random.Random(seed)
    items = []
    for i in range(n):
        record = {
            "id": f"gen-{i:06d}",
            "source": {"exam": f"기상기사-{i % 23}", "session": f"20{i % 20:02d}-1", "subject": SUBJECTS[i % 5],
                       "number": i % 100 + 1},
            "stem": f"문항 {i}: 고도 {rng.randint(1, 12)} km 에서 $T = T_0 - \\Gamma z$ 일 때 옳은 것은?",
            "options": [{"text": f"보기 {k} — ${rng.random():.3f}\\,\\mathrm{{K}}$"} for k in range(1, 5)],
            "answer": rng.randint(1, 4),
        }
        if i % 50 == 0:
            record["flags"] = {"korea_reasons": ["'우리나라' — implicit country reference"]}
        items.append(parse_item(record))
    return items


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


def time_next(workspace: Workspace, user: str, n: int) -> dict[str, tuple[float, float]]:
    import gradio as gr

    from annotator.review.actions import Reviewer
    from annotator.review.render import PdfRenderer
    from annotator.review.score_desk import ScoreDesk
    from annotator.screens.app import AppContext, build_item_queue_tab, filter_choices

    renderer = PdfRenderer(workspace.blobs)
    ctx = AppContext(workspace, Reviewer(workspace.store, renderer), ScoreDesk(workspace.store), renderer, False)
    with gr.Blocks():
        choices = filter_choices(workspace.store.engine)
        tabs = {queue: build_item_queue_tab(ctx, queue, [user], choices) for queue in ("item", "korea")}
    results = {}
    for label, queue, how in (("next (item)", "item", "next"), ("next unreviewed for me", "item", "unreviewed"),
                              ("next (korea-specific)", "korea", "next")):
        tab, current, samples = tabs[queue], None, []
        for _ in range(n):
            started = time.perf_counter()
            view = ctx.reviewer.navigate(user, queue, Filters(), current, how)  # type: ignore[arg-type]
            tab.render(view, user)
            samples.append((time.perf_counter() - started) * 1000)
            current = view.session.item_id
            if how == "unreviewed" and current:
                queues.record_review(workspace.store.engine, "item", current, user, "accept", view.session.rev or 1)
        results[label] = (statistics.median(samples), p95(samples))
    return results


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(root: Path) -> tuple[subprocess.Popen, str]:
    import httpx

    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "benchsmith.cli", "annotate", "-w", str(root), "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    for _ in range(600):
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.terminate()
    raise SystemExit("the annotator did not start")


def time_http_next(url: str, user: str, n: int) -> tuple[float, float]:
    from gradio_client import Client

    client = Client(url, auth=(user, f"password-{user}"), verbose=False)
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        client.predict([], "", "", "", "", "", api_name="/item_next")
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), p95(samples)


def concurrent_saves(url: str, users: list[str], saves: int, pool: list[str]) -> dict:
    from gradio_client import Client

    saved: list[tuple[str, str, int]] = []
    conflicts = [0] * len(users)
    errors: list[str] = []
    lock = threading.Lock()

    def worker(index: int, user: str) -> None:
        client = Client(url, auth=(user, f"password-{user}"), verbose=False)
        rng = random.Random(index)
        for k in range(saves):
            item_id = rng.choice(pool)
            token = f"[{user}#{k}]"
            for _attempt in range(100):
                current = client.predict(item_id, api_name="/get_item")
                stem = current["item"]["stem"] + " " + token
                result = client.predict("item", item_id, current["rev"], json.dumps({"stem": stem}), "", "",
                                        api_name="/save_item")
                if result["status"] == "saved":
                    with lock:
                        saved.append((item_id, token, result["rev"]))
                    break
                if result["status"] != "conflict":
                    errors.append(f"{user}: {result}")
                    break
                conflicts[index] += 1

    threads = [threading.Thread(target=worker, args=(i, u)) for i, u in enumerate(users)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"saved": saved, "conflicts": sum(conflicts), "errors": errors, "seconds": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--saves", type=int, default=100)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        workspace = init_workspace(root)
        ensure_tables(workspace.store.engine)
        started = time.perf_counter()
        load_sample(workspace)
        workspace.store.save_items(generate(args.items), author="bench", stage="import")
        print(f"store: {workspace.store.count()} items written in {time.perf_counter() - started:.1f} s")
        users = [f"bench{n:02d}" for n in range(args.clients)]
        for user in users:
            auth.add_user(workspace.store.engine, user, "annotator", f"password-{user}")
        engine = workspace.store.engine
        for item_id in workspace.store.ids()[:2000]:
            queues.record_review(engine, "item", item_id, users[0], "accept", 1)
        print(f"\nserver-side, in-process ({args.samples} moves each): median / p95 ms")
        for label, (median, high) in time_next(workspace, users[0], args.samples).items():
            print(f"  {label:<26} {median:7.1f} / {high:7.1f}")
        process, url = start_server(root)
        try:
            median, high = time_http_next(url, users[1], args.samples)
            print(f"  {'next over HTTP (client)':<26} {median:7.1f} / {high:7.1f}   (gradio_client round trip)")
            pool = [f"gen-{i:06d}" for i in range(1, 41, 2)]
            result = concurrent_saves(url, users, args.saves, pool)
        finally:
            process.terminate()
            process.wait(timeout=30)
        final = {item_id: workspace.store.get(item_id).item.stem for item_id in pool}
        lost = [token for item_id, token, _ in result["saved"] if token not in final[item_id]]
        revisions = sum(1 for item_id in pool for r in workspace.store.history(item_id) if r.stage == "annotate")
        print(f"\n{args.clients} clients × {args.saves} saves on {len(pool)} shared items in {result['seconds']:.1f} s:")
        print(f"  saved {len(result['saved'])}, annotate revisions {revisions}, conflicts reported {result['conflicts']}, "
              f"lost updates {len(lost)}, errors {len(result['errors'])}")
        for error in result["errors"][:5]:
            print("  error:", error)


if __name__ == "__main__":
    main()
