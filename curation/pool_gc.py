"""Cyclic-collector thresholds for work that holds a pool of parsed items at once.

With the default thresholds the collector rescans every live object each time a few thousand
new ones survive: loading ~10^3–10^5 items triggers full collections that cost more than the
parsing (2/3 of parsing a pool; over half of what a 2,000-item answer run spends before its
first request).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

POOL_THRESHOLDS = (100_000, 50, 100)


def use_pool_thresholds() -> None:
    """For the whole process (the `benchsmith` command)."""
    gc.set_threshold(*POOL_THRESHOLDS)


@contextmanager
def pool_thresholds() -> Iterator[None]:
    """For a library call: never lower than the caller's own thresholds, which come back afterwards."""
    before = gc.get_threshold()
    if before[0]:  # 0: the caller turned automatic collection off; leave it so
        gc.set_threshold(*(max(mine, theirs) for mine, theirs in zip(POOL_THRESHOLDS, before, strict=True)))
    try:
        yield
    finally:
        gc.set_threshold(*before)
