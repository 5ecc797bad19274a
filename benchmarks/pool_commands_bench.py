"""The pool commands a maintainer waits for, on the 65k generated pool, beside a baseline commit.

Builds (or reuses, `--pool DIR`) a workspace with the generated 65,000-item pool through
import → dedup → shuffle → tag → three baseline runs, with the baseline commit's code, then runs
each command from start to exit as a `benchsmith` process with this tree and with the baseline
commit (a temporary `git worktree`), alternating, each on its own copy of the workspace:

- `run -m baseline:longest` with every answer already logged (a resumed run);
- `run -m baseline:shortest --no-cache` answered from scratch;
- `filter adversarial` with the three logged runs;
- `report` of the three runs (no charts);
- `release build` (full + hard + korea_specific).

Printed: median wall, CPU and peak memory of each, and the ratio baseline / this tree.

    python benchmarks/pool_commands_bench.py [--baseline-ref d2140f4] [--repeats 3] [--base-repeats 1] [--pool DIR]
        [--only "release build" --only report ...]   (commands whose name starts so; all when left out)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINES = ("baseline:longest", "baseline:similar", "baseline:position-1")


def command(tree: Path, args: list[str], cwd: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MiB) of `benchsmith ARGS` run from `tree`'s sources."""
    env = {**os.environ, "PYTHONPATH": str(tree), "BENCHSMITH_USER": "bench"}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "benchsmith.cli", *args], cwd=cwd, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{args[:3]} failed in {tree}: {process.stderr.read().decode()[-2000:] if process.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def build_pool(tree: Path, folder: Path, items: int) -> None:
    sys.path.insert(0, str(REPO))
    from benchmarks.qnet_pool import generate_records, write_qnet_csvs

    files = write_qnet_csvs(generate_records(items), folder / "csv")
    ws = str(folder / "ws")
    (folder / "release.yaml").write_text("statuses: [extracted, in_review, accepted]\n"
                                         "configs: [full, hard, korea_specific]\n", encoding="utf-8")
    command(tree, ["init", ws], folder)
    for args in (["items", "import", *map(str, files)], ["dedup"], ["shuffle", "--seed", "2026"], ["tag", "korea"],
                 ["tag", "taxonomy"], *(["run", "-m", spec, "--no-progress"] for spec in BASELINES)):
        command(tree, [*args, "-w", ws], folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", default="d2140f4")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--base-repeats", type=int, default=1, help="the baseline's commands take minutes")
    parser.add_argument("--items", type=int, default=65_000)
    parser.add_argument("--pool", type=Path, help="a pool folder built before (with the baseline's code)")
    parser.add_argument("--only", action="append", default=[], help="run only the commands whose name starts so")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="pool-commands-"))
    base_tree = scratch / "baseline"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(base_tree), args.baseline_ref],
                   check=True, capture_output=True)
    try:
        pool = args.pool or scratch / "pool"
        if args.pool is None:
            build_pool(base_tree, pool, args.items)
        ws = pool / "ws"
        runs = sorted(p.name for p in (ws / "runs").iterdir() if (p / "manifest.json").is_file()
                      and '"kind": "store"' in (p / "manifest.json").read_text(encoding="utf-8")
                      and p.name.startswith(("baseline-longest-", "baseline-similar-", "baseline-position-1-")))
        copies = {"this tree": scratch / "ws-new", args.baseline_ref: scratch / "ws-base"}
        for copy in copies.values():
            shutil.copytree(ws, copy)
        for label, copy in copies.items():  # the one-off store migration, each tree on its own copy
            command(REPO if label == "this tree" else base_tree, ["items", "stats", "-w", str(copy)], scratch)
        # this tree's own runs of the three models, untimed: a run's id covers its decoding, which a
        # change may have made different (then the pool's runs are not this tree's runs to resume)
        for spec in BASELINES:
            command(REPO, ["run", "-m", spec, "--no-progress", "-w", str(copies["this tree"])], scratch)
        cases = {
            "run, all answered": lambda w, k: ["run", "-m", "baseline:longest", "--no-progress", "-w", w],
            "run, from scratch": lambda w, k: ["run", "-m", "baseline:shortest", "--no-cache", "--no-progress",
                                               "--run-id", f"fresh-{k}", "-w", w],
            "filter adversarial": lambda w, k: ["filter", "adversarial", *(x for s in BASELINES for x in ("-m", s)),
                                                "-w", w],
            "report (3 runs)": lambda w, k: ["report", *runs, "-o", str(scratch / f"report-{k}"), "--no-charts",
                                             "-w", w],
            "release build": lambda w, k: ["release", "build", "--version", f"9.0.{k}", "--config",
                                           str(pool / "release.yaml"), "-w", w],
        }
        print(f"{args.items} items; machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
        for name, make in cases.items():
            if args.only and not name.startswith(tuple(args.only)):
                continue
            figures: dict[str, list[tuple[float, float, float]]] = {label: [] for label in copies}
            for k in range(max(args.repeats, args.base_repeats)):
                for label, copy in copies.items():
                    tree = REPO if label == "this tree" else base_tree
                    if k < (args.repeats if label == "this tree" else args.base_repeats):
                        figures[label].append(command(tree, make(str(copy), k * 10 + (label != "this tree")),
                                                      scratch))
            medians = {label: [statistics.median(f[i] for f in runs_) for i in range(3)]
                       for label, runs_ in figures.items()}
            new, old = medians["this tree"], medians[args.baseline_ref]
            print(f"{name:<20} this tree {new[0]:6.1f} s wall {new[1]:6.1f} s CPU {new[2]:6.0f} MiB | "
                  f"{args.baseline_ref} {old[0]:6.1f} s {old[1]:6.1f} s {old[2]:6.0f} MiB | {old[0] / new[0]:5.1f}x",
                  flush=True)
        print(f"load average {os.getloadavg()[0]:.1f} at end")
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base_tree)], capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
