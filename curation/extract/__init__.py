"""Extraction of exam questions from PDFs: text layer (PyMuPDF), OCR (Tesseract) or MinerU output,
segmented into benchsmith items with provenance, figures as blobs and answer keys merged."""
