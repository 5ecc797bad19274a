"""What a person waits for at the prompt: `benchsmith --help` and a few light commands, from start
to exit, as subprocesses. Prints medians; asserts nothing. The baseline is the bare interpreter
start (`python -c pass`), run side by side.

    python benchmarks/cli_bench.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time


def timed(args: list[str], repeats: int) -> float:
    walls = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(args, capture_output=True, check=False)
        walls.append(time.perf_counter() - started)
    return statistics.median(walls)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "benchsmith.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([*cli, "init", f"{tmp}/ws"], capture_output=True, check=True)
        cases = {
            "python -c pass (baseline)": [sys.executable, "-c", "pass"],
            "benchsmith --help": [*cli, "--help"],
            "benchsmith run --help": [*cli, "run", "--help"],
            "benchsmith items stats (empty workspace)": [*cli, "items", "stats", "-w", f"{tmp}/ws"],
        }
        baseline = None
        for name, command in cases.items():
            wall = timed(command, args.repeats)
            baseline = baseline or wall
            print(f"{name:45s} median {wall * 1000:7.0f} ms  ({wall / baseline:.1f}× the bare interpreter)")


if __name__ == "__main__":
    main()
