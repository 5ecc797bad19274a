"""Korean text in charts (subject names, parts, model names): a CJK font for matplotlib, used only
while a chart is drawn.

The font comes with the Python install: `noto-cjk-sans-otc` (Noto Sans CJK, SIL OFL 1.1), in the
extras that pull matplotlib (`report`, `demo`); it is registered with matplotlib's font manager
(`fontManager.addfont`, its public API) the first time a chart is drawn. Where that package is
missing, PyMuPDF's CJK font (Droid Sans Fallback, a core dependency) is written once to the user's
cache folder and used instead. The font is chosen for the drawing only (`rc_context`): a caller's
own matplotlib settings are left as they were.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

FONT_PACKAGE = "noto_cjk_sans_otc"  # distribution noto-cjk-sans-otc
FALLBACK_FILE = "droid-sans-fallback.ttf"


def _package_font() -> Path | None:
    try:
        from noto_cjk_sans_otc import FONT_PATH
    except ImportError:
        return None
    path = Path(str(FONT_PATH))
    return path if path.is_file() else None


def _pymupdf_font(cache_dir: Path) -> Path:
    from curation.pymupdf_light import pymupdf

    path = cache_dir / FALLBACK_FILE
    if not path.is_file():
        cache_dir.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pymupdf.Font("cjk").buffer)
    return path


@functools.cache
def hangul_font_family() -> str:
    """The registered Korean font's family name (registered once per process)."""
    from matplotlib import font_manager

    path = _package_font() or _pymupdf_font(Path.home() / ".cache" / "benchsmith")
    font_manager.fontManager.addfont(str(path))
    return font_manager.FontProperties(fname=str(path)).get_name()


@contextmanager
def hangul_charts() -> Iterator[None]:
    """Draw (and save) charts inside this, or decorate the drawing function with `@hangul_charts()`:
    Hangul in the Korean font, everything else in matplotlib's default beside it."""
    try:
        import matplotlib
    except ImportError:
        from curation.core.errors import MissingExtraError

        raise MissingExtraError("report", "matplotlib") from None
    with matplotlib.rc_context({"font.family": [hangul_font_family(), "DejaVu Sans"]}):
        yield
