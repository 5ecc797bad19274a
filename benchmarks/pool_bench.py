"""The whole pipeline on a pool the size of a user's Q-Net collection, as a user runs it.

A generated 65,000-item pool shaped like Q-Net CSVs (benchmarks/qnet_pool.py: 30 exams,
templated stems, shared option sets, reuse across sessions, 10% image rows) goes through the
CLI, one `benchsmith` process per stage: import → dedup → shuffle → tag korea → tag taxonomy
→ three baseline runs → filter adversarial → release build → evaluate the release. Printed
per stage: wall time, CPU time (user + system of the process and its workers: the figure a
shared machine disturbs least) and peak memory (ru_maxrss); then the chain's totals against
the target (5 minutes on 2 cores).

    python benchmarks/pool_bench.py [--items 65000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.qnet_pool import generate_records, write_qnet_csvs  # noqa: E402

BASELINES = ("baseline:longest", "baseline:similar", "baseline:position-1")
RELEASE_CONFIG = "statuses: [extracted, in_review, accepted]\nconfigs: [full, hard, korea_specific]\n"


BENCHSMITH = str(Path(sys.executable).with_name("benchsmith"))


def run_stage(name: str, args: list[str], log: Path) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds, peak MiB, last output line) of one `benchsmith` process."""
    with (log / f"{name}.out").open("w+") as out, (log / f"{name}.err").open("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen([BENCHSMITH, *args], stdout=out, stderr=err,
                                   env={**os.environ, "BENCHSMITH_USER": "bench"})
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        lines = [line for line in out.read().splitlines() if line.strip()] or err.read().strip().splitlines()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: import reports the rows it refused
        raise SystemExit(f"{name} failed ({code}): see {log / name}.err")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, (lines[-1] if lines else "")[:150]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=65_000)
    parser.add_argument("--keep", type=Path, help="build the workspace here and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="pool-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    files = write_qnet_csvs(generate_records(args.items), root / "csv")
    ws = root / "ws"
    shutil.rmtree(ws, ignore_errors=True)
    (root / "release.yaml").write_text(RELEASE_CONFIG, encoding="utf-8")
    subprocess.run([BENCHSMITH, "init", str(ws)], check=True, capture_output=True)
    w = ["-w", str(ws)]
    stages = [
        ("import", ["items", "import", *map(str, files), *w]),
        ("dedup", ["dedup", *w]),
        ("shuffle", ["shuffle", "--seed", "2026", *w]),
        ("tag korea", ["tag", "korea", *w]),
        ("tag taxonomy", ["tag", "taxonomy", *w]),
        *((f"run {spec}", ["run", "-m", spec, *w]) for spec in BASELINES),
        ("filter adversarial", ["filter", "adversarial", *(x for spec in BASELINES for x in ("-m", spec)), *w]),
        ("release build", ["release", "build", "--version", "1.0.0", "--config", str(root / "release.yaml"), *w]),
        ("evaluate release", ["evaluate", "--release", f"{ws}/releases/v1.0.0:full", "-m", BASELINES[0], *w]),
    ]
    print(f"{args.items} generated items in {len(files)} Q-Net CSV files; machine: {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    total = total_cpu = 0.0
    for name, stage_args in stages:
        wall, cpu, peak, line = run_stage(name, stage_args, root)
        total, total_cpu = total + wall, total_cpu + cpu
        print(f"{name:<22} {wall:7.1f} s wall {cpu:7.1f} s CPU  peak {peak:6.0f} MiB   {line}", flush=True)
    print(f"{'whole chain':<22} {total:7.1f} s wall {total_cpu:7.1f} s CPU  (target <= 300 s on 2 cores); "
          f"load average {os.getloadavg()[0]:.1f} at end")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
