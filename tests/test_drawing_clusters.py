"""Our clustering of drawings gives what PyMuPDF's `Page.cluster_drawings` gives, on every page of
the sample exam's layouts, on random line art, and on the real CSAT booklet."""

from __future__ import annotations

import random

import pymupdf
import pytest

from curation.extract.page_cache import cluster_boxes
from curation.sample_exam import write_sample_exam
from curation.sample_exam.variants import VARIANTS


def same_as_pymupdf(page: pymupdf.Page) -> None:
    drawings = page.get_drawings()
    expected = [tuple(rect) for rect in page.cluster_drawings(drawings=drawings)] if drawings else []
    assert cluster_boxes(tuple(page.rect), [tuple(d["rect"]) for d in drawings]) == expected


@pytest.mark.parametrize("variant", [None, *VARIANTS])
def test_sample_exam_pages(tmp_path, variant):
    pdf, _ = write_sample_exam(tmp_path / "exam.pdf", variant=variant)
    for page in pymupdf.open(pdf):
        same_as_pymupdf(page)


def test_random_line_art():
    rng = random.Random(7)
    doc = pymupdf.open()
    for _ in range(5):
        page = doc.new_page()
        for _ in range(120):
            x, y = rng.uniform(-20, 600), rng.uniform(-20, 850)  # some outside the page
            kind = rng.choice("lrc")
            if kind == "l":
                page.draw_line((x, y), (x + rng.choice([0, rng.uniform(-40, 40)]), y + rng.choice([0, rng.uniform(-40, 40)])))
            elif kind == "r":
                page.draw_rect(pymupdf.Rect(x, y, x + rng.uniform(1, 60), y + rng.uniform(1, 60)))
            else:
                page.draw_circle((x, y), rng.uniform(1, 15))
        same_as_pymupdf(page)


@pytest.mark.realdata
def test_csat_booklet(realdata):
    for page in pymupdf.open(realdata / "ksat2025_english" / "2025_english_questions_odd.pdf"):
        same_as_pymupdf(page)
