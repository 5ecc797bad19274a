"""OCR for pages without a usable text layer: Tesseract (Debian `tesseract-ocr`, `-kor`,
`-script-hang`), `--psm 6` per column, one thread (`OMP_THREAD_LIMIT=1`).

Tesseract reads Hangul well but never circled digits, so option markers are found by position:
each OCR line's band is scanned for rings of about the text height; the words the ring covers
(misread as `@`, `©`, `0)` …) are replaced by OPTION_PLACEHOLDER, which segmentation numbers in
reading order. Columns come from the page picture: a vertical rule or an empty band near the middle.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from curation.core.errors import BenchsmithError
from curation.extract.lines import FULL, LEFT, OPTION_PLACEHOLDER, RIGHT, Cell, Line
from curation.pymupdf_light import pymupdf

OCR_DPI = 300
MISSING_HINT = "apt-get install tesseract-ocr tesseract-ocr-kor tesseract-ocr-script-hang"
LANGUAGES = "kor+eng"


class OcrError(BenchsmithError):
    pass


@lru_cache(maxsize=1)
def available() -> bool:
    binary = shutil.which("tesseract")
    if binary is None:
        return False
    try:
        listed = subprocess.run([binary, "--list-langs"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "kor" in listed.split()


@dataclass
class OcrWord:
    text: str
    x0: int
    y0: int
    x1: int
    y1: int
    line_key: tuple[int, int, int]


def run_tesseract(image: np.ndarray, psm: int = 6, extra: tuple[str, ...] = (), languages: str = LANGUAGES) -> list[OcrWord]:
    """Words with pixel boxes from one Tesseract run on a grayscale image."""
    return run_tesseract_pages([image], psm, extra, languages)[0]


def run_tesseract_pages(images: list[np.ndarray], psm: int = 6, extra: tuple[str, ...] = (),
                        languages: str = LANGUAGES) -> list[list[OcrWord]]:
    """The words of each grayscale image from one Tesseract process: several images go in a list
    file, which Tesseract reads as the pages of one document (each page read as it would be alone)."""
    from PIL import Image

    if not images:
        return []
    with tempfile.TemporaryDirectory(prefix="benchsmith-ocr-") as folder:
        paths = [Path(folder) / f"page{index}.png" for index in range(len(images))]
        for path, image in zip(paths, images, strict=True):
            Image.fromarray(image).save(path)
        source = paths[0]
        if len(paths) > 1:
            source = Path(folder) / "pages.txt"
            source.write_text("".join(f"{path}\n" for path in paths))
        command = ["tesseract", str(source), "-", "--psm", str(psm), "-l", languages,
                   "-c", "preserve_interword_spaces=1", *extra, "tsv"]
        env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
        try:
            done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
        except (OSError, subprocess.SubprocessError) as error:
            raise OcrError(f"tesseract failed: {error}") from None
    if done.returncode != 0:
        raise OcrError(f"tesseract failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    pages: list[list[OcrWord]] = [[] for _ in images]
    tsv_words(done.stdout, pages)
    return pages


def tsv_words(tsv: str, pages: list[list[OcrWord]]) -> None:
    """Put the words of Tesseract's TSV output (with or without its header line) on their pages."""
    for row in csv.reader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        # level, page_num, block_num, par_num, line_num, word_num, left, top, width, height, conf, text
        text = row[11].strip() if len(row) > 11 else ""
        if not text or row[0] != "5":
            continue
        left, top, width, height = (int(value) for value in row[6:10])
        pages[int(row[1]) - 1].append(OcrWord(text, left, top, left + width, top + height,
                                              (int(row[2]), int(row[3]), int(row[4]))))


def render_gray(page: pymupdf.Page, dpi: int = OCR_DPI, clip: pymupdf.Rect | None = None) -> np.ndarray:
    pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False, clip=clip)
    return np.frombuffer(pixmap.samples, dtype=np.uint8).reshape(pixmap.height, pixmap.width)


# -- columns on a picture -----------------------------------------------------------------------------
@dataclass
class PictureColumns:
    gutter: int | None  # pixel x
    top: int  # rows above `top` and below `bottom` are read full width
    bottom: int


def find_picture_columns(dark: np.ndarray) -> PictureColumns:
    height, width = dark.shape
    columns = dark.sum(axis=0)
    low, high = int(0.35 * width), int(0.65 * width)
    rule_x = low + int(np.argmax(columns[low:high]))
    if columns[rule_x] > 0.3 * height and columns[max(rule_x - 6, 0)] < 0.2 * columns[rule_x]:
        rows = np.nonzero(dark[:, max(rule_x - 1, 0):rule_x + 2].any(axis=1))[0]
        runs = np.split(rows, np.nonzero(np.diff(rows) > 0.06 * height)[0] + 1)  # a watermark may cross it
        longest = max(runs, key=len)
        return PictureColumns(rule_x, int(longest[0]), int(longest[-1]))
    smooth = np.convolve(columns, np.ones(9) / 9, mode="same")
    centre = low + int(np.argmin(smooth[low:high]))
    typical = np.median(smooth[int(0.1 * width):int(0.9 * width)])
    if smooth[centre] < 0.05 * max(typical, 1):
        return PictureColumns(centre, 0, height)
    return PictureColumns(None, 0, height)


# -- option markers by position -------------------------------------------------------------------------
_ANGLES = np.linspace(0, 2 * np.pi, 40, endpoint=False)


def thicken(dark: np.ndarray, pixels: int = 2) -> np.ndarray:
    """Dark pixels grown by `pixels` in every direction (thin rings become easy to sample)."""
    grown = dark.copy()
    for dy in range(-pixels, pixels + 1):
        for dx in range(-pixels, pixels + 1):
            grown |= np.roll(np.roll(dark, dy, axis=0), dx, axis=1)
    return grown


def _sample(mask: np.ndarray, cxs: np.ndarray, cys: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Share of dark pixels on circles around (cx, cy) for every cy × radius × cx at once:
    shape (len(cys), len(radii), len(cxs))."""
    height, width = mask.shape
    radii = radii[None, :, None, None]
    xs = np.clip((cxs[None, None, :, None] + radii * _COS).astype(int), 0, width - 1)
    ys = np.clip((cys[:, None, None, None] + radii * _SIN).astype(int), 0, height - 1)
    ys, xs = np.broadcast_arrays(ys, xs)
    return mask[ys, xs].mean(axis=3)


_COS, _SIN = np.cos(_ANGLES), np.sin(_ANGLES)
_CENTRE_CHUNK = 128  # centres per vectorised pass (bounds the memory of the sample grids)


def find_rings(thick: np.ndarray, dark: np.ndarray, band: tuple[int, int, int, int], size: float,
               spans: list[tuple[float, float]], min_ring: float = 0.95) -> list[tuple[int, int]]:
    """x ranges of circled digits in a line band: a closed ring of about 0.8 × the text height,
    empty just outside and between ring and digit, with something (the digit) in the middle.
    Only centres inside `spans` (where a marker can be) are tried; every centre, height and radius
    is scored in one numpy pass, the first best (height, radius) kept per centre."""
    x0, y0, x1, y1 = band
    centres = np.sort(np.concatenate([np.arange(int(a), int(b), 1) for a, b in spans] or [np.zeros(0, int)]))
    centres = centres[np.r_[True, centres[1:] != centres[:-1]]] if centres.size else centres  # np.unique loads numpy.ma (~30 ms)
    if centres.size == 0:
        return []
    middle = (y0 + y1) / 2
    cys = np.arange(middle - 0.2 * size, middle + 0.2 * size, 1.0)
    radii = np.arange(0.34 * size, 0.48 * size, 1.0)
    if cys.size == 0 or radii.size == 0:
        return []
    best = np.zeros(centres.size)
    best_radius = np.zeros(centres.size)
    for start in range(0, centres.size, _CENTRE_CHUNK):
        chunk = centres[start:start + _CENTRE_CHUNK]
        score = _ring_scores(thick, dark, chunk, cys, radii, min_ring)
        flat = score.reshape(-1, chunk.size)  # (cy, radius) in the order a nested loop visits them
        first_best = flat.argmax(axis=0)
        best[start:start + chunk.size] = flat[first_best, np.arange(chunk.size)]
        best_radius[start:start + chunk.size] = np.where(best[start:start + chunk.size] > 0,
                                                         radii[first_best % radii.size], 0.0)
    rings: list[tuple[int, int]] = []
    for index in np.argsort(-best, kind="stable"):
        if best[index] <= min_ring - 0.15:
            break
        index = _middle_of_tie(best, centres, int(index))
        cx, radius = int(centres[index]), best_radius[index]
        if all(abs(cx - (a + b) / 2) > 2.2 * radius for a, b in rings):
            rings.append((int(cx - radius), int(cx + radius)))
    return sorted(rings)


def _middle_of_tie(best: np.ndarray, centres: np.ndarray, index: int) -> int:
    """Neighbouring centres often score the same ring equally: take the middle one of the run."""
    low = high = index
    while low > 0 and centres[low - 1] == centres[low] - 1 and best[low - 1] == best[index]:
        low -= 1
    while high + 1 < centres.size and centres[high + 1] == centres[high] + 1 and best[high + 1] == best[index]:
        high += 1
    return (low + high) // 2


def _ring_scores(thick: np.ndarray, dark: np.ndarray, centres: np.ndarray, cys: np.ndarray, radii: np.ndarray,
                 min_ring: float) -> np.ndarray:
    """Score of a ring at every (cy, radius, centre): ring share minus the share just outside it,
    0 where the ring is open, the outside or the inner gap is dark, or the middle is empty.
    Only closed rings (few) are checked further."""
    ring = _sample(thick, centres, cys, radii)
    score = np.zeros(ring.shape)
    at = np.nonzero(ring >= min_ring)
    if at[0].size == 0:
        return score
    cx, cy, radius = centres[at[2]], cys[at[0]], radii[at[1]]
    outside = _sample_points(dark, cx, cy, radius + 4)
    between = _sample_points(dark, cx, cy, 0.72 * radius - 2)
    centre_dark = dark[cy.astype(int), np.clip(cx, 0, dark.shape[1] - 1)]
    middle_dark = _sample_points(dark, cx, cy, 0.2 * radius) + centre_dark
    keep = (outside < 0.12) & (between < 0.35) & (middle_dark > 0)
    score[at] = np.where(keep, ring[at] - outside, 0.0)
    return score


def _sample_points(mask: np.ndarray, cxs: np.ndarray, cys: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Share of dark pixels on one circle per (cx, cy, radius) triple."""
    height, width = mask.shape
    xs = np.clip((cxs[:, None] + radii[:, None] * _COS).astype(int), 0, width - 1)
    ys = np.clip((cys[:, None] + radii[:, None] * _SIN).astype(int), 0, height - 1)
    return mask[ys, xs].mean(axis=1)


def _marker_spans(words: list[OcrWord], ox: int, size: float) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """Where a circled digit can be: (spans of words Tesseract read as a typical misread marker —
    `@`, `©`, `®` — checked leniently; other spans — a non-Hangul word opening a cell, or a wide
    gap where Tesseract dropped the marker — checked strictly). Markers open a line or a cell."""
    lenient: list[tuple[float, float]] = []
    strict: list[tuple[float, float]] = []
    previous_end: float | None = None
    for word in words:
        x0, x1 = ox + word.x0, ox + word.x1
        gap = None if previous_end is None else x0 - previous_end
        typical = word.text[0] in "@©®"
        opens_cell = gap is None or gap > (0.3 if typical else 0.8) * size
        if opens_cell and marker_word(word.text):
            end = min(x1, x0 + 1.2 * size) + 0.3 * size
            (lenient if typical else strict).append((x0 - 0.1 * size, end))
        if previous_end is not None and x0 - previous_end > 1.2 * size:
            strict.append((previous_end + 0.3 * size, x0 - 0.3 * size))
        previous_end = x1
    return lenient, strict


def _inside_hangul_word(ring: tuple[int, int], words: list[OcrWord], ox: int, size: float) -> bool:
    """A ring found in the middle of a word read as Hangul is a syllable's ㅇ, not a marker."""
    for word in words:
        x0, x1 = ox + word.x0, ox + word.x1
        inside = x0 < ring[0] - 0.3 * size and min(x1, ring[1]) - max(x0, ring[0]) > 0.4 * (ring[1] - ring[0])
        if inside and not marker_word(word.text):
            return True
    return False


def marker_word(text: str) -> bool:
    """Tesseract's reading of a circled digit never starts with a Hangul syllable or a letter
    other than the round ones ("@", "©", "0)", "(2)", "ㅇ", "O", "Q"), and is not a question number."""
    if not text or "\uac00" <= text[0] <= "\ud7a3" or re.match(r"^(\d+\.$|[1-9]\d|\d{3})", text):
        return False
    return not text[0].isalpha() or text[0] in "ODQGoeaㅇ"


# -- a page -------------------------------------------------------------------------------------------------
def ocr_page_lines(page: pymupdf.Page, page_number: int) -> tuple[list[Line], float | None]:
    gray = render_gray(page)
    dark = gray < 140
    thick = thicken(dark)
    layout = find_picture_columns(dark)
    scale = 72 / OCR_DPI
    regions: list[tuple[int, tuple[int, int, int, int]]] = []
    height, width = gray.shape
    if layout.gutter is None:
        regions.append((FULL, (0, 0, width, height)))
    else:
        margin = 6
        if layout.top > 10:
            regions.append((FULL, (0, 0, width, layout.top)))
        regions.append((LEFT, (0, layout.top, layout.gutter - margin, layout.bottom)))
        regions.append((RIGHT, (layout.gutter + margin, layout.top, width, layout.bottom)))
        if layout.bottom < height - 10:
            regions.append((FULL, (0, layout.bottom, width, height)))
    lines: list[Line] = []
    for region, (x0, y0, x1, y1) in regions:
        crop = gray[y0:y1, x0:x1]
        if crop.size == 0 or not (crop < 140).any():
            continue
        words = run_tesseract(crop)
        typical = float(np.median([w.y1 - w.y0 for w in words])) if words else 0.0
        for group in _group_lines(words):
            line = _line_from_words(group, thick, dark, (x0, y0), scale, page_number, region, typical)
            if line is not None:
                lines.append(line)
    gutter_x = layout.gutter * scale if layout.gutter is not None else None
    return _reading_order(lines), gutter_x


def _group_lines(words: list[OcrWord]) -> list[list[OcrWord]]:
    groups: dict[tuple[int, int, int], list[OcrWord]] = {}
    for word in words:
        groups.setdefault(word.line_key, []).append(word)
    return [sorted(group, key=lambda w: w.x0) for group in groups.values()]


def _line_from_words(words: list[OcrWord], thick: np.ndarray, dark: np.ndarray, offset: tuple[int, int], scale: float,
                     page_number: int, region: int, typical: float = 0.0) -> Line | None:
    ox, oy = offset
    heights = sorted(w.y1 - w.y0 for w in words)
    size = heights[len(heights) // 2]
    # pictures beside markers (image options) are read as tall junk words without Hangul: the markers
    # are searched along the whole line at the page's text size, and the junk is dropped
    pictures = bool(typical) and size > 1.3 * typical and not any(_has_hangul(w.text) for w in words)
    if pictures:
        size = int(typical)
    band = (ox + words[0].x0, oy + min(w.y0 for w in words), ox + words[-1].x1, oy + max(w.y1 for w in words))
    lenient, strict = _marker_spans(words, ox, size)
    found = find_rings(thick, dark, band, size, lenient, min_ring=0.8) + find_rings(thick, dark, band, size, strict)
    if pictures:
        found += find_rings(thick, dark, band, size, [(band[0] - 0.5 * size, band[2])])
    rings = _distinct(sorted({ring for ring in found if not _inside_hangul_word(ring, words, ox, size)}))
    if pictures and rings:
        words = []
    pieces: list[tuple[int, int, str]] = []
    for word in words:
        wx0, wx1 = ox + word.x0, ox + word.x1
        overlap = [r for r in rings if min(wx1, r[1]) - max(wx0, r[0]) > 0.25 * (r[1] - r[0])]
        if not overlap:
            pieces.append((wx0, wx1, word.text))
            continue
        ring = overlap[-1]
        if wx1 <= ring[1] + 0.25 * size:
            continue  # the misread marker itself
        rest = _after_marker(word.text) if wx0 < ring[0] + 0.3 * size else word.text
        if rest:
            pieces.append((max(wx0, ring[1] + 1), wx1, rest))
    pieces += [(a, b, OPTION_PLACEHOLDER) for a, b in rings]
    pieces.sort()
    if not pieces:
        return None
    cells: list[Cell] = []
    text_parts: list[str] = []
    previous_end = None
    for x0, x1, text in pieces:
        gap = None if previous_end is None else x0 - previous_end
        space = gap is not None and gap > _word_gap(text_parts[-1], text) * size
        if gap is not None and (space or text == OPTION_PLACEHOLDER or text_parts[-1] == OPTION_PLACEHOLDER):
            text_parts.append(" ")
        if gap is None or gap > 1.5 * size:
            cells.append(Cell(x0 * scale, x1 * scale, text))
        else:
            cells[-1] = Cell(cells[-1].x0, x1 * scale, cells[-1].text + (" " if space else "") + text)
        text_parts.append(text)
        previous_end = x1
    bbox = (band[0] * scale, band[1] * scale, band[2] * scale, band[3] * scale)
    markers = [(OPTION_PLACEHOLDER, a * scale, b * scale) for a, b in rings]
    return Line(page_number, region, bbox, "".join(text_parts).strip(), size * scale, cells, markers, source="ocr")


WORD_GAP = 0.25  # of the text height: two Tesseract words further apart than this are spaced
# Between two Hangul words a little more: Tesseract cuts Korean words into syllables ("대 류 권 에 서")
# with ink gaps up to ~0.35 of the text height. Measured on Hangul word boundaries labelled from
# the truth: 0.3 errs on 41 of 432 in the scanned sample exam (0.25: 92) and on 150 of 5,811 in the
# 50 korhist77 question crops (0.25: 161); 0.35 is better on the first and much worse on the second.
HANGUL_WORD_GAP = 0.3


def _word_gap(left: str, right: str) -> float:
    return HANGUL_WORD_GAP if _HANGUL_END.search(left) and _HANGUL_START.match(right) else WORD_GAP


_HANGUL_END, _HANGUL_START = re.compile("[\uac00-\ud7a3]$"), re.compile("[\uac00-\ud7a3]")


def _has_hangul(text: str) -> bool:
    return any("\uac00" <= char <= "\ud7a3" for char in text)


def _distinct(rings: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """One ring per marker when several searches found the same one at slightly different places."""
    kept: list[tuple[int, int]] = []
    for ring in rings:
        if kept and ring[0] < kept[-1][1]:
            continue
        kept.append(ring)
    return kept


def _after_marker(text: str) -> str:
    """What follows a misread marker glued to its option text ("0)한랭전선" → "한랭전선")."""
    for index, char in enumerate(text):
        if "\uac00" <= char <= "\ud7a3" or (char.isalnum() and index >= 2):
            return text[index:]
    return ""


def _reading_order(lines: list[Line]) -> list[Line]:
    from curation.extract.layout import order_lines

    return order_lines({region: [line for line in lines if line.region == region] for region in (FULL, LEFT, RIGHT)})
