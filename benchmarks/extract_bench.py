"""Extraction speed: pages per second on the born-digital path (text layer, segmentation, figure
crops, item validation) and on the OCR path. Prints the median of several runs.

    python benchmarks/extract_bench.py [--runs 7] [--ocr-runs 3]

Inputs: the generated sample exam (normal and interleaved stream, and a scanned copy for OCR), and
the 2025 CSAT English booklet from ../shared/realdata when it is there. Run it on one core
(`taskset -c 0`) for the single-core figure; Tesseract runs with OMP_THREAD_LIMIT=1.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from curation.extract import ocr  # noqa: E402
from curation.extract.pipeline import ExtractOptions, extract_items, extract_pdf  # noqa: E402
from curation.sample_exam import write_sample_exam  # noqa: E402
from curation.workspace import init_workspace  # noqa: E402

REALDATA = [Path(__file__).resolve().parents[1] / ".." / "shared" / "realdata", Path("/work/shared/realdata")]


def pages_per_second(pdf: Path, runs: int, engine: str = "auto") -> tuple[float, int]:
    times = []
    pages = 0
    for _ in range(runs):
        started = time.perf_counter()
        extraction = extract_items(pdf, ExtractOptions(engine=engine))
        times.append(time.perf_counter() - started)
        pages = extraction.report.pages
    return pages / statistics.median(times), pages


def with_store(pdf: Path, runs: int) -> float:
    times = []
    pages = 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            workspace = init_workspace(Path(folder) / "ws")
            started = time.perf_counter()
            report = extract_pdf(pdf, workspace, ExtractOptions())
            times.append(time.perf_counter() - started)
            pages = report.pages
            workspace.store.close()
    return pages / statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--ocr-runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        sample, _ = write_sample_exam(Path(folder) / "sample.pdf")
        interleaved, _ = write_sample_exam(Path(folder) / "interleaved.pdf", interleave_columns=True)
        scanned, _ = write_sample_exam(Path(folder) / "scanned.pdf", scanned=True)
        inputs = [("sample exam", sample), ("sample exam, interleaved stream", interleaved)]
        booklet = next((d / "ksat2025_english" / "2025_english_questions_odd.pdf" for d in REALDATA
                        if (d / "ksat2025_english" / "2025_english_questions_odd.pdf").is_file()), None)
        if booklet is not None:
            inputs.append(("CSAT 2025 English booklet", booklet))
        print(f"born-digital path (median of {args.runs} runs; text layer + segmentation + crops + items):")
        for name, pdf in inputs:
            rate, pages = pages_per_second(pdf, args.runs)
            print(f"  {name:<34} {pages:>2} pages  {rate:7.1f} pages/s")
        print(f"  {'sample exam, incl. store write':<34} {'':>2}        {with_store(sample, args.runs):7.1f} pages/s")
        if booklet is None:
            print("  (CSAT booklet skipped: ../shared/realdata is not here)")
        if ocr.available():
            rate, pages = pages_per_second(scanned, args.ocr_runs)
            print(f"OCR path (median of {args.ocr_runs} runs, Tesseract {ocr.LANGUAGES}, {ocr.OCR_DPI} dpi, one thread):")
            print(f"  {'scanned sample exam':<34} {pages:>2} pages  {rate:7.2f} pages/s")
        else:
            print(f"OCR path skipped: tesseract is not installed ({ocr.MISSING_HINT})")
        print("MinerU: not measured (not installed here; it needs model files and no network is available)")


if __name__ == "__main__":
    main()
