"""A drawn figure's crop covers everything it draws: a ground line or an axis drawn as one
straight line of its own (a box with no area, which PyMuPDF's `Rect |=` would skip) included."""

from __future__ import annotations

import pymupdf

from curation.extract.pipeline import ExtractOptions, extract_items


def test_a_lone_straight_line_belongs_to_the_figure(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_font(fontname="kr", fontbuffer=pymupdf.Font("korea").buffer)
    page.insert_text((60, 100), "1. 그림에서 전선의 종류는?", fontname="kr", fontsize=11)
    page.draw_polyline([(120, 200), (160, 130), (200, 200)], closePath=True)  # the front
    page.draw_line((80, 200), (260, 200))  # the ground line, wider than the front
    page.draw_line((100, 120), (100, 200))  # an axis
    for y, (marker, option) in enumerate(zip("①②③④", ["한랭 전선", "온난 전선", "정체 전선", "폐색 전선"], strict=True)):
        page.insert_text((74, 240 + 18 * y), f"{marker} {option}", fontname="kr", fontsize=11)
    doc.save(tmp_path / "front.pdf")
    item, = extract_items(tmp_path / "front.pdf", ExtractOptions()).items
    figure, = item.images
    x0, y0, x1, y1 = figure.provenance.bbox
    assert (x0, x1) == (80, 260)  # the ground line's ends, not the front's (120, 200)
    assert y0 <= 120 and y1 >= 200
