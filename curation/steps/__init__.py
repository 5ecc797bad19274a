"""Curation stages over items: dedup, option shuffling, Korea and taxonomy tagging, explicit
variants, and the model-assisted steps (paraphrase, detectors, rationale drafts)."""
