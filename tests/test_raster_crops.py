"""Crops of embedded pictures: the picture's own pixels, halved while above 4 px per printed point,
for gray, RGB, CMYK and transparent pictures (PDFs written by the test)."""

from __future__ import annotations

import io

import numpy as np
import pymupdf
import pytest
from PIL import Image

from curation.extract.figures import MAX_PIXELS_PER_POINT, raster_figures

PRINTED = pymupdf.Rect(100, 300, 250, 400)  # 150 x 100 pt, in the page body


def picture(mode: str, size: tuple[int, int]) -> Image.Image:
    """A gradient with a dark bar: rows and columns differ, so a wrong halving shows."""
    width, height = size
    ramp = (np.add.outer(np.arange(height) * 255 // height, np.arange(width) * 128 // width) % 256).astype(np.uint8)
    ramp[height // 3: height // 2, :] = 20
    gray = Image.fromarray(ramp, "L")
    if mode == "L":
        return gray
    rgb = Image.merge("RGB", (gray, gray.transpose(Image.Transpose.FLIP_LEFT_RIGHT), gray.transpose(Image.Transpose.FLIP_TOP_BOTTOM)))
    if mode == "RGBA":
        rgb.putalpha(200)
    return rgb.convert(mode) if mode != "RGB" else rgb


def crop_of(tmp_path, image: Image.Image, fmt: str) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **({"quality": 95} if fmt == "JPEG" else {}))
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_image(PRINTED, stream=buffer.getvalue(), keep_proportion=False)
    path = tmp_path / "picture.pdf"
    doc.save(path)
    figures = raster_figures(pymupdf.open(path)[0], 1, None)
    assert len(figures) == 1 and figures[0].bbox == pytest.approx(tuple(PRINTED), abs=0.01)
    return Image.open(io.BytesIO(figures[0].png))


@pytest.mark.parametrize(("mode", "fmt"), [("L", "PNG"), ("RGB", "PNG"), ("CMYK", "JPEG"), ("RGBA", "PNG")])
@pytest.mark.parametrize("size", [(2400, 1600), (500, 333), (3000, 900)])
def test_crop_keeps_the_pixels_halved_to_the_print_size(tmp_path, mode, fmt, size):
    original = picture(mode, size)
    crop = crop_of(tmp_path, original, fmt)
    factor = 1
    while size[0] / (2 * factor) >= MAX_PIXELS_PER_POINT * PRINTED.width:
        factor *= 2
    assert crop.size == (-(-size[0] // factor), -(-size[1] // factor))
    assert crop.size[0] < 2 * MAX_PIXELS_PER_POINT * PRINTED.width
    expected = original.convert("RGB" if mode != "L" else "L").reduce(factor)
    if mode == "CMYK":  # MuPDF converts through colour profiles, Pillow naively: compare the picture's shape
        got, want = (np.asarray(image.convert("L"), dtype=float).ravel() for image in (crop, expected))
        assert np.corrcoef(got, want)[0, 1] > 0.9  # a wrong halving or row stride gives ~0
        return
    difference = np.abs(np.asarray(crop.convert(expected.mode), dtype=int) - np.asarray(expected, dtype=int))
    assert difference.max() <= 2  # lossless pictures: equal but for rounding
