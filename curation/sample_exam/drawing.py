"""The sample exam's pictures: a raster chart and weather symbols drawn with Pillow, a formula
rendered to an image, and a vector diagram drawn with PDF path commands."""

from __future__ import annotations

from PIL import Image, ImageDraw

from curation.imaging import pixmap_image, png_bytes
from curation.pymupdf_light import pymupdf


def temperature_profile_chart(seed: int) -> bytes:
    """Temperature against height with an inversion between 0.5 and 1.0 km (axes and ticks, no text)."""
    width, height = 400, 240
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    left, bottom, top, right = 40, 210, 15, 385
    draw.line([(left, top), (left, bottom), (right, bottom)], fill="black", width=2)
    for tick in range(7):  # height ticks every 0.5 km
        y = bottom - tick * (bottom - top) / 6
        draw.line([(left - 6, y), (left, y)], fill="black", width=1)
        draw.line([(left + 1, y), (right, y)], fill=(215, 215, 215), width=1)
    for tick in range(1, 7):
        x = left + tick * (right - left) / 6
        draw.line([(x, bottom), (x, bottom + 6)], fill="black", width=1)
    # (temperature in 0..1 of the axis, height in km): cooling, inversion 0.5-1.0 km, cooling again
    shift = (seed % 5) * 0.01
    profile = [(0.55 + shift, 0.0), (0.50 + shift, 0.5), (0.62 + shift, 1.0), (0.52 + shift, 1.5),
               (0.42 + shift, 2.0), (0.32 + shift, 2.5), (0.22 + shift, 3.0)]
    points = [(left + t * (right - left), bottom - h / 3.0 * (bottom - top)) for t, h in profile]
    draw.line(points, fill=(200, 30, 30), width=3)
    for x, y in points:
        draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=(200, 30, 30))
    return png_bytes(image)


def weather_symbol(name: str) -> bytes:
    """A 72x72 weather map symbol: fog (three bars), rain (dot), snow (star), thunder (bolt)."""
    image = Image.new("RGB", (72, 72), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([1, 1, 70, 70], outline=(120, 120, 120), width=1)
    if name == "fog":
        for y in (24, 36, 48):
            draw.line([(14, y), (58, y)], fill="black", width=5)
    elif name == "rain":
        draw.ellipse([24, 24, 48, 48], fill="black")
    elif name == "snow":
        for start, end in (((36, 14), (36, 58)), ((17, 25), (55, 47)), ((17, 47), (55, 25))):
            draw.line([start, end], fill="black", width=5)
    elif name == "thunder":
        draw.line([(42, 10), (26, 38), (46, 38), (30, 62)], fill="black", width=5)
        draw.polygon([(24, 54), (34, 66), (38, 52)], fill="black")
    else:
        raise ValueError(f"no symbol {name!r}")
    return png_bytes(image)


def formula_image(font: pymupdf.Font) -> bytes:
    """The hydrostatic equation as a picture (as old exams print formulas)."""
    doc = pymupdf.open()
    page = doc.new_page(width=120, height=26)
    writer = pymupdf.TextWriter(page.rect)
    writer.append((8, 18), "dp/dz = -ρg", font=font, fontsize=14)
    writer.write_text(page)
    pixmap = page.get_pixmap(matrix=pymupdf.Matrix(2, 2), colorspace=pymupdf.csGRAY, alpha=False)
    return png_bytes(pixmap_image(pixmap))


def draw_front_section(page: pymupdf.Page, rect: pymupdf.Rect) -> None:
    """A cold-front cross-section: ground, a steep frontal surface, cumulonimbus outline, arrows."""
    shape = page.new_shape()
    x0, y0, x1, y1 = rect.x0, rect.y0, rect.x1, rect.y1
    sx, sy = rect.width / 200, rect.height / 90  # drawn for 200 × 90 points, scaled to the rect
    ground = y1 - 8 * sy
    shape.draw_line((x0 + 4 * sx, ground), (x1 - 4 * sx, ground))
    shape.finish(color=(0, 0, 0), width=1.5)
    shape.draw_bezier((x0 + 40 * sx, ground), (x0 + 70 * sx, ground - 20 * sy), (x0 + 90 * sx, ground - 60 * sy), (x0 + 100 * sx, y0 + 14 * sy))
    shape.finish(color=(0, 0, 0.6), width=2)
    cloud = [(x0 + 95 * sx, y0 + 50 * sy), (x0 + 100 * sx, y0 + 22 * sy), (x0 + 120 * sx, y0 + 10 * sy), (x0 + 140 * sx, y0 + 20 * sy),
             (x0 + 150 * sx, y0 + 48 * sy), (x0 + 95 * sx, y0 + 50 * sy)]
    shape.draw_polyline(cloud)
    shape.finish(color=(0.3, 0.3, 0.3), fill=(0.85, 0.85, 0.85), width=1)
    for start in ((x0 + 20 * sx, ground - 30 * sy), (x0 + 20 * sx, ground - 50 * sy)):
        end = (start[0] + 40 * sx, start[1])
        shape.draw_line(start, end)
        shape.draw_polyline([(end[0] - 6 * sx, end[1] - 4 * sy), end, (end[0] - 6 * sx, end[1] + 4 * sy)])
    shape.finish(color=(0, 0, 0), width=1)
    shape.draw_line((x0 + 160 * sx, ground - 12 * sy), (x0 + 190 * sx, ground - 40 * sy))
    shape.draw_polyline([(x0 + 183 * sx, ground - 38 * sy), (x0 + 190 * sx, ground - 40 * sy), (x0 + 188 * sx, ground - 33 * sy)])
    shape.finish(color=(0.6, 0, 0), width=1)
    shape.commit()
