"""benchsmith: turn exam papers into expert benchmarks."""

from curation.version import BENCHSMITH_VERSION as __version__

__all__ = ["__version__"]
