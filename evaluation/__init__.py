"""benchsmith: evaluation."""
