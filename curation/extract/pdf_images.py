"""The pixels of a picture embedded in a PDF, as a gray or RGB Pillow image.

Most exam pictures are 8-bit gray or RGB, deflated, with no predictor, decode array or colour-key
mask: their stream is the pixels, inflated here with zlib-ng (about three times as fast as MuPDF's
inflate on a large picture, which is most of a figure crop's cost). MuPDF decodes every other
picture: other filters and colour spaces, predictors, 1- and 16-bit samples, damaged streams.
A soft mask is ignored either way, as `pymupdf.Pixmap(doc, xref)` ignores it.
"""

from __future__ import annotations

from PIL import Image
from zlib_ng import zlib_ng

from curation.imaging import pixmap_image
from curation.pymupdf_light import pymupdf

_CHANNELS = {"/DeviceGray": 1, "/DeviceRGB": 3}
_NOT_SET = ("null", "null")


def embedded_image(doc: pymupdf.Document, xref: int) -> Image.Image:
    """The picture at `xref`, in gray or RGB (alpha dropped). Raises what MuPDF raises for a
    picture it cannot decode."""
    return _inflated(doc, xref) or _decoded_by_mupdf(doc, xref)


def _inflated(doc: pymupdf.Document, xref: int) -> Image.Image | None:
    """The picture read straight from its stream, or None when it is not a plain deflated one."""
    def key(name: str) -> tuple[str, str]:
        return doc.xref_get_key(xref, name)

    kind, colorspace = key("ColorSpace")
    channels = _CHANNELS.get(colorspace) if kind == "name" else None
    if channels is None or key("Filter") != ("name", "/FlateDecode") or key("BitsPerComponent") != ("int", "8"):
        return None
    if key("DecodeParms") not in (_NOT_SET, ("dict", "<<>>")) or key("Decode") != _NOT_SET or key("Mask") != _NOT_SET:
        return None
    (width_kind, width), (height_kind, height) = key("Width"), key("Height")
    if width_kind != "int" or height_kind != "int":
        return None
    size = (int(width), int(height))
    try:
        samples = zlib_ng.decompress(doc.xref_stream_raw(xref))
    except zlib_ng.error:  # type: ignore[misc]  # (its stub does not declare it a class)
        return None  # damaged: MuPDF keeps what it can read
    if len(samples) < size[0] * size[1] * channels:
        return None
    mode = "L" if channels == 1 else "RGB"
    return Image.frombuffer(mode, size, samples, "raw", mode, 0, 1)


def _decoded_by_mupdf(doc: pymupdf.Document, xref: int) -> Image.Image:
    pixmap = pymupdf.Pixmap(doc, xref)
    if pixmap.colorspace is not None and pixmap.colorspace.n not in (1, 3):
        pixmap = pymupdf.Pixmap(pymupdf.csRGB, pixmap)  # CMYK, Lab, separations
    return pixmap_image(pixmap)  # a copy: MuPDF keeps the decoded image cached, never shrink it in place
