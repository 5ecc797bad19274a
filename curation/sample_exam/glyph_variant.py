"""The glyph-picture variant: some characters are drawn as small pictures instead of text, as
producers of real exams do (option markers ①–④ and numbers pasted as images, a final "." that
is an image). The paper looks the same; the ground truth text is unchanged, and the questions
that hold such pictures are marked for review (extraction reads them by OCR)."""

from __future__ import annotations

import re
from functools import lru_cache

from curation.answers import CIRCLED
from curation.imaging import pixmap_image, png_bytes
from curation.pymupdf_light import pymupdf
from curation.sample_exam.typeset import Run, Typesetter

GLYPH_PICTURE_REASON = "characters drawn as pictures were read by OCR: check them"
PICTURE_ZOOM = 4.0  # 288 dpi, as a producer pasting scanned glyphs would
_LEADING_NUMBER = re.compile(r"^\d+(?:\.\d+)?")


@lru_cache(maxsize=64)
def glyph_png(font_name: str, text: str, size: float) -> bytes:
    """`text` rendered alone on a box exactly its glyph box (so it sits where the text would)."""
    font = pymupdf.Font(font_name)
    width = font.text_length(text, fontsize=size)
    height = (font.ascender - font.descender) * size
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    writer = pymupdf.TextWriter(page.rect)
    writer.append((0, font.ascender * size), text, font=font, fontsize=size)
    writer.write_text(page)
    pixmap = page.get_pixmap(matrix=pymupdf.Matrix(PICTURE_ZOOM, PICTURE_ZOOM), colorspace=pymupdf.csGRAY, alpha=False)
    return png_bytes(pixmap_image(pixmap))


def pictured_runs(runs: list[Run], context: str, setter: Typesetter) -> tuple[list[Run], list[tuple[Run, bytes]]]:
    """(runs left as text, pictures as (the run they replace, PNG)). `context` is "marker_option"
    (markers and leading numbers become pictures), "bogi" (a final "." becomes a picture) or other."""
    kept: list[Run] = []
    pictures: list[tuple[Run, bytes]] = []
    for run in runs:
        cut = _picture_span(run.text, context) if not run.kind else None
        if cut is None:
            kept.append(run)
            continue
        start, end = cut
        before, inside, after = run.text[:start], run.text[start:end], run.text[end:]
        x = run.x
        for piece, is_picture in ((before, False), (inside, True), (after, False)):
            if not piece:
                continue
            part = Run(x, run.baseline, piece, run.size)
            if is_picture:
                pictures.append((part, glyph_png("korea", piece, run.size)))
            else:
                kept.append(part)
            x += setter.width(piece, run.size)
    return kept, pictures


def _picture_span(text: str, context: str) -> tuple[int, int] | None:
    if context == "marker_option":
        if text[:1] in CIRCLED:
            return 0, 1
        number = _LEADING_NUMBER.match(text)
        return number.span() if number else None
    if context == "bogi" and text.endswith("다."):
        return len(text) - 1, len(text)
    return None
