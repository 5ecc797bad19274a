"""OCR quality: character error rate of scanned Korean text against its truth, with and without
spaces (Tesseract cuts Hangul words into syllables, so spaces are most of the error). Inputs: the
generated scanned sample exam (stems and options against its ground truth) and, when
../shared/realdata is there, the 50 korhist77 question crops (placed on a page at ~110 dpi, read as
scans, against the official question text). Prints this code's figures beside those of a named
git commit run the same way.

    python benchmarks/ocr_quality_bench.py [--baseline-ref e970b67] [--crops 50]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

KORHIST = [HERE.parent / ".." / "shared" / "realdata" / "korhist77", Path("/work/shared/realdata/korhist77")]


def error_rates(pairs: list[tuple[str, str]]) -> tuple[float, float]:
    """(CER, CER with spaces ignored) of (truth, read) pairs."""
    from rapidfuzz.distance import Levenshtein

    total = sum(len(truth) for truth, _ in pairs)
    errors = sum(Levenshtein.distance(truth, read) for truth, read in pairs)
    unspaced = sum(Levenshtein.distance(truth.replace(" ", ""), read.replace(" ", "")) for truth, read in pairs)
    return errors / total, unspaced / total


def sample_exam_pairs() -> list[tuple[str, str]]:
    from curation.extract.pipeline import ExtractOptions, extract_items
    from curation.sample_exam import write_sample_exam

    sys.path.insert(0, str(HERE.parent / "tests"))
    from extract_truth import load_truth

    with tempfile.TemporaryDirectory() as folder:
        pdf, truth_path = write_sample_exam(Path(folder) / "scanned.pdf", scanned=True)
        truth = load_truth(truth_path)
        got = {item.source.number: item for item in extract_items(pdf, ExtractOptions()).items}
    pairs = []
    for item in truth:
        if item.source.number in got:
            found = got[item.source.number]
            pairs += list(zip([item.stem] + [o.text for o in item.options], [found.stem] + [o.text for o in found.options], strict=True))
    return pairs


def korhist_pairs(folder: Path, crops: int) -> list[tuple[str, str]]:
    import pymupdf

    from curation.extract import ocr

    questions = json.loads((folder / "questions_77.json").read_text(encoding="utf-8"))["questions"][:crops]
    pairs = []
    for question in questions:
        truth = " ".join([question["question_text"] or "", question.get("source_material") or "", *(question.get("choices") or {}).values()])
        picture = pymupdf.Pixmap(str(folder / question["image_path"]))
        doc = pymupdf.open()
        page = doc.new_page(width=picture.width * 72 / 110, height=picture.height * 72 / 110)
        page.insert_image(page.rect, pixmap=picture)
        lines, _ = ocr.ocr_page_lines(page, 1)
        read = " ".join(line.text for line in lines).replace(ocr.OPTION_PLACEHOLDER, "")
        pairs.append((re.sub(r"\s+", " ", truth).replace(" 문제지", "").strip(), re.sub(r"\s+", " ", read).strip()))
    return pairs


def measure(crops: int) -> dict[str, list[float]]:
    results = {"scanned sample exam": list(error_rates(sample_exam_pairs()))}
    folder = next((f for f in KORHIST if (f / "questions_77.json").is_file()), None)
    if folder is not None and crops:
        results[f"korhist77, {crops} question crops"] = list(error_rates(korhist_pairs(folder, crops)))
    return results


def measure_ref(ref: str, crops: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", ref], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        script = Path(folder) / "benchmarks" / "ocr_quality_bench.py"
        script.write_text(Path(__file__).read_text())
        out = subprocess.run([sys.executable, str(script), "--crops", str(crops), "--json"], capture_output=True, check=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", help="a git commit to measure the same way")
    parser.add_argument("--crops", type=int, default=50)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from curation.extract import ocr

    if not ocr.available():
        print(f"OCR not available: {ocr.MISSING_HINT}")
        return
    results = measure(args.crops)
    if args.json:
        print(json.dumps(results))
        return
    baseline = measure_ref(args.baseline_ref, args.crops) if args.baseline_ref else {}
    print(f"OCR character error rate (lower is better); baseline {'commit ' + args.baseline_ref if baseline else '-'}")
    print(f"  {'input':<34} {'CER':>6} {'no spaces':>10} {'baseline CER':>13} {'no spaces':>10}")
    for name, (cer, unspaced) in results.items():
        before = baseline.get(name, [float("nan")] * 2)
        print(f"  {name:<34} {cer:6.3f} {unspaced:10.3f} {before[0]:13.3f} {before[1]:10.3f}")


if __name__ == "__main__":
    main()
