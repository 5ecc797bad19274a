"""The project's own sample exam: a realistic two-column Korean exam PDF and its ground truth.

`write_sample_exam(out.pdf)` writes `out.pdf`, `out.truth.jsonl` (one benchsmith item per line)
and `out.blobs/` (the truth's images, named `<sha256>.png`). Same arguments, same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from curation.core.item import parse_item
from curation.extract.lines import rect_box
from curation.imaging import CROP_ZOOM, pixmap_image, png_bytes
from curation.pymupdf_light import pymupdf
from curation.sample_exam.compose import Layout, compose, truth_record
from curation.sample_exam.pages import write_page
from curation.sample_exam.variants import variant_named

SCAN_DPI = 200
WATERMARK = "benchsmith 표본"


def blobs_dir_for(pdf_path: Path) -> Path:
    return pdf_path.parent / (pdf_path.stem + ".blobs")


def truth_path_for(pdf_path: Path) -> Path:
    return pdf_path.with_suffix(".truth.jsonl")


def _font() -> pymupdf.Font:
    return pymupdf.Font("korea")  # PyMuPDF's built-in Droid Sans Fallback: Hangul, ①–⑩, ㄱ–ㅎ


def _build(layout: Layout, font: pymupdf.Font, interleave: bool) -> pymupdf.Document:
    doc = pymupdf.open()
    for content in layout.pages:
        write_page(doc, content, font, interleave=interleave, watermark=WATERMARK)
    doc.subset_fonts()
    doc.set_metadata({"title": "benchsmith sample exam", "creator": "benchsmith", "producer": "benchsmith"})
    return doc


def _pdf_bytes(doc: pymupdf.Document) -> bytes:
    return doc.tobytes(garbage=4, deflate=True, no_new_id=True)


def _scanned(doc: pymupdf.Document) -> pymupdf.Document:
    """Each page as a grayscale picture, no text layer (what a scanner gives)."""
    scan = pymupdf.open()
    for page in doc.pages():
        pixmap = page.get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY, alpha=False)
        new_page = scan.new_page(width=page.rect.width, height=page.rect.height)
        new_page.insert_image(new_page.rect, stream=png_bytes(pixmap_image(pixmap)))
    scan.set_metadata({"title": "benchsmith sample exam (scanned)", "creator": "benchsmith", "producer": "benchsmith"})
    return scan


def _without_unicode_maps(doc: pymupdf.Document) -> pymupdf.Document:
    """The same pages with every font's ToUnicode map removed: the glyphs are drawn as before but
    their text is lost (what a math booklet's private-use fonts give an extractor)."""
    broken = pymupdf.open("pdf", _pdf_bytes(doc))
    for xref in range(1, broken.xref_length()):
        if broken.xref_get_key(xref, "ToUnicode")[0] == "xref":
            broken.xref_set_key(xref, "ToUnicode", "null")
    return broken


def _vector_bbox(page: pymupdf.Page, rect: pymupdf.Rect) -> pymupdf.Rect:
    """The drawn extent of the figure inside `rect` (from the page's own path list), straight
    lines included (`Rect |=` would skip a line: its box has no area)."""
    inside = [path["rect"] for path in page.get_drawings() if rect.contains(path["rect"])]
    return pymupdf.Rect(min(r.x0 for r in inside), min(r.y0 for r in inside), max(r.x1 for r in inside), max(r.y1 for r in inside))


def _image_ref(blob: str, kind: str, sha: str, page: int, rect: pymupdf.Rect, latex: str | None = None) -> dict[str, Any]:
    ref: dict[str, Any] = {"blob": blob, "kind": kind,
                           "provenance": {"pdf_sha256": sha, "page": page, "bbox": [round(v, 2) for v in rect_box(rect)]}}
    if latex is not None:
        ref["latex"] = latex
    return ref


def write_sample_exam(out_pdf: Path, seed: int = 0, *, interleave_columns: bool = False,
                      scanned: bool = False, glyph_pictures: bool = False, variant: str | None = None) -> tuple[Path, Path]:
    """Write the sample exam PDF and its ground truth; return (pdf path, truth JSONL path).
    `variant` names a layout variant (variants.py); `glyph_pictures` is the "glyphs" variant."""
    out_pdf = Path(out_pdf)
    out_pdf.parent.mkdir(parents=True, exist_ok=True)
    font = _font()
    chosen = variant_named("glyphs" if glyph_pictures else variant)
    layout = compose(font, seed, chosen)
    doc = _build(layout, font, interleave_columns)
    final = _scanned(doc) if scanned else _without_unicode_maps(doc) if chosen.broken_font else doc
    data = _pdf_bytes(final)
    sha = hashlib.sha256(data).hexdigest()
    blobs: dict[str, bytes] = {}

    def keep(png: bytes) -> str:
        name = f"{hashlib.sha256(png).hexdigest()}.png"
        blobs[name] = png
        return name

    records = []
    for placed in layout.placed:
        refs: dict[str, Any] = {}
        if placed.figure is not None:
            kind, rect, png = placed.figure
            if png is None:  # vector: the truth crop is the drawn extent rendered like every crop
                page = doc[placed.page - 1]
                rect = _vector_bbox(page, rect)
                png = png_bytes(pixmap_image(page.get_pixmap(matrix=pymupdf.Matrix(CROP_ZOOM, CROP_ZOOM), clip=rect)))
            ref_kind = {"chart": "raster", "diagram": "vector", "formula_image": "formula"}[kind]
            refs["figure"] = _image_ref(keep(png), ref_kind, sha, placed.page, rect,
                                        latex="" if kind == "formula_image" else None)
        for position, (rect, png) in enumerate(placed.option_images, start=1):
            refs[f"option:{position}"] = _image_ref(keep(png), "raster", sha, placed.page, rect)
        record = truth_record(placed, seed, sha, refs, out_pdf.name)
        if placed.figure is not None and placed.figure[0] == "diagram":
            record["source"]["bbox"] = _union(record["source"]["bbox"], refs["figure"]["provenance"]["bbox"])
        parse_item(record)  # the truth must itself be a valid item
        records.append(record)

    _write_atomic(out_pdf, data)
    blob_dir = blobs_dir_for(out_pdf)
    blob_dir.mkdir(exist_ok=True)
    for name, png in sorted(blobs.items()):
        if not (blob_dir / name).exists():
            _write_atomic(blob_dir / name, png)
    truth = truth_path_for(out_pdf)
    lines = "".join(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n" for record in records)
    _write_atomic(truth, lines.encode("utf-8"))
    return out_pdf, truth


def _union(a: list[float], b: list[float]) -> list[float]:
    return [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
