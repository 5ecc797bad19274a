"""`benchsmith extract` from start to exit: a 40-page text-layer exam with glyph pictures (the
sample exam's `glyphs` variant, 21 distinct pictures Tesseract reads, then the plain sample exam
nine times), extracted by the CLI as a subprocess into a fresh workspace each run. Prints the
median pages per second (wall clock) beside a baseline commit's CLI, run alternately in the same
invocation, and their ratio.

    python benchmarks/extract_startup_bench.py [--runs 5] [--baseline-ref d2140f4]

The baseline is checked out into a temporary git worktree and run with `python -m benchsmith.cli`
from there (PYTHONPATH set to it). Both trees get their bytecode cached by one untimed run first,
as an installed package has it (PYTHONDONTWRITEBYTECODE is unset for the runs). Wall time counts
everything a person waits for (imports, Tesseract processes, the store write), so a busy machine
slows both sides: the load average is printed with the figures, and the CPU seconds of each run
(the CLI and its Tesseract processes), which load distorts less.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pymupdf  # noqa: E402

from curation.sample_exam import write_sample_exam  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
TARGET = 20.0  # pages per second, start to exit


def glyph_exam(folder: Path) -> Path:
    """40 pages: the glyph-picture variant (4 pages) then the plain sample exam 9 times."""
    glyphs, _ = write_sample_exam(folder / "glyphs.pdf", glyph_pictures=True)
    plain, _ = write_sample_exam(folder / "plain.pdf")
    doc = pymupdf.open(glyphs)
    for _ in range(9):
        doc.insert_pdf(pymupdf.open(plain))
    out = folder / "exam40.pdf"
    doc.save(out)
    return out


class Tree:
    """A source tree whose CLI is run as `python -m benchsmith.cli` with that tree first on the path."""

    def __init__(self, root: Path, label: str, scratch: Path):
        self.root, self.label = root, label
        self.env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        self.env["PYTHONPATH"] = str(root)
        self.workspace = scratch / f"ws-{label}"
        loaded = self.cli("-c", "import curation; print(curation.__file__)", module=False).stdout.strip()
        if not loaded.startswith(str(root)):
            raise SystemExit(f"{label}: curation loads from {loaded}, not from {root}")
        self.cli("init", str(self.workspace))  # copied fresh for every run

    def cli(self, *args: str, module: bool = True) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "benchsmith.cli", *args] if module else [sys.executable, *args]
        return subprocess.run(command, cwd=self.root, env=self.env, capture_output=True, text=True, check=True)

    def extract_seconds(self, pdf: Path, scratch: Path) -> tuple[float, float]:
        """(wall, CPU) seconds of one `benchsmith extract` into a fresh workspace, Tesseract included."""
        fresh = scratch / f"run-{self.label}"
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(self.workspace, fresh)
        cpu, started = _children_cpu(), time.perf_counter()
        self.cli("extract", str(pdf), "-w", str(fresh))
        return time.perf_counter() - started, _children_cpu() - cpu


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline-ref", default="d2140f4")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchsmith-startup-") as folder:
        scratch = Path(folder)
        pdf = glyph_exam(scratch)
        pages = pymupdf.open(pdf).page_count
        checkout = scratch / "baseline"
        subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--detach", str(checkout), args.baseline_ref],
                       check=True, capture_output=True)
        try:
            trees = [Tree(HERE, "now", scratch), Tree(checkout, "baseline", scratch)]
            for tree in trees:
                tree.extract_seconds(pdf, scratch)  # bytecode cached, files in the page cache
            times: dict[str, list[tuple[float, float]]] = {tree.label: [] for tree in trees}
            for _ in range(args.runs):  # alternately, so both see the same machine load
                for tree in trees:
                    times[tree.label].append(tree.extract_seconds(pdf, scratch))
        finally:
            subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(checkout)], check=False)
    seconds = {label: statistics.median(wall for wall, _ in runs) for label, runs in times.items()}
    cpu = {label: statistics.median(used for _, used in runs) for label, runs in times.items()}
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"benchsmith extract, {pages}-page exam with glyph pictures, start to exit, median of {args.runs} "
          f"(load average {load} on {os.cpu_count()} cores)")
    for label, name in (("now", "this tree"), ("baseline", f"commit {args.baseline_ref}")):
        print(f"  {name:<16} {seconds[label]:6.2f} s  {pages / seconds[label]:6.1f} pages/s   "
              f"(CPU {cpu[label]:.2f} s, Tesseract included)")
    rate = pages / seconds["now"]
    print(f"  ratio {seconds['baseline'] / seconds['now']:.2f}x; target ≥ {TARGET:.0f} pages/s: "
          f"{'met' if rate >= TARGET else 'NOT met'}")

if __name__ == "__main__":
    main()
