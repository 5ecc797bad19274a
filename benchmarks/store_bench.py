"""Store speed on SQLite: bulk import, random reads, compare-and-swap updates, stats.

Targets (issue 2): import >= 5,000 items/s on 70,000 items; random read by id p95 < 5 ms;
1,000 CAS updates (per-update time); `items stats` on 70k < 1 s. The baseline, run side
by side on the same rows, is bare sqlite3 (executemany of the same JSON, primary-key
SELECT): the floor that no validation, revisions or indexes would cost.

    python benchmarks/store_bench.py [--items 70000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from curation.core.item import parse_item
from curation.core.workspace import init_workspace

SUBJECTS = ["기상학개론", "일기분석및예보법", "기상관측법", "대기역학", "기후학"]


def generate_records(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    records = []
    for i in range(n):
        subject = SUBJECTS[i % len(SUBJECTS)]
        records.append({
            "id": f"gen-{i:06d}",
            "source": {"exam": f"기상기사-{i % 23}", "session": f"20{i % 20:02d}-{i % 3 + 1}",
                       "subject": subject, "number": i % 100 + 1},
            "stem": f"{subject} 문항 {i}: 대기 중 {rng.randint(1, 999)} hPa 부근에서 나타나는 현상으로 옳은 것은?",
            "options": [{"text": f"선택지 {n} — {rng.random():.6f}"} for n in range(1, 5)],
            "answer": rng.randint(1, 4),
            "status": rng.choice(["extracted", "accepted", "in_review"]),
            "flags": {"korea_specific": rng.random() < 0.05},
        })
    return records


def bench_import(records: list[dict]) -> tuple[float, object]:
    root = Path(tempfile.mkdtemp()) / "ws"
    workspace = init_workspace(root)
    started = time.perf_counter()
    items = [parse_item(record) for record in records]
    workspace.store.save_items(items, author="bench", stage="import")
    return time.perf_counter() - started, workspace


def bench_import_baseline(records: list[dict]) -> float:
    path = Path(tempfile.mkdtemp()) / "bare.db"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE items (id TEXT PRIMARY KEY, data TEXT)")
    started = time.perf_counter()
    with connection:
        connection.executemany("INSERT INTO items VALUES (?, ?)",
                               ((r["id"], json.dumps(r, ensure_ascii=False)) for r in records))
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_reads(workspace, ids: list[str], n: int = 2000) -> list[float]:
    rng = random.Random(1)
    times = []
    for item_id in rng.sample(ids, n):
        started = time.perf_counter()
        workspace.store.get(item_id)
        times.append(time.perf_counter() - started)
    return times


def bench_reads_baseline(db_path: Path, ids: list[str], n: int = 2000) -> list[float]:
    rng = random.Random(1)
    connection = sqlite3.connect(db_path)
    times = []
    for item_id in rng.sample(ids, n):
        started = time.perf_counter()
        json.loads(connection.execute("SELECT data FROM items WHERE id = ?", (item_id,)).fetchone()[0])
        times.append(time.perf_counter() - started)
    return times


def bench_updates(workspace, ids: list[str], n: int = 1000) -> float:
    rng = random.Random(2)
    chosen = rng.sample(ids, n)
    started = time.perf_counter()
    for k, item_id in enumerate(chosen):
        stored = workspace.store.get(item_id)
        workspace.store.update_fields(item_id, {"stem": stored.item.stem + f" (수정 {k})"},
                                      expect_rev=stored.rev, author="bench", stage="edit")
    return (time.perf_counter() - started) / n


def bench_stats(workspace) -> float:
    started = time.perf_counter()
    workspace.store.stats()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=70_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    records = generate_records(args.items)
    ids = [record["id"] for record in records]

    import_times, baseline_times, workspaces = [], [], []
    for _ in range(args.runs):
        elapsed, workspace = bench_import(records)
        import_times.append(elapsed)
        workspaces.append(workspace)
        baseline_times.append(bench_import_baseline(records))
    workspace = workspaces[-1]
    imp, base = statistics.median(import_times), statistics.median(baseline_times)
    print(f"import {args.items} items: median {imp:.2f} s = {args.items / imp:,.0f} items/s "
          f"(target >= 5,000/s); bare sqlite3 executemany {base:.2f} s; ratio {imp / base:.1f}x")

    baseline_db = Path(tempfile.mkdtemp()) / "bare.db"
    connection = sqlite3.connect(baseline_db)
    connection.execute("CREATE TABLE items (id TEXT PRIMARY KEY, data TEXT)")
    with connection:
        connection.executemany("INSERT INTO items VALUES (?, ?)",
                               ((r["id"], json.dumps(r, ensure_ascii=False)) for r in records))
    connection.close()
    reads = [percentile(bench_reads(workspace, ids), 0.95) for _ in range(args.runs)]
    reads_base = [percentile(bench_reads_baseline(baseline_db, ids), 0.95) for _ in range(args.runs)]
    p95, p95_base = statistics.median(reads), statistics.median(reads_base)
    print(f"random read by id: p95 {p95 * 1000:.2f} ms (target < 5 ms); bare sqlite3 p95 "
          f"{p95_base * 1000:.3f} ms; ratio {p95 / p95_base:.1f}x")

    per_update = statistics.median(bench_updates(workspace, ids) for _ in range(args.runs))
    print(f"compare-and-swap update (read + validate + CAS + revision): {per_update * 1000:.2f} ms per update "
          f"({1 / per_update:,.0f} updates/s)")

    stats_time = statistics.median(bench_stats(workspace) for _ in range(max(args.runs, 5)))
    print(f"items stats on {args.items} items: median {stats_time * 1000:.0f} ms (target < 1 s)")


if __name__ == "__main__":
    main()
