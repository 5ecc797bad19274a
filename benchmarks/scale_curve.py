"""How the pool chain grows with the pool and the number of models, beside a bare floor.

For each pool size (the generated Q-Net pool of benchmarks/qnet_pool.py) the chain runs through
the CLI, one `benchsmith` process per stage: import → dedup, then for each model count M:
run M cheap local models (`baseline:random-N`, seeded guessers: fresh ones for every M) →
matrix build → filter adversarial (the M cached runs) → report (M runs) → release build → item
analysis (`analyze items`: the 2PL fit, its bootstrap and the per-item figures).
Printed per stage: wall, CPU (user + system) and peak memory; then each stage's growth exponent
(the slope of log wall time on log items at the largest M, and on log models at the largest
pool). Beside it, in its own process, the floor: a bare pyarrow/numpy script that computes the
same per-model accuracies and the same hard set from the same logs and the store's hash column.

    python benchmarks/scale_curve.py [--items 16000,32000,65000,130000,260000] [--models 3,10,30] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.pool_bench import BENCHSMITH, run_stage  # noqa: E402
from benchmarks.qnet_pool import generate_records, write_qnet_csvs  # noqa: E402

RELEASE_CONFIG = "statuses: [extracted, in_review, accepted]\nconfigs: [full, hard]\n"
CHAIN = ("run", "matrix build", "filter adversarial", "report", "release build", "item analysis")


def floor(ws: Path, run_ids: list[str]) -> dict[str, object]:
    """Accuracy per model and the hard set (every model wrong) from the logs, with pyarrow and numpy."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    with sqlite3.connect(ws / "store.db") as conn:
        rows = conn.execute("SELECT id, content_hash FROM items WHERE status IN ('extracted', 'in_review', "
                            "'accepted')").fetchall()
    current = pa.table({"item_id": [r[0] for r in rows], "current": [r[1] for r in rows]})
    schema = pa.schema([("item_id", pa.string()), ("content_hash", pa.string()), ("outcome", pa.string())])
    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    accuracy, wrong_everywhere = {}, None
    for run_id in run_ids:
        log = pj.read_json(ws / "runs" / run_id / "responses.jsonl", parse_options=options)
        log = log.append_column("line", pa.array(np.arange(log.num_rows)))
        last = log.group_by("item_id").aggregate([("line", "max")]).rename_columns(["item_id", "line"])
        log = log.join(last, ["item_id", "line"], join_type="inner").join(current, "item_id", join_type="inner")
        log = log.filter(pc.equal(log["content_hash"], log["current"]))
        correct = pc.equal(log["outcome"], "correct")
        accuracy[run_id] = pc.mean(correct.cast(pa.float64())).as_py()
        wrong = set(log.filter(pc.equal(log["outcome"], "wrong"))["item_id"].to_pylist())
        wrong_everywhere = wrong if wrong_everywhere is None else wrong_everywhere & wrong
    return {"accuracy": accuracy, "hard": len(wrong_everywhere or ())}


def run_floor(ws: Path, run_ids: list[str], log: Path) -> tuple[float, float, float]:
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, __file__, "--floor", str(ws), *run_ids],
                               stdout=(log / "floor.out").open("w"), env={**os.environ, "PYTHONPATH": str(REPO)})
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"floor failed: see {log / 'floor.out'}")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def agrees(ws: Path, base: Path, count: int) -> str:
    """Whether the floor's accuracies and hard-set size equal the report's and the filter's."""
    import csv

    found = json.loads((base / "floor.out").read_text(encoding="utf-8"))
    with (base / f"report-{count}" / "accuracy.csv").open(encoding="utf-8") as handle:
        reported = {row["run_id"]: float(row["accuracy"]) for row in csv.DictReader(handle) if row["subset"] == "overall"}
    record = json.loads(sorted((ws / "filtering").glob("adversarial-*.json"))[-1].read_text(encoding="utf-8"))
    same = (reported == {run: round(value, 4) for run, value in found["accuracy"].items()}
            and len(record["survivors"]) == found["hard"])
    return "yes" if same else f"NO (hard {len(record['survivors'])} vs {found['hard']})"


def exponent(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log y on log x."""
    if len(points) < 2:
        return None
    xs, ys = [math.log(x) for x, _ in points], [math.log(max(y, 1e-3)) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="16000,32000,65000,130000,260000")
    parser.add_argument("--models", default="3,10,30")
    parser.add_argument("--keep", type=Path, help="build the pools here and keep them")
    parser.add_argument("--floor", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        print(json.dumps(floor(Path(args.floor[0]), args.floor[1:])))
        return
    sizes = [int(n) for n in args.items.split(",")]
    counts = [int(m) for m in args.models.split(",")]
    root = args.keep or Path(tempfile.mkdtemp(prefix="scale-curve-"))
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start; "
          f"stages: wall s / CPU s / peak MiB")
    walls: dict[tuple[str, int, int], float] = {}
    for size in sizes:
        base = root / f"pool-{size}"
        shutil.rmtree(base, ignore_errors=True)
        files = write_qnet_csvs(generate_records(size), base / "csv")
        ws = base / "ws"
        subprocess.run([BENCHSMITH, "init", str(ws)], check=True, capture_output=True)
        (base / "release.yaml").write_text(RELEASE_CONFIG, encoding="utf-8")
        w = ["-w", str(ws)]
        for name, stage in (("import", ["items", "import", *map(str, files), *w]), ("dedup", ["dedup", *w])):
            wall, cpu, peak, _ = run_stage(name, stage, base)
            print(f"{size:>7} items          {name:<19} {wall:7.1f} / {cpu:7.1f} / {peak:6.0f}", flush=True)
        for count in counts:
            models = [f"baseline:random-{count * 1000 + k}" for k in range(1, count + 1)]
            flags = [x for model in models for x in ("-m", model)]
            stages = [("run", ["run", *flags, "--no-progress", *w]), ("matrix build", None),
                      ("filter adversarial", ["filter", "adversarial", *flags, *w]), ("report", None),
                      ("release build", ["release", "build", "--version", f"1.0.{count}", "--config",
                                         str(base / "release.yaml"), *w]),
                      ("item analysis", ["analyze", "items", "--out", str(base / f"item-analysis-{count}"), *w])]
            run_ids: list[str] = []
            for name, stage in stages:
                if name == "matrix build":
                    stage = ["matrix", "build", *(x for r in run_ids for x in ("--run", r)), *w]
                elif name == "item analysis":
                    stage = [*stage, *(x for r in run_ids for x in ("--run", r))]
                elif name == "report":
                    stage = ["report", *run_ids, "-o", str(base / f"report-{count}"), "--no-charts", *w]
                wall, cpu, peak, _ = run_stage(f"{name}-{count}", stage, base)
                walls[(name, size, count)] = wall
                print(f"{size:>7} items {count:>3} models {name:<19} {wall:7.1f} / {cpu:7.1f} / {peak:6.0f}", flush=True)
                if name == "run":
                    run_ids = sorted(p.name for p in (ws / "runs").iterdir() if p.name.startswith(
                        tuple(f"baseline-random-{count * 1000 + k}-" for k in range(1, count + 1))))
            wall, cpu, peak = run_floor(ws, run_ids, base)
            walls[("floor", size, count)] = wall
            print(f"{size:>7} items {count:>3} models {'floor (pyarrow)':<19} {wall:7.1f} / {cpu:7.1f} / {peak:6.0f}"
                  f"   same figures as the chain: {agrees(ws, base, count)}", flush=True)
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print("growth exponents (target <= 1.1 for every stage but dedup):")
    for name in (*CHAIN, "floor"):
        in_items = exponent([(s, walls[(name, s, counts[-1])]) for s in sizes if (name, s, counts[-1]) in walls])
        in_models = exponent([(m, walls[(name, sizes[-1], m)]) for m in counts if (name, sizes[-1], m) in walls])
        print(f"  {name:<19} items: {'—' if in_items is None else f'{in_items:.2f}'}   "
              f"models: {'—' if in_models is None else f'{in_models:.2f}'}")
    print(f"load average {os.getloadavg()[0]:.1f} at end; peak RSS of this driver "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
