"""From a page's glyphs to lines in reading order: a column-aware, character-level pass.

Glyphs come from `rawdict` (per-glyph boxes); the gutter comes from a vertical rule or, failing
that, from an x-histogram of glyph coverage; lines are rebuilt from glyph bands in each region,
glyphs sorted by x within a line (so a producer's odd content-stream order does not matter),
superscripts/subscripts told apart by size and baseline and written as LaTeX.
"""

from __future__ import annotations

import bisect
import statistics
import unicodedata
from collections import Counter
from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter

from curation.extract.formulas import render_line
from curation.extract.lines import CIRCLED_MARKERS, FULL, LEFT, RIGHT, Cell, Line
from curation.extract.page_cache import page_drawings
from curation.pymupdf_light import pymupdf

TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_PRESERVE_LIGATURES | pymupdf.TEXT_MEDIABOX_CLIP
WATERMARK_LUMINANCE = 0.8
_X_THEN_BASELINE = attrgetter("x0", "baseline")
_X0, _Y0, _X1, _Y1, _SIZE = attrgetter("x0"), attrgetter("y0"), attrgetter("x1"), attrgetter("y1"), attrgetter("size")
_LINE_ID, _BAND = attrgetter("line_id"), attrgetter("band")


@dataclass(slots=True)
class Glyph:
    c: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float
    baseline: float
    line_id: int  # the PDF engine's own line (used only to decide what crosses the gutter)
    core_top: float  # top of the x-height band (`core_top_of`), stable across fonts whose ascender boxes differ
    band: float  # core_top + baseline: the key lines are banded by (`_band_lines`)
    picture: bool = False  # read from a small picture of the character (glyph_pictures.py)
    space_at: float | None = None  # x0 of a space the PDF wrote right after this glyph (spaces are not glyphs)


def core_top_of(baseline: float, size: float) -> float:
    return baseline - 0.72 * size


@dataclass
class PageGlyphs:
    glyphs: list[Glyph]
    dropped_watermark: int = 0


def page_glyphs(page: pymupdf.Page) -> PageGlyphs:
    """Horizontal, visible glyphs; rotated or very light text (watermarks) is counted and dropped.
    A space is not a glyph: where the PDF wrote one, the glyph before it records it (`space_at`),
    so the line builder can tell a narrow written space from kerning."""
    raw = page.get_text("rawdict", flags=TEXT_FLAGS)
    glyphs: list[Glyph] = []
    dropped = 0
    line_id = 0
    append = glyphs.append
    for block in raw["blocks"]:
        if block.get("type") != 0:
            continue
        for line in block["lines"]:
            line_id += 1
            dx, dy = line["dir"]
            horizontal = dx > 0.99 and abs(dy) < 0.02
            for span in line["spans"]:
                if not horizontal or _luminance(span["color"]) > WATERMARK_LUMINANCE:
                    dropped += len(span["chars"])
                    continue
                size = span["size"]
                x_height = 0.72 * size
                for char in span["chars"]:
                    c = char["c"]
                    if c.isspace():
                        if glyphs and glyphs[-1].line_id == line_id and glyphs[-1].space_at is None:
                            glyphs[-1].space_at = char["bbox"][0]
                        continue
                    x0, y0, x1, y1 = char["bbox"]
                    baseline = char["origin"][1]
                    core_top = baseline - x_height
                    append(Glyph(c, x0, y0, x1, y1, size, baseline, line_id, core_top, core_top + baseline))
    return PageGlyphs(glyphs, dropped)


def _luminance(color: int) -> float:
    red, green, blue = (color >> 16) & 255, (color >> 8) & 255, color & 255
    return (0.299 * red + 0.587 * green + 0.114 * blue) / 255


# -- columns ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Gutter:
    x: float
    top: float | None = None  # extent of a drawn rule; None when found from the histogram
    bottom: float | None = None
    more: tuple[float, ...] = ()  # further gutters, left to right: a page of three columns

    @property
    def xs(self) -> tuple[float, ...]:
        return (self.x, *self.more)


def find_gutter(page: pymupdf.Page, glyphs: list[Glyph]) -> Gutter | None:
    width, height = page.rect.width, page.rect.height
    rule = _vertical_rule(page, width, height)
    if rule is not None:
        return rule
    return _histogram_gutter(glyphs, width)


def _vertical_rule(page: pymupdf.Page, width: float, height: float) -> Gutter | None:
    best: Gutter | None = None
    thirds: dict[int, Gutter] = {}  # rules near a third and two thirds of the width: three columns
    for path in page_drawings(page):
        x0, y0, x1, y1 = path["rect"]
        rule_height = max(0.0, y1 - y0)
        if x1 - x0 >= 2.5 or rule_height <= 0.3 * height:
            continue
        rule = Gutter((x0 + x1) / 2, y0, y1)
        third = 1 if 0.25 * width < rule.x < 0.42 * width else 2 if 0.58 * width < rule.x < 0.75 * width else 0
        if third and (third not in thirds or rule_height > (thirds[third].bottom or 0) - (thirds[third].top or 0)):
            thirds[third] = rule
        if 0.35 * width < x0 < 0.65 * width:
            if best is None or rule_height > (best.bottom or 0) - (best.top or 0):
                best = rule
    if len(thirds) == 2:
        first, second = thirds[1], thirds[2]
        return Gutter(first.x, min(first.top or 0, second.top or 0), max(first.bottom or 0, second.bottom or 0),
                      more=(second.x,))
    return best


def _histogram_gutter(glyphs: list[Glyph], width: float) -> Gutter | None:
    if len(glyphs) < 40:
        return None
    step = 2.0
    bins = [0] * (int(width / step) + 2)
    for glyph in glyphs:
        for index in range(max(0, int(glyph.x0 / step)), min(len(bins), int(glyph.x1 / step) + 1)):
            bins[index] += 1
    low, high = int(0.3 * width / step), int(0.7 * width / step)
    body = sorted(count for count in bins[int(0.1 * width / step): int(0.9 * width / step)] if count)
    if not body:
        return None
    typical = body[len(body) // 2]
    floor = min(bins[low:high])
    if floor > 0.15 * typical:
        return None
    best_start, best_len, start = None, 0, None
    for index in range(low, high + 1):
        quiet = index < high and bins[index] <= floor
        if quiet and start is None:
            start = index
        elif not quiet and start is not None:
            if index - start > best_len:
                best_start, best_len = start, index - start
            start = None
    if best_start is None or best_len * step < 4:
        return None
    if _quiet_runs(bins, int(0.1 * width / step), int(0.9 * width / step), max(1, int(0.05 * typical)), step) > 2:
        return None  # many empty vertical bands: a table, not two columns of text
    three = _three_columns(bins, glyphs, width, step, max(floor, int(0.05 * typical)))
    if three is not None:
        return three
    x = (best_start + best_len / 2) * step
    left = sum(1 for g in glyphs if g.x1 <= x)
    if left < 0.15 * len(glyphs) or len(glyphs) - left < 0.15 * len(glyphs):
        return None
    return Gutter(x)


def _three_columns(bins: list[int], glyphs: list[Glyph], width: float, step: float, floor: int) -> Gutter | None:
    """Two quiet bands near a third and two thirds of the width, each column holding text."""
    bands: list[float] = []
    start = None
    low, high = int(0.2 * width / step), int(0.8 * width / step)
    for index in range(low, high + 1):
        quiet = index < high and bins[index] <= floor
        if quiet and start is None:
            start = index
        elif not quiet and start is not None:
            if (index - start) * step >= 4:
                bands.append((start + (index - start) / 2) * step)
            start = None
    if len(bands) != 2 or not (0.25 * width < bands[0] < 0.42 * width and 0.58 * width < bands[1] < 0.75 * width):
        return None
    counts = [sum(1 for g in glyphs if lo <= (g.x0 + g.x1) / 2 < hi)
              for lo, hi in ((0, bands[0]), (bands[0], bands[1]), (bands[1], width))]
    if min(counts) < 0.15 * len(glyphs):
        return None
    return Gutter(bands[0], more=(bands[1],))


def _quiet_runs(bins: list[int], low: int, high: int, floor: int, step: float) -> int:
    runs, length = 0, 0
    for count in bins[low:high] + [floor + 1]:
        if count <= floor:
            length += 1
            continue
        if length * step >= 8:
            runs += 1
        length = 0
    return runs


# -- lines ----------------------------------------------------------------------------------------
def cluster_lines(glyphs: list[Glyph]) -> list[list[Glyph]]:
    """Glyphs grouped into lines by overlapping x-height bands; small glyphs (scripts) then join
    the line on whose baseline they sit, even when tight leading puts them nearer the line above."""
    body = _body_size(glyphs)
    small = [g for g in glyphs if g.size < 0.85 * body]
    if not small:
        return _band_lines(glyphs)
    small_ids = {id(g) for g in small}
    zoned = sorted(((_script_zone(line), line) for line in _band_lines([g for g in glyphs if id(g) not in small_ids])),
                   key=lambda pair: pair[0][2])
    zones = [zone for zone, _ in zoned]
    lines = [line for _, line in zoned]
    centres = [zone[2] for zone in zones]
    leftover = []
    for glyph in small:
        middle = glyph.baseline - 0.35 * glyph.size
        near = bisect.bisect_left(centres, middle)  # the lines whose x-height middle is nearest
        hosts = [(abs(zones[index][2] - middle), index) for index in range(max(0, near - 3), min(len(zones), near + 3))
                 if zones[index][0] <= middle <= zones[index][1] and zones[index][3] <= glyph.x0 <= glyph.x1 <= zones[index][4]]
        if hosts:
            lines[min(hosts)[1]].append(glyph)
        else:
            leftover.append(glyph)
    lines += _band_lines(leftover)
    return sorted(lines, key=lambda line: min(map(_BAND, line)))


def _body_size(glyphs: list[Glyph]) -> float:
    sizes = Counter(map(_SIZE, glyphs))
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _script_zone(line: list[Glyph]) -> tuple[float, float, float, float, float]:
    """(top, bottom, middle of the x-height, left, right): where a script of this line can sit."""
    size = max(map(_SIZE, line))
    baseline = statistics.median([g.baseline for g in line if g.size >= 0.85 * size])
    return (baseline - 0.9 * size, baseline + 0.35 * size, baseline - 0.36 * size,
            min(map(_X0, line)) - size, max(map(_X1, line)) + size)


def _band_lines(glyphs: list[Glyph]) -> list[list[Glyph]]:
    lines: list[list[Glyph]] = []
    line: list[Glyph] | None = None
    band_top = band_bottom = largest = 0.0
    for glyph in sorted(glyphs, key=_BAND):  # (written out with plain comparisons: it runs for every glyph)
        top, bottom = glyph.core_top, glyph.baseline
        if line is not None:
            overlap = (band_bottom if band_bottom < bottom else bottom) - (band_top if band_top > top else top)
            height, band_height = bottom - top, band_bottom - band_top
            if overlap >= 0.5 * (height if height < band_height else band_height):
                line.append(glyph)
                if glyph.size >= 0.85 * largest:
                    band_top = top if top < band_top else band_top
                    band_bottom = bottom if bottom > band_bottom else band_bottom
                    largest = glyph.size if glyph.size > largest else largest
                continue
        line = [glyph]
        lines.append(line)
        band_top, band_bottom, largest = top, bottom, glyph.size
    return lines


def build_line(glyphs: list[Glyph], page: int, region: int) -> Line:
    glyphs = _dedupe(sorted(glyphs, key=_X_THEN_BASELINE))
    size = _common_size(glyphs)
    baseline = statistics.median([g.baseline for g in glyphs if abs(g.size - size) < 0.15])
    small, cell_gap, space_gap, maybe_space_gap = 0.85 * size, 1.5 * size, 0.11 * size, 0.06 * size
    cells: list[Cell] = []
    current: list[tuple[str, str]] = []
    cell_x0 = cell_x1 = 0.0
    previous: Glyph | None = None
    for glyph in glyphs:
        if previous is not None:
            gap = glyph.x0 - previous.x1
            if gap > cell_gap:
                cells.append(Cell(cell_x0, cell_x1, _text(current)))
                current = []
            elif gap > space_gap or (gap > maybe_space_gap and _spaced(previous, glyph)):
                current.append((" ", ""))
        if not current:  # a new cell starts here
            cell_x0 = glyph.x0
        current.append((glyph.c, "" if glyph.size > small else _script_kind(glyph, size, baseline)))
        cell_x1 = glyph.x1
        previous = glyph
    cells.append(Cell(cell_x0, cell_x1, _text(current)))
    markers = [(g.c, g.x0, g.x1) for g in glyphs if g.c in CIRCLED_MARKERS]
    bbox = (min(map(_X0, glyphs)), min(map(_Y0, glyphs)), max(map(_X1, glyphs)), max(map(_Y1, glyphs)))
    text = " ".join(cell.text for cell in cells)
    return Line(page, region, bbox, text, size, cells, markers, pictures=any(g.picture for g in glyphs))


def _common_size(glyphs: list[Glyph]) -> float:
    """The most common glyph size to 0.1 pt (the first seen among equals)."""
    sizes = Counter(map(_SIZE, glyphs))
    if len(sizes) == 1:
        return round(next(iter(sizes)), 1)
    rounded: Counter[float] = Counter()
    for value, count in sizes.items():  # in order of first appearance, as Counter.most_common breaks ties
        rounded[round(value, 1)] += count
    return rounded.most_common(1)[0][0]


def _text(glyphs: list[tuple[str, str]]) -> str:
    return unicodedata.normalize("NFC", render_line(glyphs)).strip()


def _spaced(previous: Glyph, glyph: Glyph) -> bool:
    """The PDF wrote a space between the two."""
    return previous.space_at is not None and previous.x1 - 0.5 <= previous.space_at <= glyph.x0 + 0.5


def _dedupe(glyphs: list[Glyph]) -> list[Glyph]:
    """Drop glyphs printed twice at (almost) the same place: fake bold by overprinting."""
    kept: list[Glyph] = []
    last = second = None  # the last two kept
    for glyph in glyphs:
        # the character test first: it is cheap and almost always settles it
        if (last is not None and last.c == glyph.c and _same_place(last, glyph)
                or second is not None and second.c == glyph.c and _same_place(second, glyph)):
            continue
        kept.append(glyph)
        second, last = last, glyph
    return kept


def _same_place(a: Glyph, b: Glyph) -> bool:
    return a.c == b.c and abs(a.x0 - b.x0) < 0.6 and abs(a.baseline - b.baseline) < 0.6


def _script_kind(glyph: Glyph, size: float, baseline: float) -> str:
    if glyph.size > 0.85 * size:
        return ""
    if glyph.baseline < baseline - 0.15 * size:
        return "sup"
    if glyph.baseline > baseline + 0.08 * size:
        return "sub"
    return ""


# -- page -----------------------------------------------------------------------------------------
def split_regions(glyphs: list[Glyph], gutter: Gutter | None) -> dict[int, list[Glyph]]:
    """Assign glyphs to full width / left / right (/ third column, region 3): a line crossing a
    gutter is full width."""
    regions: dict[int, list[Glyph]] = {FULL: [], LEFT: [], RIGHT: []}
    if gutter is None:
        regions[FULL] = glyphs
        return regions
    xs = gutter.xs
    if gutter.more:
        regions[LEFT + len(xs)] = []
    engine_lines: dict[int, list[Glyph]] = {}
    for line_id, run in groupby(glyphs, _LINE_ID):
        if line_id in engine_lines:
            engine_lines[line_id] += run
        else:
            engine_lines[line_id] = list(run)
    columns = [regions[region] for region in range(LEFT, LEFT + len(xs) + 1)]
    twice_xs = [2 * x for x in xs]  # a glyph's x0 + x1 against these: twice its centre, no division
    ruled = gutter.top is not None and gutter.bottom is not None
    twice_top, twice_bottom = 2 * ((gutter.top or 0) - 2), 2 * ((gutter.bottom or 0) + 2)
    full = regions[FULL]
    for line in engine_lines.values():
        if _crosses(line, gutter):
            full += line
            continue
        for glyph in line:
            if ruled and not twice_top <= glyph.y0 + glyph.y1 <= twice_bottom:
                full.append(glyph)
            else:
                columns[bisect.bisect_right(twice_xs, glyph.x0 + glyph.x1)].append(glyph)
    return regions


def _crosses(line: list[Glyph], gutter: Gutter) -> bool:
    return any(_crosses_at(line, x) for x in gutter.xs)


def _crosses_at(line: list[Glyph], x: float) -> bool:
    """A glyph straddles `x`, or the glyphs either side of it are closer than a wide gap."""
    lowest, highest, twice = x - 0.5, x + 0.5, 2 * x
    left_end = right_start = None
    for g in line:
        if g.x0 < lowest and g.x1 > highest:
            return True
        if g.x0 + g.x1 < twice:  # its centre is left of x
            if left_end is None or g.x1 > left_end:
                left_end = g.x1
        elif right_start is None or g.x0 < right_start:
            right_start = g.x0
    if left_end is None or right_start is None:
        return False
    return right_start - left_end < 1.2 * max(map(_SIZE, line))


def page_lines(page: pymupdf.Page, page_number: int, glyphs: list[Glyph]) -> tuple[list[Line], Gutter | None]:
    """Lines of one page in reading order: full-width lines cut the page into slices; in each
    slice the left column is read before the right one."""
    gutter = find_gutter(page, glyphs)
    regions = split_regions(glyphs, gutter)
    by_region = {region: [build_line(group, page_number, region) for group in cluster_lines(members)]
                 for region, members in regions.items()}
    return order_lines(by_region), gutter


def order_lines(by_region: dict[int, list[Line]]) -> list[Line]:
    full = sorted(by_region[FULL], key=lambda line: line.bbox[1])
    column_regions = sorted(region for region in by_region if region != FULL)
    columns = {region: sorted(by_region[region], key=lambda line: line.bbox[1]) for region in column_regions}
    ordered: list[Line] = []
    cuts = [line.bbox[1] for line in full] + [float("inf")]
    previous_cut = float("-inf")
    for index, cut in enumerate(cuts):
        for region in column_regions:
            ordered += [line for line in columns[region] if previous_cut <= _mid(line) < cut]
        if index < len(full):
            ordered.append(full[index])
        previous_cut = cut
    return ordered


def _mid(line: Line) -> float:
    return (line.bbox[1] + line.bbox[3]) / 2
