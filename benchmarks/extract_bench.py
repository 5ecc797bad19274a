"""Extraction speed: pages per second on the born-digital path (text layer, segmentation, figure
crops, item validation, and the store write), on watermark-only pages (the blank fast path) and
on the OCR path. Prints the median of several runs beside a named baseline run and the targets.

The store-write target is for exam-length documents (the 40-page exam). Every run into a fresh
workspace also pays a one-off cost (opening the store, compiling its statements, loading fonts,
the Korea stage's transaction): the 4-page sample exam's line includes it, and the last line
splits the store-write figures into that one-off cost and the cost per page.

    taskset -c 0 python benchmarks/extract_bench.py [--runs 7] [--ocr-runs 1]
        [--baseline-ref a516978 | --baseline benchmarks/baselines/extract_a516978.json] [--save results.json]

Rates are pages per CPU-second (this process plus Tesseract), so a shared machine's load does not
distort them; on an idle core they equal pages per second. Inputs: the generated sample exam (normal and interleaved stream, a scanned copy for OCR, and a
copy with three watermark-only picture pages appended), and the 2025 CSAT English booklet from
../shared/realdata when it is there. Tesseract runs with OMP_THREAD_LIMIT=1. `--baseline-ref REF`
measures the same inputs with the code of git commit REF (exported to a temporary folder, run in a
subprocess right before this run, so both see the same machine load); without it the figures of
a saved baseline file are shown (written by `--save` on commit a516978, before the blank-page fast
path and the vectorised ring finder).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pymupdf  # noqa: E402

from curation.core.workspace import init_workspace  # noqa: E402
from curation.extract import ocr  # noqa: E402
from curation.extract.pipeline import ExtractOptions, extract_items, extract_pdf  # noqa: E402
from curation.sample_exam import write_sample_exam  # noqa: E402

HERE = Path(__file__).resolve().parent
REALDATA = [HERE.parent / ".." / "shared" / "realdata", Path("/work/shared/realdata")]
DEFAULT_BASELINE = HERE / "baselines" / "extract_a516978.json"
TARGETS = {"40-page exam, incl. store write": 100.0, "CSAT 2025 English booklet": 30.0}
SHORT, LONG = "sample exam, incl. store write", "40-page exam, incl. store write"


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (Tesseract): what one core spends,
    unaffected by other work on a shared machine (wall time there says little)."""
    children = os.times()
    return time.process_time() + children.children_user + children.children_system


def median_rate(pages: int, run: Callable[[], None], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = cpu_seconds()
        run()
        times.append(cpu_seconds() - started)
    return pages / statistics.median(times)


def extract_only(pdf: Path) -> Callable[[], None]:
    return lambda: extract_items(pdf, ExtractOptions())


def with_store(pdf: Path) -> Callable[[], None]:
    def run() -> None:
        with tempfile.TemporaryDirectory() as folder:
            workspace = init_workspace(Path(folder) / "ws")
            started = cpu_seconds()
            extract_pdf(pdf, workspace, ExtractOptions())
            run.elapsed = cpu_seconds() - started  # type: ignore[attr-defined]
            workspace.store.close()
    return run


def store_rate(pdf: Path, pages: int, runs: int) -> float:
    """Pages per second of extract + store write, the workspace's creation not counted."""
    run = with_store(pdf)
    times = []
    for _ in range(runs):
        run()
        times.append(run.elapsed)  # type: ignore[attr-defined]
    return pages / statistics.median(times)


def watermark_copy(sample: Path, out: Path, pages: int = 3) -> Path:
    """The sample exam with `pages` pages that are one light watermark picture each (no text, some dust)."""
    from PIL import Image, ImageDraw

    image = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(image)
    draw.text((300, 800), "benchsmith watermark", fill=200, font_size=80)
    for speck in range(40):  # scanner dust: a few dark pixels, as on real watermark pages
        x, y = 97 * speck % 1200 + 20, 331 * speck % 1700 + 20
        draw.rectangle([x, y, x + 2, y + 2], fill=60)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    doc = pymupdf.open(sample)
    for _ in range(pages):
        page = doc.new_page(width=595, height=842)
        page.insert_image(page.rect, stream=buffer.getvalue())
    doc.save(out)
    return out


def repeated_copy(sample: Path, out: Path, times: int = 10) -> Path:
    """A 40-page text-layer exam: the sample exam's pages `times` over (numbering restarts, read as sections)."""
    doc = pymupdf.open()
    for _ in range(times):
        doc.insert_pdf(pymupdf.open(sample))
    doc.save(out)
    return out


def measure(runs: int, ocr_runs: int) -> dict[str, float]:
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        sample, _ = write_sample_exam(Path(folder) / "sample.pdf")
        interleaved, _ = write_sample_exam(Path(folder) / "interleaved.pdf", interleave_columns=True)
        watermarked = watermark_copy(sample, Path(folder) / "watermarked.pdf")
        inputs = [("sample exam", sample), ("sample exam, interleaved stream", interleaved),
                  ("sample exam + 3 watermark-only pages", watermarked)]
        booklet = next((d / "ksat2025_english" / "2025_english_questions_odd.pdf" for d in REALDATA
                        if (d / "ksat2025_english" / "2025_english_questions_odd.pdf").is_file()), None)
        if booklet is not None:
            inputs.append(("CSAT 2025 English booklet", booklet))
        for name, pdf in inputs:
            pages = pymupdf.open(pdf).page_count
            results[name] = median_rate(pages, extract_only(pdf), runs if "watermark" not in name else max(1, ocr_runs))
        results["sample exam, incl. store write"] = store_rate(sample, pymupdf.open(sample).page_count, runs)
        long = repeated_copy(sample, Path(folder) / "long.pdf")
        results["40-page exam, incl. store write"] = store_rate(long, pymupdf.open(long).page_count, max(1, runs // 2))
        if ocr.available() and ocr_runs:
            scanned, _ = write_sample_exam(Path(folder) / "scanned.pdf", scanned=True)
            results["scanned sample exam (OCR)"] = median_rate(4, extract_only(scanned), ocr_runs)
    return results


def measure_ref(ref: str, runs: int, ocr_runs: int) -> dict[str, float]:
    """The same measurement with the code of commit `ref` (this script copied beside it)."""
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", ref], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        script = Path(folder) / "benchmarks" / "extract_bench.py"
        script.write_text(Path(__file__).read_text())
        out = Path(folder) / "baseline.json"
        subprocess.run([sys.executable, str(script), "--runs", str(runs), "--ocr-runs", str(ocr_runs),
                        "--baseline", os.devnull, "--save", str(out)], check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--ocr-runs", type=int, default=1, help="runs of the slow inputs (OCR, watermark pages)")
    parser.add_argument("--baseline", type=Path, default=DEFAULT_BASELINE)
    parser.add_argument("--baseline-ref", help="a git commit to measure side by side (e.g. a516978)")
    parser.add_argument("--save", type=Path, help="write these figures as JSON (to serve as a baseline)")
    args = parser.parse_args()
    if args.baseline_ref:
        baseline, label = measure_ref(args.baseline_ref, args.runs, args.ocr_runs), f"commit {args.baseline_ref}"
    else:
        baseline = json.loads(args.baseline.read_text()) if args.baseline.is_file() else {}
        label = args.baseline.stem if baseline else "(no baseline file)"
    results = measure(args.runs, args.ocr_runs)
    print(f"extraction, pages per CPU-second on one core (median of {args.runs} runs, {args.ocr_runs} for "
          f"OCR/watermark inputs); baseline {label}")
    print(f"  {'input':<38} {'now':>8} {'baseline':>9} {'ratio':>6}  target")
    for name, rate in results.items():
        before = baseline.get(name)
        ratio = f"{rate / before:5.1f}x" if before else "     -"
        target = TARGETS.get(name)
        verdict = f"≥ {target:.0f}: {'met' if rate >= target else 'NOT met'}" if target else ""
        print(f"  {name:<38} {rate:8.2f} {before if before else float('nan'):9.2f} {ratio}  {verdict}")
    if SHORT in results and LONG in results:  # seconds = fixed + pages * per_page, from the 4- and 40-page runs
        per_page = (40 / results[LONG] - 4 / results[SHORT]) / 36
        fixed = 4 / results[SHORT] - 4 * per_page
        print(f"  store write into a fresh workspace: {fixed * 1000:.1f} ms once per run + {per_page * 1000:.2f} ms a page "
              f"({1 / per_page:.0f} pages/s)")
    if not any("CSAT" in name for name in results):
        print("  (CSAT booklet skipped: ../shared/realdata is not here)")
    if not ocr.available():
        print(f"  (OCR path skipped: tesseract is not installed: {ocr.MISSING_HINT})")
    if args.save:
        args.save.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
