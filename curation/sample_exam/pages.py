"""Page model of the sample exam: positioned runs, images and drawings, and how they are written.

Content-stream order is a choice here: `column` order writes the left column, then the right one
(what most producers do); `interleaved` writes the two columns' lines alternately by height, which
looks the same on paper but defeats extractors that trust stream order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from curation.pymupdf_light import pymupdf
from curation.sample_exam.typeset import Run

PAGE_WIDTH, PAGE_HEIGHT = 595.0, 842.0
FULL, LEFT, RIGHT = 0, 1, 2  # where a run sits: full width, left column, right column


@dataclass
class PageContent:
    runs: list[tuple[int, int, Run]] = field(default_factory=list)  # (region, sequence, run)
    images: list[tuple[pymupdf.Rect, bytes]] = field(default_factory=list)
    drawings: list[Callable[[pymupdf.Page], object]] = field(default_factory=list)  # results unused
    gutter_rule: tuple[float, float] | None = None  # y range of the vertical rule between columns
    gutter_xs: tuple[float, ...] = (PAGE_WIDTH / 2,)  # where the rules are drawn (two for three columns)

    def add(self, region: int, runs: list[Run]) -> None:
        for run in runs:
            self.runs.append((region, len(self.runs), run))


def stream_order(runs: list[tuple[int, int, Run]], interleave: bool) -> list[Run]:
    if not interleave:
        return [run for _, _, run in sorted(runs, key=lambda entry: (max(entry[0] - LEFT, 0), entry[1]))]
    # by line height first, so left and right column lines alternate in the stream
    return [run for _, _, run in sorted(runs, key=lambda entry: (round(entry[2].baseline / 2), entry[0], entry[1]))]


def write_page(doc: pymupdf.Document, content: PageContent, font: pymupdf.Font, *, interleave: bool,
               watermark: str) -> pymupdf.Page:
    page = doc.new_page(width=PAGE_WIDTH, height=PAGE_HEIGHT)
    for draw in content.drawings:
        draw(page)
    if content.gutter_rule is not None:
        for x in content.gutter_xs:
            page.draw_line((x, content.gutter_rule[0]), (x, content.gutter_rule[1]), color=(0.4, 0.4, 0.4), width=0.6)
    for rect, png in content.images:
        page.insert_image(rect, stream=png)
    writer = pymupdf.TextWriter(page.rect)
    for run in stream_order(content.runs, interleave):
        writer.append((run.x, run.baseline), run.text, font=font, fontsize=run.size)
    writer.write_text(page)
    mark = pymupdf.TextWriter(page.rect, color=(0.88, 0.88, 0.92))
    mark.append((170, 470), watermark, font=font, fontsize=34)
    mark.write_text(page, morph=(pymupdf.Point(297, 421), pymupdf.Matrix(-30)))
    return page
