"""Canonical text of an item for near-duplicate detection.

NFKC, option markers and whitespace stripped, options sorted: two copies of a question with
permuted options get the same canonical text, and "A 다 ." equals "A다.".
"""

from __future__ import annotations

import re
import unicodedata

from curation.core.item import Item, Option

# ①–⑩ (NFKC turns them into digits, so strip them first), (1) 1) 1. 가. A. ㄱ. markers
_CIRCLED = re.compile(r"[\u2460-\u2473\u2776-\u277f]")
_LEADING_MARKER = re.compile(r"^\s*(?:\(?\d{1,2}[.)]|\(?[가-하][.)]|\(?[A-Ea-e][.)])\s*")
_SPACE = re.compile(r"\s+")


def canonical_text(text: str) -> str:
    text = _CIRCLED.sub(" ", text)
    text = unicodedata.normalize("NFKC", text)
    return _SPACE.sub("", text)


def canonical_option(text: str) -> str:
    text = unicodedata.normalize("NFKC", _CIRCLED.sub(" ", text))
    return canonical_text(_LEADING_MARKER.sub("", text))


def canonical_stem(item: Item) -> str:
    return canonical_text(item.stem)


def _option_key(option: Option) -> str:
    """Its canonical text, or an image option's blob hash."""
    return canonical_option(option.text) or (option.image.blob[:16] if option.image else "")


def canonical_item(item: Item) -> str:
    """Stem, then the options in sorted order."""
    return canonical_stem(item) + "|" + "|".join(sorted(_option_key(o) for o in item.options))


def canonical_answer(item: Item) -> tuple[str, ...]:
    """The correct options' canonical texts, sorted: `2.5MPa` = `2.5 MPa`, `2~5㎛` = `2 ~ 5μm`. A key
    of another format is its canonical text (with the format: a numeric 2 is not a text 2)."""
    if item.answer is not None and item.choice_key() is None:
        return (item.answer.format, canonical_text(item.answer.text()))
    return tuple(sorted(_option_key(item.options[n - 1]) for n in item.answer_list()))
