"""A separate answer-key PDF: read from its text layer, or rendered and read as a table picture."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from curation.extract.answer_keys import AnswerKey, AnswerKeyError, parse_key_lines
from curation.extract.layout import page_glyphs, page_lines
from curation.extract.pdf_open import load_page, open_pdf
from curation.extract.text_quality import text_layer_problem


def read_key_pdf(path: Path) -> AnswerKey:
    from curation.extract import key_ocr, ocr

    opened = open_pdf(path)
    key: AnswerKey = {}
    for index in range(opened.doc.page_count):
        page = load_page(opened, index)
        glyphs = page_glyphs(page).glyphs
        if text_layer_problem(glyphs) is None:
            lines, _ = page_lines(page, index + 1, glyphs)
            found: Mapping[int, int | list[int]] = parse_key_lines(lines)
        elif ocr.available():
            found = key_ocr.read_key_table(page)
        else:
            raise AnswerKeyError(f"{path}: page {index + 1} has no text layer and OCR is not available "
                                 f"({ocr.MISSING_HINT})")
        for number, answer in found.items():
            key.setdefault(number, answer)
    if not key:
        raise AnswerKeyError(f"{path}: no answer-key table found")
    return key
