"""Dedup speed: the exact K-MetBench rule (difflib ratio >= 0.6, earlier item first, within exam).

Side by side on the same items, medians of --runs:
  ours      `dedup_items` (exact copies grouped, compact-alphabet rapidfuzz prefilter,
            difflib verification in 2 processes, stems, antonyms, clusters)
  baseline  the straightforward script: rapidfuzz `cdist(fuzz.ratio, cutoff 60)` per exam,
            then difflib on every candidate (one run: it is the slow side)
(1) the 1,460 real Q-Net items (../shared/realdata/qnet_csv), plus plain all-pairs difflib;
(2) a generated 65,000-item Q-Net-shaped pool (benchmarks/qnet_pool.py; target <= 60 s).
Each line says whether the pair sets are equal (they must be).

    python benchmarks/dedup_bench.py [--items 65000] [--runs 3] [--skip-real] [--skip-baseline]
"""

from __future__ import annotations

import argparse
import difflib
import os
import resource
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz, process

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.qnet_pool import generate_records  # noqa: E402
from curation.core.item import Item, parse_item  # noqa: E402
from curation.importers import import_file  # noqa: E402
from curation.steps.canonical import canonical_item  # noqa: E402
from curation.steps.dedup import DedupConfig, all_pairs_difflib, dedup_items, pool_order_key  # noqa: E402

REALDATA = REPO.parent / "shared" / "realdata"


def by_exam(items: list[Item]) -> list[list[Item]]:
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in sorted(items, key=pool_order_key):
        groups[item.source.exam].append(item)
    return list(groups.values())


def baseline_pairs(items: list[Item], workers: int = 2) -> set[tuple[str, str]]:
    """The straightforward script: rapidfuzz prefilter over each exam, difflib on the candidates."""
    found = set()
    for members in by_exam(items):
        texts = [canonical_item(item) for item in members]
        scores = process.cdist(texts, texts, scorer=fuzz.ratio, score_cutoff=60, dtype=np.uint8, workers=workers)
        for i, j in zip(*np.nonzero(np.triu(scores, k=1)), strict=True):
            if difflib.SequenceMatcher(None, texts[i], texts[j]).ratio() >= 0.6:
                found.add((members[i].id, members[j].id))
    return found


def ours(items: list[Item]) -> set[tuple[str, str]]:
    result = dedup_items(items, DedupConfig(stem_gate=0, workers=2))
    return {(pair.first, pair.second) for pair in result.pairs if not pair.cross_scope}


def _cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def timed(function, *args, runs: int = 1):  # noqa: ANN001, ANN201
    """(median wall s, median CPU s incl. threads and worker processes, value)."""
    times, cpus, value = [], [], None
    for _ in range(runs):
        started, cpu = time.perf_counter(), _cpu()
        value = function(*args)
        times.append(time.perf_counter() - started)
        cpus.append(_cpu() - cpu)
    return statistics.median(times), statistics.median(cpus), value


def compare(label: str, items: list[Item], runs: int, skip_baseline: bool, extra: str = "") -> None:
    mine_s, mine_cpu, mine = timed(ours, items, runs=runs)
    line = f"{label}: ours median {mine_s:.2f} s wall, {mine_cpu:.2f} s CPU ({len(mine)} pairs)"
    if not skip_baseline:
        base_s, base_cpu, base = timed(baseline_pairs, items)
        line += (f"; baseline rapidfuzz+difflib script {base_s:.2f} s wall, {base_cpu:.2f} s CPU ({len(base)} pairs); "
                 f"speed-up {base_s / mine_s:.1f}x wall, {base_cpu / mine_cpu:.1f}x CPU; sets equal: {base == mine}")
    print(line + extra, flush=True)


def bench_real(runs: int, skip_baseline: bool) -> None:
    folder = REALDATA / "qnet_csv"
    if not folder.is_dir():
        print("(1) skipped: ../shared/realdata/qnet_csv is not present")
        return
    workspace = init_workspace_tmp()
    for path in sorted(folder.glob("*.csv")):
        import_file(path, workspace.store)
    items = [stored.item for stored in workspace.store.iter_items()]
    started = time.perf_counter()
    reference = set()
    for members in by_exam(items):
        texts = [canonical_item(item) for item in members]
        reference |= {(members[i].id, members[j].id) for i, j in all_pairs_difflib(texts, 0.6)}
    brute = time.perf_counter() - started
    mine_pairs = ours(items)
    compare(f"(1) {len(items)} real items", items, runs, skip_baseline,
            f"; all-pairs difflib {brute:.1f} s ({len(reference)} pairs), equal to ours: {reference == mine_pairs}")


def init_workspace_tmp():  # noqa: ANN201
    from curation.core.workspace import init_workspace

    return init_workspace(Path(tempfile.mkdtemp()) / "ws")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=65_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--skip-baseline", action="store_true")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (shared: CPU time is the steadier figure)")
    if not args.skip_real:
        bench_real(args.runs, args.skip_baseline)
    items = [parse_item(record) for record in generate_records(args.items)]
    compare(f"(2) {len(items)} generated Q-Net-shaped items, 30 exams, 2 workers (target <= 60 s)", items, args.runs,
            args.skip_baseline)


if __name__ == "__main__":
    main()
