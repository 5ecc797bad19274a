"""Data card templates (package data, so an installed benchsmith finds them)."""
