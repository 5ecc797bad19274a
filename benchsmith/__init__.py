"""benchsmith: turn exam papers into expert benchmarks."""

__version__ = "0.1.0"
