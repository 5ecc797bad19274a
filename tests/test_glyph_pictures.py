"""Characters drawn as small pictures (option markers, numbers, a final ".") are read in place,
marked for review, and kept as pictures when they cannot be read; no option is left empty."""

from __future__ import annotations

import os
import time

import numpy as np
import pymupdf
import pytest

from curation.extract import ocr, tesseract_lib
from curation.extract.confidence import read_confidence
from curation.extract.glyph_pictures import (
    Crop,
    GlyphReader,
    by_shape,
    find_glyph_pictures,
    framed,
    read_glyph_picture,
)
from curation.extract.latex_check import text_problems
from curation.extract.layout import page_glyphs
from curation.extract.pipeline import ExtractOptions, extract_items
from curation.sample_exam import write_sample_exam
from curation.sample_exam.content import SUBJECTS
from curation.sample_exam.glyph_variant import GLYPH_PICTURE_REASON

from .extract_truth import differences, load_truth

needs_tesseract = pytest.mark.skipif(not ocr.available(), reason="tesseract with Korean data is not installed")


@pytest.fixture(scope="module")
def glyph_exam(tmp_path_factory):
    pdf, truth = write_sample_exam(tmp_path_factory.mktemp("glyphs") / "glyphs.pdf", glyph_pictures=True)
    return pdf, load_truth(truth)


def _small_pictures(doc: pymupdf.Document) -> int:
    return sum(1 for page in doc for info in page.get_image_info() if pymupdf.Rect(info["bbox"]).height < 20)


def test_the_variant_draws_markers_numbers_and_final_dots_as_pictures(glyph_exam):
    pdf, truth = glyph_exam
    doc = pymupdf.open(pdf)
    assert _small_pictures(doc) > 50
    text = "".join(page.get_text() for page in doc)
    text_markers = sum(1 for subject in SUBJECTS for spec in subject.questions
                       if spec.layout == "lines" or spec.image_options)
    assert text.split("정답표")[0].count("①") == text_markers  # row and grid markers are pictures …
    assert "①" in text.split("정답표")[1]  # … the key table is still text
    # the questions whose option markers are pictures (not a text-marker layout) are marked for review
    assert sum(1 for item in truth if GLYPH_PICTURE_REASON in item.flags.review_reasons) == len(truth) - text_markers == 18


@pytest.mark.ocr
@needs_tesseract
def test_glyph_pictures_are_read_in_place_and_flagged(glyph_exam):
    pdf, truth = glyph_exam
    extraction = extract_items(pdf, ExtractOptions(exam="기상기사", session="sample-0"))
    got = {item.source.number: item for item in extraction.items}
    assert [p for item in truth for p in differences(item, got[item.source.number])] == []
    for item in extraction.items:
        pictured = GLYPH_PICTURE_REASON in item.flags.review_reasons
        assert ("glyph_pictures" in read_confidence(item.extra).signals) == pictured
        assert all(option.text or option.image for option in item.options)
        assert [problem for text in [item.stem] + [o.text for o in item.options] for problem in text_problems(text)] == []


@needs_tesseract
def test_each_kind_of_glyph_picture_is_read(glyph_exam):
    pdf, _ = glyph_exam
    page = pymupdf.open(pdf)[1]
    readings = {read_glyph_picture(page, pymupdf.Rect(info["bbox"])) for info in page.get_image_info()
                if pymupdf.Rect(info["bbox"]).height < 20}
    assert {"①", "②", "③", "④", ".", "100", "25", "9.8", "12.0"} <= readings


def test_without_a_reader_every_glyph_picture_stays_a_picture(glyph_exam):
    pdf, _ = glyph_exam
    doc = pymupdf.open(pdf)
    found = [find_glyph_pictures(page, number, page_glyphs(page).glyphs, {}, available=False)
             for number, page in enumerate(doc, start=1)]
    assert sum(len(f.unread) for f in found) == sum(len(f.boxes) for f in found) == _small_pictures(doc)
    assert all(not f.glyphs for f in found)
    assert all(figure.glyph and figure.png.startswith(b"\x89PNG") for f in found for figure in f.unread)


def _variant_pictures(doc: pymupdf.Document) -> list[tuple[pymupdf.Page, pymupdf.Rect, str]]:
    """Every glyph picture of the variant once: (page, where, image digest)."""
    seen: dict[str, tuple[pymupdf.Page, pymupdf.Rect, str]] = {}
    for page in doc:
        for info in page.get_image_info(hashes=True):
            rect = pymupdf.Rect(info["bbox"])
            if rect.height < 20:
                seen.setdefault(info["digest"].hex(), (page, rect, info["digest"].hex()))
    return list(seen.values())


def _one_process_per_attempt(page: pymupdf.Page, rect: pymupdf.Rect) -> str | None:
    """How a picture was read before batching: a Tesseract process per attempt, until one reads."""
    found = by_shape(page, rect)
    if not isinstance(found, Crop):
        return found
    for scale, psm in found.attempts:
        words = ocr.run_tesseract(framed(found.gray, scale), psm=psm, languages="eng",
                                  extra=("-c", f"tessedit_char_whitelist={found.whitelist}"))
        if text := "".join(word.text for word in words):
            return found.meaning(text)
    return None


@pytest.fixture(params=["in this process", "as processes"])
def glyph_tesseract(request, monkeypatch):
    """Glyph pictures read by libtesseract in this process, or (where it does not load) by the
    `tesseract` program; gives the image count of each Tesseract process started and of each
    read in this process."""
    engine = tesseract_lib.engine()
    if request.param == "in this process" and engine is None:
        pytest.skip("libtesseract does not load in this process")
    if request.param == "as processes":
        monkeypatch.setattr(tesseract_lib, "engine", lambda languages="eng": None)
    processes: list[int] = []
    run_pages = ocr.run_tesseract_pages
    monkeypatch.setattr(ocr, "run_tesseract_pages", lambda images, *a, **k: processes.append(len(images)) or run_pages(images, *a, **k))
    read: list[int] = []
    if engine is not None:
        engine_read = engine.read
        monkeypatch.setattr(engine, "read", lambda images, *a: read.append(len(images)) or engine_read(images, *a))
    return request.param, processes, read


@needs_tesseract
def test_reading_a_documents_pictures_together_reads_each_as_a_process_of_its_own_would(glyph_exam, glyph_tesseract):
    pdf, _ = glyph_exam
    pictures = _variant_pictures(pymupdf.open(pdf))
    how, processes, read = glyph_tesseract
    alone = {digest: _one_process_per_attempt(page, rect) for page, rect, digest in pictures}
    attempts = len(processes)
    processes.clear()
    reader = GlyphReader(tesseract=True)
    for page, rect, digest in pictures:
        reader.add(page, [(rect, digest)])
    reader.read_pending()
    assert reader.readings == alone
    assert len([r for r in alone.values() if r and r != "."]) >= 15 and None not in alone.values()
    if how == "in this process":  # each picture read at the attempts a process of its own makes, no more
        assert processes == [] and sum(read) == attempts
    else:  # rings, numbers at psm 7, the numbers psm 7 missed at psm 10
        assert len(processes) <= 3 < len(pictures)


@needs_tesseract
def test_an_exam_s_glyph_pictures_take_a_few_tesseract_processes_at_most(glyph_exam, glyph_tesseract):
    pdf, _ = glyph_exam
    how, processes, read = glyph_tesseract
    extract_items(pdf, ExtractOptions())
    if how == "in this process":
        assert processes == [] and sum(read) >= 20
    else:
        assert len(processes) <= 3 and sum(processes) >= 20


@needs_tesseract
def test_tesseract_in_this_process_finds_the_words_and_boxes_the_program_finds(glyph_exam):
    engine = tesseract_lib.engine()
    if engine is None:
        pytest.skip("libtesseract does not load in this process")
    pdf, _ = glyph_exam
    crops = [found for page, rect, _ in _variant_pictures(pymupdf.open(pdf))
             if isinstance(found := by_shape(page, rect), Crop)]
    for psm, whitelist in ((7, "0123456789.,()%+-/"), (10, "0123456789"), (6, "")):
        images = [framed(crop.gray, scale) for crop in crops for scale in (1, 2)]
        program = ocr.run_tesseract_pages(images, psm=psm, languages="eng",
                                          extra=("-c", f"tessedit_char_whitelist={whitelist}"))
        assert engine.read(images, psm, whitelist) == program
        assert sum(map(len, program)) >= len(crops)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_process_reads_with_a_tesseract_of_its_own():
    engine = tesseract_lib.engine()
    if engine is None:
        pytest.skip("libtesseract does not load in this process")
    with engine._lock:  # the parent is reading (in another thread) when it forks
        pid = os.fork()
        if pid == 0:
            own = tesseract_lib.engine()
            os._exit(0 if own is not None and own is not engine and own.read([framed(np.full((30, 30), 255, np.uint8), 1)],
                                                                              7, "0123456789") == [[]] else 1)
    for _ in range(300):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked process waited for its parent's Tesseract")
    assert os.waitstatus_to_exitcode(status) == 0
