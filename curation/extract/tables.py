"""Ruled tables inside a question, kept as Markdown tables in the stem.

A table is a cluster of straight, axis-aligned drawings with at least two rows and two columns
of rules (a frame alone, like a 〈보기〉 box, is not a table). Each cell's text is rebuilt from
the glyphs whose centre lies in it (formulas as LaTeX, as in any line); the first row is the
header. Lines inside the table are tagged with it, so segmentation writes the table once, in
place of those lines. A table holding option markers is left alone: its rows are options.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from curation.extract.layout import Glyph, build_line, cluster_lines
from curation.extract.lines import CIRCLED_MARKERS, Box, Line
from curation.extract.page_cache import page_drawing_clusters, page_drawings
from curation.pymupdf_light import pymupdf

RULE_MIN = 8.0  # points: shorter strokes are not table rules
MERGE = 1.5  # rules closer than this are one rule


@dataclass(eq=False)
class Table:
    bbox: Box
    markdown: str


def find_tables(page: pymupdf.Page, glyphs: list[Glyph]) -> list[Table]:
    drawings = page_drawings(page)
    if len(drawings) < 4:
        return []
    grids = [rules for rules in map(_rules, (members for _, members in page_drawing_clusters(page)))
             if rules is not None and len(rules[0]) >= 3 and len(rules[1]) >= 3]
    if not grids:
        return []
    # a grid's glyphs are found by bisection on their height (twice their middle), not by a scan of the page
    order = sorted(range(len(glyphs)), key=lambda index: glyphs[index].y0 + glyphs[index].y1)
    middles = [glyphs[index].y0 + glyphs[index].y1 for index in order]
    tables = []
    for rows, columns in grids:
        band = sorted(order[bisect.bisect_left(middles, 2 * rows[0]):bisect.bisect_right(middles, 2 * rows[-1])])  # page order
        inside = [g for g in map(glyphs.__getitem__, band) if columns[0] <= (g.x0 + g.x1) / 2 <= columns[-1]]
        if not inside or any(g.c in CIRCLED_MARKERS for g in inside):
            continue  # an empty grid (a drawing), or options laid out in a table
        tables.append(Table((columns[0], rows[0], columns[-1], rows[-1]), markdown_table(_cells(inside, rows, columns))))
    return tables


def tag_table_lines(lines: list[Line], tables: list[Table]) -> None:
    for line in lines:
        centre_x, centre_y = (line.bbox[0] + line.bbox[2]) / 2, (line.bbox[1] + line.bbox[3]) / 2
        for table in tables:
            x0, y0, x1, y1 = table.bbox
            if x0 <= centre_x <= x1 and y0 <= centre_y <= y1:
                line.table = table


def markdown_table(cells: list[list[str]]) -> str:
    def row(values: list[str]) -> str:
        return "| " + " | ".join(value.replace("|", "\\|") for value in values) + " |"

    header, *body = cells
    return "\n".join([row(header), row(["---"] * len(header))] + [row(values) for values in body])


def _rules(members: list[dict]) -> tuple[list[float], list[float]] | None:
    """(y of each horizontal rule, x of each vertical rule), or None when a member is not straight."""
    horizontal: list[float] = []
    vertical: list[float] = []
    for drawing in members:
        for item in drawing["items"]:
            if item[0] == "l":
                (start_x, start_y), (end_x, end_y) = item[1], item[2]
                if abs(start_y - end_y) < 0.5 and abs(start_x - end_x) >= RULE_MIN:
                    horizontal.append((start_y + end_y) / 2)
                elif abs(start_x - end_x) < 0.5 and abs(start_y - end_y) >= RULE_MIN:
                    vertical.append((start_x + end_x) / 2)
                else:
                    return None
            elif item[0] == "re":
                x0, y0, x1, y1 = item[1]
                horizontal += [y0, y1]
                vertical += [x0, x1]
            else:
                return None
    return _merged(horizontal), _merged(vertical)


def _merged(values: list[float]) -> list[float]:
    merged: list[float] = []
    for value in sorted(values):
        if merged and value - merged[-1] < MERGE:
            continue
        merged.append(value)
    return merged


def _cells(glyphs: list[Glyph], rows: list[float], columns: list[float]) -> list[list[str]]:
    """The text of every cell: each glyph goes to the cell its centre is in."""
    members: list[list[list[Glyph]]] = [[[] for _ in columns[1:]] for _ in rows[1:]]
    for glyph in glyphs:
        row = min(bisect.bisect_right(rows, (glyph.y0 + glyph.y1) / 2) - 1, len(rows) - 2)
        column = min(bisect.bisect_right(columns, (glyph.x0 + glyph.x1) / 2) - 1, len(columns) - 2)
        members[row][column].append(glyph)
    return [[" ".join(build_line(group, 0, 0).text for group in cluster_lines(cell)) for cell in row] for row in members]
