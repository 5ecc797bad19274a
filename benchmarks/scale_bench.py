"""Scale-out on this machine: many models × many items against the project's server (a separate
process on 127.0.0.1 with 100 ms latency), with the local executor (process pool) and on a
two-node Ray cluster on 127.0.0.1. Prints figures; asserts nothing but identical results.

    python benchmarks/scale_bench.py [--models 8] [--items 2000] [--concurrency 64] [--repeats 3]

1. Wall time local vs Ray and their ratio (medians). On one 2-core machine Ray will not be
   faster; what to watch is the overhead and that the results are identical.
2. Scheduling overhead per shard: empty shards (nothing to send) round-tripped through each
   executor, wall time per shard.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.runner_bench import Server, make_items  # noqa: E402
from curation.core.workspace import init_workspace  # noqa: E402
from curation.execution.executors import ProcessPoolExecutor, Shard, ShardExecutor  # noqa: E402
from curation.execution.shard_driver import drive  # noqa: E402
from evaluation.models import resolve_model  # noqa: E402
from evaluation.runner import RunRequest  # noqa: E402
from evaluation.sender import SenderSettings  # noqa: E402
from evaluation.sharded_run import run_models  # noqa: E402
from tests.ray_cluster import pin_loopback, two_node_cluster  # noqa: E402
from tests.scaleout_support import run_results  # noqa: E402


def nothing(payload: int) -> Iterator[int]:
    yield payload


def one_run(executor: ShardExecutor, items: list, root: Path, url: str, models: int, concurrency: int,
            shard_size: int) -> tuple[float, dict]:
    ws = init_workspace(root)
    ws.store.save_items(items, author="bench", stage="bench")
    # distinct model ids: distinct cache keys, so every model really sends its requests
    requests = [RunRequest(resolve_model(f"openai-compatible:bench-{m}@{url}/v1"),
                           settings=SenderSettings(concurrency=concurrency)) for m in range(models)]
    started = time.perf_counter()
    result = run_models(ws, requests, executor, shard_size=shard_size)
    wall = time.perf_counter() - started
    assert not result.failed, result.failed
    return wall, run_results(ws)


def shard_overhead(executor: ShardExecutor, shards: int) -> float:
    planned = [Shard(f"empty#{n:04d}", nothing, n, 1) for n in range(shards)]
    started = time.perf_counter()
    report = drive(executor, planned, lambda shard, value: 1, lambda shard: None)
    assert len(report.done) == shards
    return (time.perf_counter() - started) / shards


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--shard-size", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--empty-shards", type=int, default=200)
    args = parser.parse_args()
    items = make_items(args.items)
    n = args.models * args.items
    walls: dict[str, list[float]] = {"local": [], "ray": []}
    results: dict[str, dict] = {}
    overhead: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp_name, Server(0.1) as server, two_node_cluster() as address:
        tmp = Path(tmp_name)
        pin_loopback()
        from curation.execution.ray_executor import RayExecutor

        executors: dict[str, ShardExecutor] = {"local": ProcessPoolExecutor(), "ray": RayExecutor(address)}
        try:
            for repeat in range(args.repeats):
                for name, executor in executors.items():
                    wall, records = one_run(executor, items, tmp / f"{name}-{repeat}", server.url, args.models,
                                            args.concurrency, args.shard_size)
                    walls[name].append(wall)
                    results.setdefault(name, records)
            for name, executor in executors.items():
                shard_overhead(executor, 4)  # warm the workers
                overhead[name] = shard_overhead(executor, args.empty_shards)
        finally:
            for executor in executors.values():
                executor.close()
    ideal = n * 0.1 / (args.concurrency * 2)  # two shards in flight at a time (two CPUs)
    local, ray = statistics.median(walls["local"]), statistics.median(walls["ray"])
    print(f"[{args.models} models × {args.items} items, latency 100 ms, concurrency {args.concurrency} per shard, "
          f"shards of {args.shard_size}, 2 in flight] ideal {ideal:.2f} s")
    print(f"  local (process pool) median {local:.2f} s   runs {', '.join(f'{w:.2f}' for w in walls['local'])}")
    print(f"  ray (2 nodes × 1 CPU) median {ray:.2f} s   runs {', '.join(f'{w:.2f}' for w in walls['ray'])}")
    print(f"  ratio ray / local {ray / local:.2f}; identical results: {results['local'] == results['ray']} "
          f"({sum(len(r) for r in results['ray'].values())} records)")
    print(f"[scheduling overhead, {args.empty_shards} empty shards] per shard: "
          f"local {1000 * overhead['local']:.1f} ms, ray {1000 * overhead['ray']:.1f} ms")


if __name__ == "__main__":
    main()
