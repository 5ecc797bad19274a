"""Is a page's text layer usable? No text, private-use glyphs or garbled text send it to OCR."""

from __future__ import annotations

from curation.extract.layout import Glyph


def text_layer_problem(glyphs: list[Glyph]) -> str | None:
    visible = [g.c for g in glyphs if not g.space]
    if len(visible) < 5:
        return "no text layer"
    private = sum(1 for c in visible if 0xE000 <= ord(c) <= 0xF8FF or c == "\ufffd" or ord(c) < 32)
    if private > 0.3 * len(visible):
        return "private-use glyphs (broken font map)"
    letters = [c for c in visible if c.isalpha()]
    if len(letters) >= 20:
        hangul = sum(1 for c in letters if "\uac00" <= c <= "\ud7a3" or "\u3131" <= c <= "\u318e")
        garbled = sum(1 for c in letters if "\u00c0" <= c <= "\u024f")
        if hangul < 0.05 * len(letters) and garbled > 0.2 * len(letters):
            return "garbled text (low Hangul ratio)"
    return None
