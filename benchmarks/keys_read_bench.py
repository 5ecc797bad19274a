"""`benchsmith keys read` on the 2025 CSAT English answer key (two pages, no text layer: vector
outlines read by OCR), timed from the command's start to its exit: the median of several runs,
wall clock and CPU (the command and its children), and whether the odd form matches the gold key.

    python benchmarks/keys_read_bench.py [--runs 3] [--key PATH] [--gold PATH]

Tesseract runs with OMP_THREAD_LIMIT=1. Without ../shared/realdata the generated outlines key
table (`benchsmith keys sample --render outlines`) is timed instead.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REAL = REPO.parent / "shared" / "realdata" / "ksat2025_english"
if not REAL.is_dir():
    REAL = Path("/work/shared/realdata/ksat2025_english")


def run_once(key: Path) -> tuple[float, float, dict]:
    env = {**os.environ, "OMP_THREAD_LIMIT": "1", "PYTHONPATH": str(REPO)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "benchsmith.cli", "keys", "read", str(key), "--json"],
                          capture_output=True, text=True, env=env, cwd=REPO)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"keys read failed: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--key", type=Path, default=REAL / "2025_english_answerkey.pdf")
    parser.add_argument("--gold", type=Path, default=REAL / "english_answers_gold.json")
    args = parser.parse_args()
    key, gold = args.key, args.gold
    if not key.is_file():
        sys.path.insert(0, str(REPO))
        from curation.sample_exam.key_table import write_key_table

        key = write_key_table(Path(tempfile.mkdtemp()) / "key-outlines.pdf", render="outlines")[0]
        gold = None
        print(f"{args.key} is not here: timing the generated outlines key table instead")
    results = [run_once(key) for _ in range(args.runs)]
    walls = [wall for wall, _, _ in results]
    cpus = [cpu for _, cpu, _ in results]
    sheet = results[-1][2]
    keys = sum(len(section["keys"]) for form in sheet["forms"] for section in form["sections"])
    print(f"keys read {key.name}: {len(sheet['forms'])} forms, {keys} keys")
    print(f"  wall, start to exit: median {statistics.median(walls):.2f} s  (runs: {', '.join(f'{w:.2f}' for w in walls)})")
    print(f"  CPU (command + Tesseract): median {statistics.median(cpus):.2f} s")
    if gold is not None and gold.is_file():
        expected = {int(n): a for n, a in json.loads(gold.read_text(encoding="utf-8"))["answers"].items()}
        first = {k["number"]: k["answer"] for section in sheet["forms"][0]["sections"] for k in section["keys"]}
        right = sum(1 for number, answer in expected.items() if first.get(number) == answer)
        print(f"  form {sheet['forms'][0]['form']}: {right}/{len(expected)} answers match the gold key")


if __name__ == "__main__":
    main()
