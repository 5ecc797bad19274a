"""Keep `import pymupdf` light: PyMuPDF 2 imports its ONNX page-layout analyser (`pymupdf.layout`)
and `pymupdf4llm`, both pulled in as its dependencies, while it loads: about half a second of CPU
in every process that opens a PDF, for features benchsmith never calls.

`skipping_pymupdf_layout()` puts a finder in front of the import system for as long as its block
runs; the finder answers "not installed" for those two only while `pymupdf` itself is still
loading (PyMuPDF then goes without them, as when they are absent, and `pymupdf.to_markdown`
says it is not available). Imported explicitly after that, they load as usual. The one block
that uses it is `curation/pymupdf_light.py`, where benchsmith's modules take `pymupdf` from.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

SKIPPED = frozenset({"pymupdf.layout", "pymupdf4llm"})


class _SkipLayoutWhilePymupdfLoads(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> None:
        if name in SKIPPED and _pymupdf_loading():
            raise ImportError(f"{name} is not loaded with pymupdf by benchsmith (see curation/import_costs.py)")
        return None


def _pymupdf_loading() -> bool:
    module = sys.modules.get("pymupdf")
    # the import system marks a module's spec `_initializing` while the module's code runs
    return module is not None and bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


@contextmanager
def skipping_pymupdf_layout() -> Iterator[None]:
    finder = _SkipLayoutWhilePymupdfLoads()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        # a new list, not remove(): an import running in another thread (the annotator warms PyMuPDF
        # up in one) may be iterating the old list, and removal would make it skip a finder
        sys.meta_path = [entry for entry in sys.meta_path if entry is not finder]
