"""The toolkit's version, kept in the lowest package so every package can record it."""

BENCHSMITH_VERSION = "0.1.0"
