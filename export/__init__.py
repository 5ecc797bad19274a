"""benchsmith: export."""
