"""Rebuilding inline formulas from superscript/subscript glyphs as LaTeX.

Input is a line as (character, kind) pairs, kind "" | "sup" | "sub" (decided from glyph size and
baseline). A script attaches to the ASCII base right before it (digits, letters, `.`); a formula
is the run of such words, e.g. `7.29×10⁻⁵ s⁻¹` → `\\(7.29\\times 10^{-5}\\,\\mathrm{s^{-1}}\\)`.
Letter bases with a superscript are units (`\\mathrm{s^{-1}}`); a single letter with a subscript
is a variable (`T_{d}`). A script with no ASCII base (a footnote mark after Hangul) stays plain.
"""

from __future__ import annotations

import re

Glyphs = list[tuple[str, str]]

_BASE = re.compile(r"[A-Za-z0-9.]")
_FORMULA_CHAR = re.compile(r"[A-Za-z0-9.×·+\-−/()]")
_OPERATORS = {"×": r"\times ", "·": r"\cdot ", "−": "-"}


def render_line(glyphs: Glyphs) -> str:
    """Plain text of a line, with every formula written as \\( LaTeX \\)."""
    if not any(kind for _, kind in glyphs):
        return "".join(char for char, _ in glyphs)
    words = _split_words(glyphs)
    out: list[str] = []
    pending: list[str] = []  # LaTeX of formula words waiting to be joined by \,

    def flush() -> None:
        if pending:
            out.append("\\(" + "\\,".join(pending) + "\\)")
            pending.clear()

    for index, word in enumerate(words):
        if word == [(" ", "")]:
            if not pending:
                out.append(" ")
            continue
        prefix, formula, suffix = _formula_part(word)
        if formula is None:
            flush()
            if out and out[-1] != " " and index and words[index - 1] == [(" ", "")]:
                out.append(" ")
            out.append(_plain(word))
            continue
        if prefix or not pending:
            flush()
            if index and words[index - 1] == [(" ", "")] and out and out[-1] != " ":
                out.append(" ")
            out.append(_plain(prefix))
        pending.append(_latex(formula))
        if suffix:
            flush()
            out.append(_plain(suffix))
    flush()
    return "".join(out)


def _split_words(glyphs: Glyphs) -> list[Glyphs]:
    words: list[Glyphs] = []
    for char, kind in glyphs:
        if char == " ":
            words.append([(" ", "")])
        elif words and words[-1] != [(" ", "")]:
            words[-1].append((char, kind))
        else:
            words.append([(char, kind)])
    return words


def _plain(glyphs: Glyphs) -> str:
    return "".join(char for char, _ in glyphs)


def _formula_part(word: Glyphs) -> tuple[Glyphs, Glyphs | None, Glyphs]:
    """Split a word into (text before, formula, text after); formula None when there is none."""
    scripts = [i for i, (_, kind) in enumerate(word) if kind]
    if not scripts:
        return word, None, []
    first = scripts[0]
    if first == 0 or not (_BASE.match(word[first - 1][0]) or word[first - 1][0] == ")") or word[first - 1][1]:
        return word, None, []
    start = first
    while start > 0 and not word[start - 1][1] and _FORMULA_CHAR.match(word[start - 1][0]):
        start -= 1
    end = scripts[-1] + 1
    while end < len(word) and (word[end][1] or _BASE.match(word[end][0]) or word[end][0] == ")"):
        end += 1
    start, end = _balanced(word, start, end, first)
    if start >= first:
        return word, None, []
    return word[:start], word[start:end], word[end:]


def _balanced(word: Glyphs, start: int, end: int, first: int) -> tuple[int, int]:
    """Narrow [start, end) so that no bracket inside is unmatched: `CaMg(CO₃)₂` is one formula,
    `(단위: s⁻¹)` keeps its `)` outside. A delimiter never cuts across parentheses."""
    while True:
        stack: list[int] = []
        unmatched_close = None
        for index in range(start, end):
            char = word[index][0]
            if char in "([":
                stack.append(index)
            elif char in ")]":
                if stack and word[stack[-1]][0] == {")": "(", "]": "["}[char]:
                    stack.pop()
                else:
                    unmatched_close = index
                    break
        if unmatched_close is not None:
            end = unmatched_close
            if end <= first:
                return first, first
            continue
        if stack:
            start = stack[-1] + 1
            continue
        return start, end


def _latex(formula: Glyphs) -> str:
    """LaTeX of one formula word: bases with their scripts attached."""
    pieces: list[tuple[str, str]] = []  # (base text, category) with scripts appended as ^{...}/_{...}
    scripts: dict[int, list[tuple[str, str]]] = {}
    for char, kind in formula:
        if kind:
            if not pieces:
                pieces.append(("", "number"))
            script = scripts.setdefault(len(pieces) - 1, [])
            if script and script[-1][1] == kind:
                script[-1] = (script[-1][0] + char, kind)
            else:
                script.append((char, kind))
            continue
        category = "letters" if char.isalpha() and char.isascii() else "number" if char.isdigit() or char == "." else "op"
        if pieces and pieces[-1][1] == category and category != "op" and len(pieces) - 1 not in scripts:
            pieces[-1] = (pieces[-1][0] + char, category)
        else:
            pieces.append((char, category))
    parts = []
    for index, (text, category) in enumerate(pieces):
        attached = "".join(("^" if kind == "sup" else "_") + "{" + body.replace("−", "-") + "}"
                           for body, kind in scripts.get(index, []))
        if category == "op":
            parts.append(_OPERATORS.get(text, text) + attached)
        elif category == "letters" and attached and (len(text) > 1 or attached.startswith("^")):
            parts.append("\\mathrm{" + text + attached + "}")
        else:
            parts.append(text + attached)
    return "".join(parts)


FORMULA_IMAGE_REASON = "formula image: LaTeX still to transcribe"
