"""Exam names as files carry them: one per file (the majority), and names in a pool that are
probably the same exam spelled differently (stray spaces, quotes, a lost syllable)."""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter

from rapidfuzz import fuzz

_NOT_NAME = re.compile(r"[^0-9A-Za-z가-힣]+")
UNKNOWN = "unknown"


def name_key(name: str) -> str:
    """The name without spaces, quotes and punctuation: `건 '설안전기사` -> `건설안전기사`."""
    return _NOT_NAME.sub("", unicodedata.normalize("NFKC", name))


def majority_name(names: Counter[str]) -> str | None:
    """The most frequent non-empty name (ties: the first seen)."""
    counted = [(name, count) for name, count in names.items() if name and name != UNKNOWN]
    if not counted:
        return None
    return max(counted, key=lambda pair: pair[1])[0]


def similar_names(counts: dict[str, int], cutoff: float = 0.9) -> list[tuple[str, list[str]]]:
    """Groups of names that are likely one exam: (the largest name, the others), largest first.

    Two names group when their keys are equal or difflib rates the keys at `cutoff` or above
    (0.9 joins `설안전기사` to `건설안전기사` but keeps `건설안전산업기사` apart: 0.857)."""
    names = sorted(counts, key=lambda name: (-counts[name], name))
    keys = {name: name_key(name) for name in names}
    taken: set[str] = set()
    groups = []
    for head in names:
        if head in taken:
            continue
        members = []
        for other in names:
            if other == head or other in taken:
                continue
            a, b = keys[head], keys[other]
            if not a or not b:
                continue
            # rapidfuzz's ratio bounds difflib's from above: a cheap lossless skip
            if a == b or (fuzz.ratio(a, b) >= cutoff * 100 - 1e-6
                          and difflib.SequenceMatcher(None, a, b).ratio() >= cutoff):
                members.append(other)
        if members:
            taken.update([head, *members])
            groups.append((head, members))
    return groups
