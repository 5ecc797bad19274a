"""benchsmith: filtering."""
