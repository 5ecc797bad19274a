"""`import pymupdf` under benchsmith leaves out PyMuPDF's layout analyser and pymupdf4llm (half a
second of CPU per process), and both still load when asked for by name afterwards."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

CHECK = """
import sys
import curation, pymupdf
skipped = sorted(name for name in ("pymupdf.layout", "pymupdf4llm") if name in sys.modules)
doc = pymupdf.open(); doc.new_page()
print("loaded with pymupdf:", skipped, "pages:", doc.page_count)
import pymupdf.layout, pymupdf4llm
print("loaded when asked:", "pymupdf.layout" in sys.modules and "pymupdf4llm" in sys.modules)
"""


@pytest.mark.skipif(importlib.util.find_spec("pymupdf4llm") is None, reason="this PyMuPDF does not bring pymupdf4llm")
def test_pymupdf_loads_without_its_layout_analyser_which_still_loads_on_request():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True).stdout
    assert "loaded with pymupdf: [] pages: 1" in out
    assert "loaded when asked: True" in out
