"""One canonical PNG encoding, so the same pixels always give the same bytes (and blob name)."""

from __future__ import annotations

import io

from PIL import Image

CROP_ZOOM = 2.0  # vector figures and page regions are rendered at 144 dpi


def png_bytes(image: Image.Image) -> bytes:
    """PNG bytes of an image with fixed encoder settings and no metadata."""
    if image.mode not in ("L", "RGB"):
        image = image.convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False, compress_level=1)
    return buffer.getvalue()


def pixmap_image(pixmap) -> Image.Image:  # noqa: ANN001 - a pymupdf.Pixmap
    """A PIL image of a PyMuPDF pixmap (alpha dropped, gray kept gray)."""
    if pixmap.alpha:
        import pymupdf

        pixmap = pymupdf.Pixmap(pixmap, 0)
    if pixmap.n == 1:
        return Image.frombytes("L", (pixmap.width, pixmap.height), pixmap.samples)
    if pixmap.n != 3:
        import pymupdf

        pixmap = pymupdf.Pixmap(pymupdf.csRGB, pixmap)
    return Image.frombytes("RGB", (pixmap.width, pixmap.height), pixmap.samples)
