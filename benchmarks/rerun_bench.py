"""A rerun after an edit asks only the edited items: requests sent and wall time against a cold run.
Prints figures; asserts nothing.

    python benchmarks/rerun_bench.py [--items 2000] [--edit 37] [--latency 0.1] [--concurrency 64] [--repeats 3]

Each repeat: a fresh workspace with the items, one model on the project's fault-injecting server
(a separate process on 127.0.0.1), a cold run, then `--edit` stems changed through the store's
compare-and-swap, then the same run again. The baseline is the cold run itself, side by side.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from runner_bench import Server, make_items, new_workspace

from evaluation.models import resolve_model
from evaluation.runner import RunRequest, run_model
from evaluation.sender import SenderSettings


def one_repeat(items: list, root: Path, url: str, edits: int, concurrency: int, server: Server) -> dict:
    ws = new_workspace(items, root)
    request = RunRequest(resolve_model(f"openai-compatible:bench@{url}/v1"),
                         settings=SenderSettings(concurrency=concurrency))
    sent_before = server.stats()["requests"]
    started = time.perf_counter()
    cold = run_model(ws, request)
    cold_s = time.perf_counter() - started
    sent_cold = server.stats()["requests"] - sent_before
    step = max(1, len(items) // edits)
    for item in items[::step][:edits]:
        stored = ws.store.get(item.id)
        ws.store.update_fields(item.id, {"stem": stored.item.stem + " (고침)"}, expect_rev=stored.rev,
                               author="bench", stage="edit", reason="benchmark edit")
    sent_before = server.stats()["requests"]
    started = time.perf_counter()
    rerun = run_model(ws, request)
    rerun_s = time.perf_counter() - started
    return {"cold_s": cold_s, "rerun_s": rerun_s, "sent_cold": sent_cold,
            "sent_rerun": server.stats()["requests"] - sent_before, "changed": rerun.stats.get("changed_since"),
            "same_run": cold.run_id == rerun.run_id}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--edit", type=int, default=37)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    items = make_items(args.items)
    results = []
    with tempfile.TemporaryDirectory() as tmp, Server(args.latency) as server:
        for repeat in range(args.repeats):
            results.append(one_repeat(items, Path(tmp) / f"ws-{repeat}", server.url, args.edit, args.concurrency, server))
    cold = statistics.median(r["cold_s"] for r in results)
    rerun = statistics.median(r["rerun_s"] for r in results)
    print(f"[{args.items} items, {args.edit} edited, latency {args.latency * 1000:.0f} ms, concurrency "
          f"{args.concurrency}, median of {args.repeats}]")
    print(f"  cold run : {cold:.2f} s, requests sent {[r['sent_cold'] for r in results]}")
    print(f"  rerun    : {rerun:.2f} s ({rerun / cold:.2f}× the cold run), requests sent "
          f"{[r['sent_rerun'] for r in results]} (must be {args.edit}), asked again because changed "
          f"{[r['changed'] for r in results]}, same run id {all(r['same_run'] for r in results)}")


if __name__ == "__main__":
    main()
