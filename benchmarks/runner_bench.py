"""Runner speed and robustness against the project's fault-injecting server (a separate process
on 127.0.0.1). Prints figures; asserts nothing.

    python benchmarks/runner_bench.py [--items 2000] [--concurrency 64] [--repeats 3] [--baseline-ref d2140f4] [--parts 1234]

With --baseline-ref, parts 1 and 2 also measure that commit's runner (a temporary git worktree),
each repeat alternating between the two trees in fresh subprocesses, so both see the same load.

1. 100 ms latency: the runner's wall time vs the ideal (items × 0.1 / concurrency) and vs a
   bare asyncio aiohttp client sending the same requests (target ≤ 1.15× ideal).
2. Zero latency: wall time and client CPU per item, runner vs bare client (target ≤ 2 ms).
3. kill -9 at about half way, then resume: finished requests sent again (target 0), and the
   requests the server answered twice (only those in flight at the kill can be).
4. 20% HTTP 500 and 5% malformed bodies: every item ends with an outcome, none lost.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parents[1]  # this checkout: its fault server serves both trees
REPO = Path(os.environ.get("RUNNER_BENCH_TREE") or HERE)  # the runner being measured
sys.path.insert(0, str(REPO))

from curation.core.item import parse_item  # noqa: E402
from curation.core.workspace import Workspace, init_workspace  # noqa: E402
from evaluation.backends.base import openai_content  # noqa: E402
from evaluation.models import resolve_model  # noqa: E402
from evaluation.prompts import ImageResolver, build_request, get_prompt  # noqa: E402
from evaluation.runlog import RESPONSES, read_records  # noqa: E402
from evaluation.runner import RunRequest, run_model  # noqa: E402

try:
    from evaluation.sender import SenderSettings  # noqa: E402
except ImportError:  # a --baseline-ref tree from before evaluation/executor.py was renamed
    from evaluation.executor import ExecutorSettings as SenderSettings  # noqa: E402

SUBJECTS = ("기상학", "일기분석", "기후학", "대기역학", "대기관측")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def make_items(n: int) -> list:
    items = []
    for i in range(1, n + 1):
        items.append(parse_item({
            "id": f"bench-{i:05d}",
            "source": {"exam": "벤치마크", "subject": SUBJECTS[i % 5], "number": i},
            "stem": f"{i}번 문항: 대기 중 수증기량이 {i % 7 + 1}배로 늘어날 때 이슬점 온도의 변화로 옳은 것은?",
            "options": [{"text": f"보기 {k}: 이슬점이 {k * (i % 5 + 1)}도 변한다"} for k in range(1, 5)],
            "answer": i % 4 + 1,
            "taxonomy": {"subject": SUBJECTS[i % 5]},
        }))
    return items


def new_workspace(items: list, root: Path) -> Workspace:
    ws = init_workspace(root)
    ws.store.save_items(items, author="bench", stage="bench")
    return ws


class Server:
    def __init__(self, latency: float, **rates: float):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        args = [sys.executable, "-m", "tests.fault_server", "--port", str(self.port), "--latency", str(latency)]
        for name, rate in rates.items():
            args += [f"--rate-{name}", str(rate)]
        self.process = subprocess.Popen(args, cwd=HERE, stdout=subprocess.PIPE, text=True)
        self.process.stdout.readline()  # "listening on …"
        self.url = f"http://127.0.0.1:{self.port}"

    def stats(self) -> dict:
        return httpx.get(f"{self.url}/_stats", timeout=10).json()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(10)


def timed_run(ws: Workspace, url: str, concurrency: int, **settings: float) -> tuple[float, float, dict, dict]:
    spec = resolve_model(f"openai-compatible:bench@{url}/v1")
    request = RunRequest(spec, resume=False, settings=SenderSettings(concurrency=concurrency, **settings))
    wall, cpu = time.perf_counter(), time.process_time()
    summary = run_model(ws, request)
    return time.perf_counter() - wall, time.process_time() - cpu, summary.counts, summary.stats


def bare_client(ws: Workspace, url: str, concurrency: int) -> tuple[float, float]:
    """The same requests from a plain aiohttp client under a semaphore: no cache, no log, no parsing."""
    prompt = get_prompt("standard")
    images = ImageResolver(ws.blobs)
    bodies = []
    for stored in ws.store.iter_items():
        chat = build_request(stored.item, prompt, images)
        bodies.append({"model": "bench", "messages": [{"role": m.role, "content": openai_content(m)} for m in chat.messages],
                       "temperature": 0.0, "max_tokens": 1024, "seed": 1234})

    async def main() -> None:
        import aiohttp

        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
            gate = asyncio.Semaphore(concurrency)

            async def one(body: dict) -> None:
                async with gate, session.post(f"{url}/v1/chat/completions", json=body) as response:
                    await response.json()

            await asyncio.gather(*(one(body) for body in bodies))

    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(main())
    return time.perf_counter() - wall, time.process_time() - cpu


def speed(items: list, tmp: Path, latency: float, concurrency: int, repeats: int) -> dict:
    runner_walls, runner_cpus, bare_walls, bare_cpus, execute_walls = [], [], [], [], []
    with Server(latency) as server:
        # untimed warm-up: lazy imports (aiohttp, …) are paid once per process, not by the first repeat
        warm = new_workspace(items[:concurrency], tmp / f"warm-{latency}")
        timed_run(warm, server.url, concurrency)
        bare_client(warm, server.url, concurrency)
        for repeat in range(repeats):
            ws = new_workspace(items, tmp / f"speed-{latency}-{repeat}")
            wall, cpu, counts, stats = timed_run(ws, server.url, concurrency)
            assert sum(counts.values()) == len(items), counts
            runner_walls.append(wall)
            execute_walls.append(stats["execute_s"])
            runner_cpus.append(cpu)
            wall, cpu = bare_client(ws, server.url, concurrency)
            bare_walls.append(wall)
            bare_cpus.append(cpu)
    return {"runner_wall": statistics.median(runner_walls), "runner_cpu": statistics.median(runner_cpus),
            "bare_wall": statistics.median(bare_walls), "bare_cpu": statistics.median(bare_cpus),
            "runner_walls": runner_walls, "bare_walls": bare_walls, "execute_wall": statistics.median(execute_walls)}


def kill_and_resume(items: list, tmp: Path, concurrency: int) -> dict:
    ws = new_workspace(items, tmp / "kill")
    with Server(0.1) as server:
        spec = f"openai-compatible:bench@{server.url}/v1"
        script = ("import sys; from curation.core.workspace import open_workspace; from evaluation.models import resolve_model; "
                  "from evaluation.runner import RunRequest, run_model; from evaluation.sender import SenderSettings; "
                  f"run_model(open_workspace({str(ws.root)!r}), RunRequest(resolve_model({spec!r}), "
                  f"settings=SenderSettings(concurrency={concurrency})))")
        child = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
        log: Path | None = None
        while child.poll() is None:
            log = next(ws.runs_dir.glob(f"*/{RESPONSES}"), None)
            if log is not None and len(read_records(log)) >= len(items) // 2:
                break
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        assert log is not None
        before = read_records(log)
        lines_before = sum(1 for _ in log.open(encoding="utf-8"))
        resumed = subprocess.run([sys.executable, "-c", script], cwd=REPO)
        assert resumed.returncode == 0
        new_lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()[lines_before:] if line.strip()]
        resent_finished = sum(1 for record in new_lines if record["item_id"] in before)
        stats = server.stats()
    after = read_records(log)
    return {"finished_at_kill": len(before), "resent_finished": resent_finished, "final": len(after),
            "server_duplicate_answers": stats["duplicate_answers"], "server_requests": stats["requests"]}


def faults(items: list, tmp: Path, concurrency: int) -> dict:
    ws = new_workspace(items, tmp / "faults")
    with Server(0.0, **{"500": 0.2, "malformed": 0.05}) as server:
        wall, _, counts, _ = timed_run(ws, server.url, concurrency, backoff_base_s=0.05, max_retries=6)
        stats = server.stats()
    return {"counts": counts, "lost": len(items) - sum(counts.values()), "wall": wall, "server": stats["by_result"]}


def speed_in(tree: Path, latency: float, n: int, concurrency: int) -> dict:
    """One repeat of `speed` measuring the runner of `tree`, in a fresh process."""
    args = [sys.executable, str(Path(__file__).resolve()), "--speed-json", str(latency), "--items", str(n),
            "--concurrency", str(concurrency), "--repeats", "1"]
    env = {**os.environ, "RUNNER_BENCH_TREE": str(tree), "PYTHONPATH": str(tree)}
    done = subprocess.run(args, cwd=tree, env=env, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def speed_side_by_side(trees: dict[str, Path], latency: float, n: int, concurrency: int, repeats: int) -> dict[str, dict]:
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for _ in range(repeats):
        for name, tree in trees.items():
            runs[name].append(speed_in(tree, latency, n, concurrency))
    merged = {}
    for name, results in runs.items():
        lists = {key: [value for result in results for value in result[key]] for key in ("runner_walls", "bare_walls")}
        merged[name] = {key: statistics.median(result[key] for result in results) for key in results[0]
                        if not key.endswith("walls")} | lists
    return merged


@contextlib.contextmanager
def baseline_tree(ref: str, tmp: Path) -> Iterator[Path]:
    tree = tmp / "baseline"
    subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--detach", "--quiet", str(tree), ref], check=True)
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(tree)], check=True)


def report_speed(label: str, slow: dict, fast: dict | None, n: int, ideal: float) -> None:
    print(f"  {label}runner      median {slow['runner_wall']:.2f} s ({slow['runner_wall'] / ideal:.2f}× ideal)   "
          f"runs {', '.join(f'{w:.2f}' for w in slow['runner_walls'])}; sending (after opening the run and reading the first "
          f"items) {slow['execute_wall']:.2f} s ({slow['execute_wall'] / ideal:.2f}×)")
    print(f"  {label}bare client median {slow['bare_wall']:.2f} s ({slow['bare_wall'] / ideal:.2f}× ideal)   "
          f"runs {', '.join(f'{w:.2f}' for w in slow['bare_walls'])}")
    if fast is None:
        return
    print(f"  {label}latency 0, per item wall / client CPU: runner {1000 * fast['runner_wall'] / n:.2f} ms / "
          f"{1000 * fast['runner_cpu'] / n:.2f} ms, bare client {1000 * fast['bare_wall'] / n:.2f} ms / "
          f"{1000 * fast['bare_cpu'] / n:.2f} ms (runner overhead {1000 * (fast['runner_wall'] - fast['bare_wall']) / n:.2f}"
          f" ms wall, {1000 * (fast['runner_cpu'] - fast['bare_cpu']) / n:.2f} ms CPU)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline-ref", help="also measure this commit's runner (parts 1 and 2), side by side")
    parser.add_argument("--parts", default="1234", help="which parts to run, e.g. 1 or 134 (2 comes with 1)")
    parser.add_argument("--speed-json", type=float, metavar="LATENCY", help=argparse.SUPPRESS)  # one side's repeat
    args = parser.parse_args()
    items = make_items(args.items)
    n, c = args.items, args.concurrency
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if args.speed_json is not None:
            print(json.dumps(speed(items, tmp, args.speed_json, c, args.repeats)))
            return
        ideal = n * 0.1 / c
        print(f"[latency 100 ms, {n} items, concurrency {c}] ideal {ideal:.2f} s; then latency 0  (load {load()})")
        latencies = [0.1, 0.0] if "2" in args.parts else [0.1] if "1" in args.parts else []
        if args.baseline_ref:
            with baseline_tree(args.baseline_ref, tmp) as tree:
                trees = {"": REPO, f"{args.baseline_ref}: ": tree}
                runs = [speed_side_by_side(trees, latency, n, c, args.repeats) for latency in latencies]
            results = {label: [run[label] for run in runs] for label in trees}
        else:
            results = {"": [speed(items, tmp, latency, c, args.repeats) for latency in latencies]}
        if latencies:
            for label, (slow, *fast) in results.items():
                report_speed(label, slow, fast[0] if fast else None, n, ideal)
            print(f"  (load after {load()})")
        if "3" not in args.parts:
            return
        killed = kill_and_resume(items, tmp, c)
        print(f"[kill -9 at half, resume] finished at kill {killed['finished_at_kill']}, finished requests sent again "
              f"{killed['resent_finished']}, final {killed['final']}/{n}; server answered twice "
              f"{killed['server_duplicate_answers']} (in flight at the kill, ≤ {c})")
        if "4" not in args.parts:
            return
        broken = faults(items, tmp, c)
        print(f"[20% HTTP 500 + 5% malformed] outcomes {broken['counts']}, lost {broken['lost']}, "
              f"wall {broken['wall']:.2f} s, server {broken['server']}")


if __name__ == "__main__":
    main()
