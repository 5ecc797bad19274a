"""Telling text that went through the wrong decoder from Korean exam text.

A U+FFFD replacement character means bytes were lost. Mojibake (CP949 read as another
code page) shows as letters from scripts no Korean exam uses (Latin with diacritics, IPA,
Cyrillic, Hebrew, Arabic, NKo …), private-use or C1 control characters. Greek, math
symbols, units and CJK are normal in exam text and are not counted.
"""

from __future__ import annotations

import re

_SUSPECT = re.compile(
    "[\u0080-\u009f\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02af\u0400-\u052f\u0530-\u08ff\ue000-\uf8ff]"
)
REPLACEMENT = "\ufffd"


def garbled_reason(text: str) -> str | None:
    """Why the text looks garbled, or None. Two suspect letters are needed (one is a name)."""
    if REPLACEMENT in text:
        return f"{text.count(REPLACEMENT)} U+FFFD replacement characters"
    suspects = _SUSPECT.findall(text)
    if len(suspects) >= 2:
        return f"mojibake characters {''.join(dict.fromkeys(suspects))[:8]!r}"
    return None


def garbled_fields(fields: dict[str, str]) -> str | None:
    """'stem: 2 U+FFFD replacement characters; option 3: …' for the fields that look garbled."""
    found = [f"{name}: {reason}" for name, text in fields.items() if (reason := garbled_reason(text))]
    return "; ".join(found) or None
