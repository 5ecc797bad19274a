"""Is a page's text layer usable? No text, private-use glyphs or garbled text send it to OCR."""

from __future__ import annotations

import re

from curation.extract.layout import Glyph

_PRIVATE = re.compile("[\ue000-\uf8ff\ufffd\x00-\x1f]")
_HANGUL = re.compile("[\uac00-\ud7a3\u3131-\u318e]")
# Latin letters with accents (not × or ÷): what a Korean font read through the wrong map looks like
_LATIN_ACCENTED = re.compile("[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]")


def text_layer_problem(glyphs: list[Glyph]) -> str | None:
    text = "".join([g.c for g in glyphs])  # counted with regular expressions: pages hold thousands
    if len(text) < 5:
        return "no text layer"
    if len(_PRIVATE.findall(text)) > 0.3 * len(text):
        return "private-use glyphs (broken font map)"
    letters = sum(map(str.isalpha, text)) if len(text) >= 20 else 0
    if letters >= 20:
        hangul, garbled = len(_HANGUL.findall(text)), len(_LATIN_ACCENTED.findall(text))
        if hangul < 0.05 * letters and garbled > 0.2 * letters:
            return "garbled text (low Hangul ratio)"
    return None
