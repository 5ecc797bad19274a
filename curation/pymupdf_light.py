"""PyMuPDF without its layout analyser and pymupdf4llm (see curation/import_costs.py): every
benchsmith module that uses PyMuPDF imports it from here, `from curation.pymupdf_light import pymupdf`."""

from curation.import_costs import skipping_pymupdf_layout

with skipping_pymupdf_layout():
    import pymupdf

__all__ = ["pymupdf"]
