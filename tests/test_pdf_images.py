"""Embedded pictures read straight from their stream give MuPDF's pixels, and every picture the
fast path does not cover (predictor, decode array, other colour spaces, a damaged stream) still
comes out as MuPDF decodes it (PDFs written by the test)."""

from __future__ import annotations

import zlib

import numpy as np
import pymupdf
import pytest

from curation.extract import pdf_images
from curation.extract.pdf_images import embedded_image

WIDTH, HEIGHT = 90, 60


def pixels(channels: int) -> np.ndarray:
    ramp = (np.add.outer(np.arange(HEIGHT) * 3, np.arange(WIDTH) * 2) % 256).astype(np.uint8)
    return ramp if channels == 1 else np.dstack([ramp, ramp[::-1], 255 - ramp])


def pdf_with_picture(tmp_path, channels: int, **keys: str) -> tuple[pymupdf.Document, int]:
    """A page with one picture whose stream and dictionary the test writes itself."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_image(pymupdf.Rect(100, 100, 190, 160), pixmap=pymupdf.Pixmap(
        pymupdf.csGRAY if channels == 1 else pymupdf.csRGB, WIDTH, HEIGHT, pixels(channels).tobytes(), False))
    xref = page.get_images()[0][0]
    doc.update_stream(xref, zlib.compress(pixels(channels).tobytes()), compress=False)
    doc.xref_set_key(xref, "Filter", "/FlateDecode")
    doc.xref_set_key(xref, "DecodeParms", "null")
    doc.xref_set_key(xref, "ColorSpace", "/DeviceGray" if channels == 1 else "/DeviceRGB")
    for name, value in keys.items():
        doc.xref_set_key(xref, name, value)
    path = tmp_path / "picture.pdf"
    doc.save(path)
    return pymupdf.open(path), xref


def as_mupdf_decodes_it(doc: pymupdf.Document, xref: int) -> np.ndarray:
    pixmap = pymupdf.Pixmap(doc, xref)
    return np.frombuffer(pixmap.samples, np.uint8).reshape(pixmap.height, pixmap.width, -1).squeeze(-1 if pixmap.n == 1 else ())


@pytest.mark.parametrize("channels", [1, 3])
def test_plain_deflated_picture_is_read_from_its_stream(tmp_path, channels):
    doc, xref = pdf_with_picture(tmp_path, channels)
    assert pdf_images._inflated(doc, xref) is not None  # the fast path is taken
    image = embedded_image(doc, xref)
    assert image.mode == ("L" if channels == 1 else "RGB")
    assert np.array_equal(np.asarray(image), pixels(channels))
    assert np.array_equal(np.asarray(image), as_mupdf_decodes_it(doc, xref))


@pytest.mark.parametrize("keys", [
    {"Decode": "[1 0]"},  # inverted samples
    {"BitsPerComponent": "16", "Width": str(WIDTH // 2)},  # 16-bit samples: half as many pixels a row
    {"ColorSpace": "/DeviceCMYK", "Height": str(HEIGHT // 4)},
    {"Filter": "[/FlateDecode]"},
], ids=["decode-array", "16-bit", "cmyk", "filter-array"])
def test_other_pictures_are_left_to_mupdf(tmp_path, keys):
    doc, xref = pdf_with_picture(tmp_path, 1, **keys)
    assert pdf_images._inflated(doc, xref) is None
    image = embedded_image(doc, xref)
    expected = pymupdf.Pixmap(doc, xref)
    if expected.n not in (1, 3):
        expected = pymupdf.Pixmap(pymupdf.csRGB, expected)
    assert image.size == (expected.width, expected.height)
    assert image.tobytes() == expected.samples


def test_damaged_stream_is_left_to_mupdf(tmp_path):
    doc, xref = pdf_with_picture(tmp_path, 1)
    good = doc.xref_stream_raw(xref)
    doc.update_stream(xref, good[: len(good) // 2], compress=False)  # cut short: zlib fails, MuPDF keeps what it reads
    doc.xref_set_key(xref, "Filter", "/FlateDecode")  # (update_stream drops it)
    assert pdf_images._inflated(doc, xref) is None
    image = embedded_image(doc, xref)
    assert image.size == (WIDTH, HEIGHT)
    assert np.array_equal(np.asarray(image)[:1], pixels(1)[:1])  # what comes before the cut is the picture
