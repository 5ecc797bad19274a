"""A frame drawn round the page number on every page (as on CSAT booklets) is page furniture, not
a figure of the question above it; a drawing inside the question is still its figure."""

from __future__ import annotations

import pymupdf

from curation.extract.pipeline import ExtractOptions, extract_items

QUESTIONS = [("다음 그림에서 기압이 가장 높은 곳은?", ["가", "나", "다", "라"]),
             ("지균풍과 관계가 깊은 힘은?", ["전향력", "마찰력", "원심력", "중력"]),
             ("적란운에서 잘 나타나는 현상은?", ["뇌우", "안개", "무지개", "황사"])]


def write_exam(path):
    doc = pymupdf.open()
    for number, (stem, options) in enumerate(QUESTIONS, start=1):
        page = doc.new_page()  # A4, 842 pt: the bottom margin band starts at 758, the decoration band at 783
        page.insert_font(fontname="kr", fontbuffer=pymupdf.Font("korea").buffer)
        page.insert_text((60, 100), f"{number}. {stem}", fontname="kr", fontsize=11)
        if number == 1:  # the question's own drawing: an isobar sketch with a diagonal
            page.draw_circle((200, 200), 60)
            page.draw_line((140, 260), (260, 140))
        y = 300.0
        for marker, option in zip("①②③④", options, strict=True):
            page.insert_text((74, y), f"{marker} {option}", fontname="kr", fontsize=11)
            y += 18
        frame = pymupdf.Rect(270, 766, 320, 788)  # the page-number frame, split by a diagonal (as on CSAT booklets)
        page.draw_rect(frame)
        page.draw_line(frame.bl, frame.tr)
        page.insert_text((274, 778), str(number), fontsize=9)
        page.insert_text((308, 786), str(len(QUESTIONS)), fontsize=9)
    doc.save(path)
    return path


def test_page_number_frame_is_not_a_figure(tmp_path):
    extraction = extract_items(write_exam(tmp_path / "framed.pdf"), ExtractOptions())
    assert [(item.stem, [option.text for option in item.options]) for item in extraction.items] == QUESTIONS
    first, *rest = extraction.items
    assert [image.provenance.bbox[1] < 150 and image.provenance.bbox[3] > 250 for image in first.images] == [True]
    assert all(not item.images and not item.multimodal for item in rest)
    assert all(item.source.bbox[3] < 766 for item in extraction.items)  # no question reaches into the footer
