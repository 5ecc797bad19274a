"""benchsmith: annotator."""
