"""Figures on a page: embedded raster images and clustered vector drawings, cropped to PNG.

A raster keeps its own pixels (re-encoded canonically); a vector figure is rendered at
CROP_ZOOM over the union of its drawings. Frames and tables (only straight axis-aligned paths
around text), rules and page decorations are not figures. A small, wide raster beside text is
taken for a formula picture (kind "formula", LaTeX left to a person).
"""

from __future__ import annotations

from curation.extract.lines import FULL, LEFT, Box, Figure, Line, rect_box, union
from curation.extract.page_cache import (
    images_in_drawing_order,
    page_drawing_clusters,
    page_image_info,
    page_images,
)
from curation.extract.pdf_images import embedded_image
from curation.imaging import CROP_ZOOM, pixmap_image, png_bytes
from curation.pymupdf_light import pymupdf

GutterXs = float | tuple[float, ...] | None  # the gutter(s) between columns (a tuple for three columns)
MIN_FIGURE = 12.0  # points
MAX_PIXELS_PER_POINT = 4.0  # 288 dpi: larger embedded images are halved until below it
DECORATION_TOP, DECORATION_BOTTOM = 0.17, 0.93  # share of the page height


def page_figures(page: pymupdf.Page, page_number: int, gutter_x: GutterXs, lines: list[Line],
                 glyph_boxes: list[Box] | None = None) -> list[Figure]:
    """Figures of a page; pictures in `glyph_boxes` are characters (glyph_pictures.py), not figures."""
    rasters = [figure for figure in raster_figures(page, page_number, gutter_x) if figure.bbox not in (glyph_boxes or [])]
    figures = rasters + vector_figures(page, page_number, gutter_x, lines)
    return sorted(figures, key=lambda figure: (figure.bbox[1], figure.bbox[0]))


def region_of(box: Box, gutter_x: GutterXs) -> int:
    """FULL, LEFT, RIGHT or 3 (third column) for a box, given the gutter(s) of the page."""
    if gutter_x is None:
        return FULL
    xs = gutter_x if isinstance(gutter_x, tuple) else (gutter_x,)
    if any(box[0] < x - 2 and box[2] > x + 2 for x in xs):
        return FULL
    return LEFT + sum(1 for x in xs if (box[0] + box[2]) / 2 >= x)


def _decoration(box: Box, page: pymupdf.Page) -> bool:
    height = page.rect.height
    return box[3] < DECORATION_TOP * height or box[1] > DECORATION_BOTTOM * height


def raster_figures(page: pymupdf.Page, page_number: int, gutter_x: GutterXs) -> list[Figure]:
    page_area = page.rect.width * page.rect.height

    def wanted(info: dict) -> pymupdf.Rect | None:
        rect = pymupdf.Rect(info["bbox"]) & page.rect
        if rect.is_empty or rect.width < MIN_FIGURE or rect.height < MIN_FIGURE or _decoration(rect_box(rect), page):
            return None
        return None if rect.width * rect.height > 0.6 * page_area else rect  # a scanned page is not a figure

    infos = page_image_info(page)
    if not any(wanted(info) for info in infos):
        return []
    figures = []
    for info in _with_xrefs(page, infos):
        rect = wanted(info)
        if rect is None:
            continue
        box = rect_box(rect)
        png = _raster_png(page, info, rect)
        columns = 1 if gutter_x is None else 1 + (len(gutter_x) if isinstance(gutter_x, tuple) else 1)
        column_width = page.rect.width / columns
        kind = "formula" if rect.height <= 40 and rect.width <= 0.8 * column_width and rect.width >= 2 * rect.height else "raster"
        figures.append(Figure(page_number, region_of(box, gutter_x), box, png, kind))
    return figures


def _with_xrefs(page: pymupdf.Page, infos: list[dict]) -> list[dict]:
    """Image placements with their xref, matched by pixel size; when two different images share a
    size, by the order the page draws them; failing that, PyMuPDF's hash-based matching (slower:
    it decodes and hashes every image) decides."""
    images = page_images(page)
    by_size: dict[tuple[int, int], set[int]] = {}
    for entry in images:
        by_size.setdefault((entry[2], entry[3]), set()).add(entry[0])
    if all(len(by_size.get((info["width"], info["height"]), ())) == 1 for info in infos):
        return [info | {"xref": next(iter(by_size[(info["width"], info["height"])]))} for info in infos]
    drawn = images_in_drawing_order(page)
    sizes = {entry[0]: (entry[2], entry[3]) for entry in images}
    if drawn is not None and len(drawn) == len(infos) and all(
            sizes[xref] == (info["width"], info["height"]) for xref, info in zip(drawn, infos, strict=True)):
        return [info | {"xref": xref} for xref, info in zip(drawn, infos, strict=True)]
    return page.get_image_info(xrefs=True)


def _raster_png(page: pymupdf.Page, info: dict, rect: pymupdf.Rect) -> bytes:
    """The image's own pixels, halved while above MAX_PIXELS_PER_POINT of its printed size."""
    xref = info.get("xref", 0)
    if xref > 0:
        try:
            image = embedded_image(page.parent, xref)
            factor = 1
            while image.width / (2 * factor) >= MAX_PIXELS_PER_POINT * rect.width:
                factor *= 2
            return png_bytes(image.reduce(factor) if factor > 1 else image)
        except Exception:  # JBIG2 and other pictures MuPDF cannot decode, inline images: fall back to a render
            pass
    return render_crop(page, rect)


def render_crop(page: pymupdf.Page, rect: pymupdf.Rect) -> bytes:
    pixmap = page.get_pixmap(matrix=pymupdf.Matrix(CROP_ZOOM, CROP_ZOOM), clip=rect, alpha=False)
    return png_bytes(pixmap_image(pixmap))


def vector_figures(page: pymupdf.Page, page_number: int, gutter_x: GutterXs, lines: list[Line]) -> list[Figure]:
    """Drawn figures, their crops left empty: the caller renders those it keeps."""
    figures = []
    for cluster, members in page_drawing_clusters(page):
        box = _extent(members) if members else rect_box(cluster)
        rect = pymupdf.Rect(box)
        if rect.width < 30 or rect.height < 20 or _decoration(box, page):
            continue
        if _rectilinear(members) and _holds_text(rect, lines):
            continue  # a frame, a shaded header band or a table: its text is read as text
        if gutter_x is not None and rect.height > 0.3 * page.rect.height and rect.width < 4:
            continue
        figures.append(Figure(page_number, region_of(box, gutter_x), box, b"", "vector"))
    return figures


def _extent(members: list[dict]) -> Box:
    """Everything the members draw, a lone straight line (a ground line, an axis) included:
    PyMuPDF's `Rect |=` would skip such a line, for its box has no area."""
    return union([drawing["rect"] for drawing in members])


def _rectilinear(members: list[dict]) -> bool:
    for drawing in members:
        for item in drawing["items"]:
            if item[0] == "l":
                (start_x, start_y), (end_x, end_y) = item[1], item[2]
                if abs(start_x - end_x) > 0.5 and abs(start_y - end_y) > 0.5:
                    return False
            elif item[0] == "c" or item[0] == "qu" and not pymupdf.Quad(item[1]).is_rectangular:
                return False
    return True


def _holds_text(rect: pymupdf.Rect, lines: list[Line]) -> bool:
    """A line lies inside, or mostly inside (> 60 % of its area)."""
    box = rect_box(rect)
    for line in lines:
        if box_contains(box, line.bbox):
            return True
        x0, y0, x1, y1 = line.bbox
        area = (x1 - x0) * (y1 - y0)
        if area > 0 and _overlap_area(box, line.bbox) > 0.6 * area:
            return True
    return False


def box_contains(outer: Box, inner: Box) -> bool:
    return outer[0] <= inner[0] <= inner[2] <= outer[2] and outer[1] <= inner[1] <= inner[3] <= outer[3]  # as Rect.contains


def _overlap_area(a: Box, b: Box) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return width * height if width > 0 and height > 0 else 0.0


def figure_labels(figure: Figure, lines: list[Line]) -> list[Line]:
    """Text lines inside a vector figure without option markers: labels that belong to the picture."""
    return [line for line in lines if line.page == figure.page and not line.markers
            and box_contains(figure.bbox, line.bbox)]
