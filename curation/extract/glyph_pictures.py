"""Characters drawn as small pictures inside a text line (a digit, a circled option marker, a
final "."): read in place and put back into the line as glyphs, or kept as a picture.

A picture is a glyph picture when it is about one text line high and sits on a line of real
text (a text glyph beside it on the same band). It is rendered at OCR_DPI and read by shape
first (a lone dot is "."; a closed ring round a digit is that circled digit, the digit read by
Tesseract inside the ring) and otherwise by Tesseract with a digit/punctuation whitelist. What
is read becomes glyphs of the line's size on its baseline, flagged, so the line, its option
markers and its formulas are built as if it had been text. A picture that cannot be read stays a
picture (a `Figure`): on an option line it becomes the option's image. Tesseract reads all of a
document's pictures together (`GlyphReader`), in this process where libtesseract loads
(`tesseract_lib`), else in a few `tesseract` processes; never one per picture and attempt.
"""

from __future__ import annotations

from collections import defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from curation.extract.figures import render_crop
from curation.extract.layout import Glyph, core_top_of
from curation.extract.lines import CIRCLED_MARKERS, Figure
from curation.extract.page_cache import page_image_info
from curation.pymupdf_light import pymupdf

if TYPE_CHECKING:
    from curation.extract.tesseract_lib import TesseractEngine

GLYPH_DPI = 300
WHITELIST = "0123456789.,()%+-/"
DIGITS = "0123456789"
ATTEMPTS = ((2, 7), (1, 7), (1, 10), (3, 10))  # (enlargement, Tesseract page segmentation mode)
RING_ATTEMPTS = ((2, 10),)  # the digit inside a ring: one character


@dataclass
class GlyphPictures:
    glyphs: list[Glyph] = field(default_factory=list)  # what was read, as glyphs of their line
    unread: list[Figure] = field(default_factory=list)  # pictures that could not be read
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)  # every glyph picture


@dataclass
class Placement:
    """A glyph picture on a page: where, the text glyph of its line, its image's digest."""
    rect: pymupdf.Rect
    neighbour: Glyph
    digest: str


@dataclass
class Crop:
    """A glyph picture left to Tesseract: the picture, its whitelist, and its (enlargement, page
    segmentation mode) attempts in order; the first that reads anything is its reading."""
    gray: np.ndarray
    whitelist: str
    attempts: tuple[tuple[int, int], ...]
    circled: bool = False  # the digit inside a ring: the reading is that circled digit

    def meaning(self, text: str) -> str | None:
        """What Tesseract's text says the picture shows (None: nothing it can be)."""
        if self.circled:
            return CIRCLED_MARKERS[int(text) - 1] if text.isdigit() and 1 <= int(text) <= 10 else None
        return text or None


def find_glyph_pictures(page: pymupdf.Page, page_number: int, glyphs: list[Glyph], cache: dict[str, str | None],
                        available: bool) -> GlyphPictures:
    """Glyph pictures of one page, read (`cache` maps an image digest to its reading across pages)."""
    reader = GlyphReader(cache, tesseract=available)
    placements = locate_glyph_pictures(page, glyphs)
    reader.add(page, [(placement.rect, placement.digest) for placement in placements])
    reader.read_pending()
    return reader.place(page, page_number, placements)


def locate_glyph_pictures(page: pymupdf.Page, glyphs: list[Glyph]) -> list[Placement]:
    """The pictures of a page that are about one text line high and sit on a line of text."""
    infos = page_image_info(page)
    text = glyphs if infos else []
    if not text:
        return []
    heights = sorted(g.y1 - g.y0 for g in text)
    typical = heights[len(heights) // 2]
    placed = [(index, pymupdf.Rect(info["bbox"]) & page.rect) for index, info in enumerate(infos)
              if info["bbox"][3] - info["bbox"][1] <= 2 * typical]  # figures are never glyph pictures
    candidates: list[tuple[int, pymupdf.Rect, Glyph]] = []
    boxes = np.array([(g.x0, g.y0, g.x1, g.y1, g.size) for g in text]) if placed else np.zeros((0, 5))
    for index, rect in placed:
        neighbour = None if rect.is_empty else _line_neighbour(rect, text, boxes)
        if neighbour is not None:
            candidates.append((index, rect, neighbour))
    if not candidates:
        return []
    infos = page.get_image_info(hashes=True)  # digests only now: hashing decodes every image
    return [Placement(rect, neighbour, infos[index]["digest"].hex()) for index, rect, neighbour in candidates]


class GlyphReader:
    """Readings of a document's glyph pictures by image digest. `add` reads a page's new pictures
    by shape and keeps the rest; `start_reading` has Tesseract read those, all pages' together
    (starting Tesseract costs ~0.1 s, reading a small picture a few ms), in the background;
    `place` turns a page's pictures into glyphs or, unread, figures, waiting for Tesseract only
    when the page needs its readings. The first picture left to Tesseract has it load in the
    background while the pages are still being read."""

    def __init__(self, readings: dict[str, str | None] | None = None, tesseract: bool | None = None):
        self.readings: dict[str, str | None] = {} if readings is None else readings
        self._tesseract = tesseract  # None: ask whether it is installed when a first picture is found
        self._pending: dict[str, Crop] = {}
        self._reading: list[tuple[dict[str, Crop], Future[list[str]]]] = []
        self._worker: ThreadPoolExecutor | None = None  # one thread: loads Tesseract, then reads

    def add(self, page: pymupdf.Page, pictures: list[tuple[pymupdf.Rect, str]]) -> None:
        """Pictures of a page as (where, image digest); those seen before are skipped."""
        for rect, digest in pictures:
            if digest in self.readings or digest in self._pending:
                continue
            if self._tesseract is None:
                from curation.extract.ocr import available

                self._tesseract = available()
            found = by_shape(page, rect) if self._tesseract else None
            if isinstance(found, Crop):
                if self._worker is None:
                    from curation.extract.tesseract_lib import engine

                    self._worker = ThreadPoolExecutor(1, thread_name_prefix="glyph-ocr")
                    self._worker.submit(engine)
                self._pending[digest] = found
            else:
                self.readings[digest] = found

    def start_reading(self) -> None:
        if not self._pending or self._worker is None:
            return
        crops, self._pending = self._pending, {}
        self._reading.append((crops, self._worker.submit(_first_readings, list(crops.values()))))

    def read_pending(self) -> None:
        self.start_reading()
        self._collect()

    def ready(self, placements: list[Placement]) -> bool:
        """Every picture of these has its reading: placing them waits for nothing."""
        return all(placement.digest in self.readings for placement in placements)

    def _collect(self) -> None:
        from curation.extract.ocr import OcrError

        for crops, future in self._reading:
            try:
                texts = future.result()
            except OcrError:
                texts = [""] * len(crops)
            for (digest, crop), text in zip(crops.items(), texts, strict=True):
                self.readings[digest] = crop.meaning(text)
        self._reading.clear()
        if self._worker is not None and not self._pending:
            self._worker.shutdown(wait=False)
            self._worker = None

    def place(self, page: pymupdf.Page, page_number: int, placements: list[Placement]) -> GlyphPictures:
        if not self.ready(placements):
            self._collect()
        found = GlyphPictures()
        for placement in placements:
            rect = placement.rect
            found.boxes.append((rect.x0, rect.y0, rect.x1, rect.y1))
            reading = self.readings[placement.digest]
            if reading:
                found.glyphs += _as_glyphs(reading, rect, placement.neighbour, line_id=-len(found.boxes))
            else:
                found.unread.append(Figure(page_number, 0, (rect.x0, rect.y0, rect.x1, rect.y1), render_crop(page, rect),
                                           "other", glyph=True))
        return found


def _line_neighbour(rect: pymupdf.Rect, text: list[Glyph], boxes: np.ndarray) -> Glyph | None:
    """A text glyph on the same line band, near the picture, whose size the picture fits: the
    nearest, the first of equals (`boxes`: each glyph's x0, y0, x1, y1, size)."""
    x0, y0, x1, y1, size = boxes.T
    height = y1 - y0
    overlap = np.minimum(rect.y1, y1) - np.maximum(rect.y0, y0)
    gap = np.maximum(np.maximum(x0 - rect.x1, rect.x0 - x1), 0.0)
    fits = ((0.2 * height <= rect.height) & (rect.height <= 1.6 * height) & (rect.width <= 8 * height)
            & (overlap >= 0.5 * np.minimum(rect.height, height)) & (gap <= 3 * size))
    if not fits.any():
        return None
    candidates = np.flatnonzero(fits)
    return text[int(candidates[np.argmin(gap[candidates])])]


def _as_glyphs(reading: str, rect: pymupdf.Rect, neighbour: Glyph, line_id: int) -> list[Glyph]:
    step = rect.width / len(reading)
    core_top = core_top_of(neighbour.baseline, neighbour.size)
    return [Glyph(char, rect.x0 + index * step, neighbour.y0, rect.x0 + (index + 1) * step, neighbour.y1,
                  neighbour.size, neighbour.baseline, line_id, core_top, core_top + neighbour.baseline,
                  picture=True)
            for index, char in enumerate(reading)]


def read_glyph_picture(page: pymupdf.Page, rect: pymupdf.Rect) -> str | None:
    """The characters a small picture shows, or None when they cannot be read."""
    reader = GlyphReader(tesseract=True)
    reader.add(page, [(rect, "picture")])
    reader.read_pending()
    return reader.readings["picture"]


def by_shape(page: pymupdf.Page, rect: pymupdf.Rect) -> str | Crop | None:
    """A lone dot is read by its shape; a ring round something, or anything else, is left to
    Tesseract (the digit inside the ring, or the picture with a digit/punctuation whitelist)."""
    from curation.extract.ocr import find_rings, render_gray, thicken

    gray = render_gray(page, GLYPH_DPI, clip=rect)
    dark = gray < 140
    if not dark.any():
        return None
    ys, xs = np.nonzero(dark)
    y0, y1, x0, x1 = ys.min(), ys.max(), xs.min(), xs.max()
    ink_height, ink_width = y1 - y0 + 1, x1 - x0 + 1
    if ink_height <= 0.3 * gray.shape[0] and ink_width <= 0.3 * gray.shape[0] and y0 >= 0.45 * gray.shape[0]:
        return "."  # a lone dot on the baseline
    if 0.8 <= ink_width / ink_height <= 1.25 and find_rings(thicken(dark), dark, (x0, y0, x1, y1), ink_height / 0.85,
                                                             [(x0, x1 + 1)], min_ring=0.8):
        return Crop(_inside_ring(gray, (x0, y0, x1, y1)), DIGITS, RING_ATTEMPTS, circled=True)
    return Crop(gray, WHITELIST, ATTEMPTS)  # Tesseract misses lone characters at one scale and reads them at another


def _inside_ring(gray: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """The picture with the ring whitened: only the digit inside is left (Tesseract misreads rings)."""
    x0, y0, x1, y1 = box
    cx, cy, radius = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2
    yy, xx = np.mgrid[:gray.shape[0], :gray.shape[1]]
    return np.where((xx - cx) ** 2 + (yy - cy) ** 2 <= (0.72 * radius) ** 2, gray, 255).astype(np.uint8)


def _first_readings(crops: list[Crop]) -> list[str]:
    """Each crop's first non-empty reading in the order of its attempts ("" when none reads).
    In each round every waiting crop makes its next attempt, read by this process's Tesseract;
    with Tesseract processes instead, its next attempts that share a page segmentation mode, one
    process per (mode, whitelist) for all crops, processes side by side. A crop waits for another
    round only when none of its attempts read anything."""
    from curation.extract.tesseract_lib import engine

    here = engine()
    readings = [""] * len(crops)
    waiting = dict.fromkeys(range(len(crops)), 0)  # crop -> its next attempt
    while waiting:
        batches: dict[tuple[int, str], list[tuple[int, np.ndarray]]] = defaultdict(list)
        for index, start in waiting.items():
            crop = crops[index]
            mode = crop.attempts[start][1]
            end = start + 1 if here is not None else next(
                (at for at in range(start, len(crop.attempts)) if crop.attempts[at][1] != mode), len(crop.attempts))
            batches[mode, crop.whitelist] += [(index, framed(crop.gray, scale)) for scale, _ in crop.attempts[start:end]]
            waiting[index] = end
        for entries, texts in zip(batches.values(), _read_batches(batches, here), strict=True):
            for (index, _), text in zip(entries, texts, strict=True):
                readings[index] = readings[index] or text
        waiting = {index: start for index, start in waiting.items()
                   if not readings[index] and start < len(crops[index].attempts)}
    return readings


def _read_batches(batches: dict[tuple[int, str], list[tuple[int, np.ndarray]]],
                  here: TesseractEngine | None) -> list[list[str]]:
    """The text of every image of each batch: by this process's Tesseract (`here`), one batch
    after another, or else one Tesseract process per batch, run side by side."""
    from curation.extract.ocr import OcrWord, run_tesseract_pages

    def read(key: tuple[int, str]) -> list[str]:
        mode, whitelist = key
        images = [image for _, image in batches[key]]
        pages: list[list[OcrWord]]
        if here is not None:
            pages = here.read(images, mode, whitelist)
        else:
            pages = run_tesseract_pages(images, psm=mode, extra=("-c", f"tessedit_char_whitelist={whitelist}"),
                                        languages="eng")
        return ["".join(word.text for word in words) for words in pages]

    if here is not None or len(batches) == 1:
        return [read(key) for key in batches]
    with ThreadPoolExecutor(len(batches)) as pool:
        return list(pool.map(read, batches))


def framed(gray: np.ndarray, scale: int) -> np.ndarray:
    """A small picture enlarged `scale` times and framed in white, as Tesseract reads it best."""
    big = np.kron(gray, np.ones((scale, scale), dtype=np.uint8))
    pad = 15 * scale
    out = np.full((big.shape[0] + 2 * pad, big.shape[1] + 2 * pad), 255, dtype=np.uint8)
    out[pad:-pad, pad:-pad] = big
    return out
