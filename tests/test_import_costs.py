"""PyMuPDF as benchsmith imports it (`curation.pymupdf_light`) leaves out its layout analyser and
pymupdf4llm (half a second of CPU per process), both still load when asked for by name afterwards,
and importing `curation` itself changes nothing in the import system."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

CHECK = """
import sys
finders = list(sys.meta_path)
import curation, curation.extract.pipeline
print("import system unchanged:", sys.meta_path == finders)
from curation.pymupdf_light import pymupdf
skipped = sorted(name for name in ("pymupdf.layout", "pymupdf4llm") if name in sys.modules)
doc = pymupdf.open(); doc.new_page()
print("loaded with pymupdf:", skipped, "pages:", doc.page_count)
import pymupdf.layout, pymupdf4llm
print("loaded when asked:", "pymupdf.layout" in sys.modules and "pymupdf4llm" in sys.modules)
"""

PLAIN = """
import sys
import curation, pymupdf
print("plain import loads them:", "pymupdf.layout" in sys.modules and "pymupdf4llm" in sys.modules)
"""


@pytest.mark.skipif(importlib.util.find_spec("pymupdf4llm") is None, reason="this PyMuPDF does not bring pymupdf4llm")
def test_pymupdf_loads_without_its_layout_analyser_which_still_loads_on_request():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True).stdout
    assert "import system unchanged: True" in out
    assert "loaded with pymupdf: [] pages: 1" in out
    assert "loaded when asked: True" in out


@pytest.mark.skipif(importlib.util.find_spec("pymupdf4llm") is None, reason="this PyMuPDF does not bring pymupdf4llm")
def test_importing_curation_installs_no_hook():
    out = subprocess.run([sys.executable, "-c", PLAIN], capture_output=True, text=True, check=True).stdout
    assert "plain import loads them: True" in out
