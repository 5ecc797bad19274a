"""Text with LaTeX → Markdown that Gradio renders with its bundled KaTeX, safely.

Math is `$$…$$`, `\\[…\\]` (display), `\\(…\\)` and `$…$` (inline). Outside math every
character is shown as typed: HTML is escaped (a `<script>` shows as text), Markdown
punctuation is backslash-escaped but square brackets and backslashes become HTML entities
(Gradio looks for `\\[…\\]` math before Markdown runs: an escaped `[3점]` would become a
formula), and a literal dollar (`\\$`, or a `$` that opens no math) is emitted as KaTeX
`\\(\\$\\)` so it can never start a formula.
"""

from __future__ import annotations

import html
import re

LATEX_DELIMITERS: list[dict[str, str | bool]] = [
    {"left": "$$", "right": "$$", "display": True},
    {"left": "\\[", "right": "\\]", "display": True},
    {"left": "\\(", "right": "\\)", "display": False},
    {"left": "$", "right": "$", "display": False},
]

_MATH = re.compile(
    r"\$\$(?P<dd>.+?)\$\$"
    r"|\\\[(?P<bk>.+?)\\\]"
    r"|\\\((?P<pr>.+?)\\\)"
    r"|(?<!\\)\$(?P<d>(?:\\\$|[^$])+?)(?<!\\)\$",
    re.DOTALL,
)
_SPECIAL = re.compile(r"[\\`*_\[\]{}#+\-!|~>]")
_ENTITIES = {"\\": "&#92;", "[": "&#91;", "]": "&#93;"}
LITERAL_DOLLAR = "\\(\\$\\)"


def _text(segment: str) -> str:
    placeholder = "\x00"
    segment = segment.replace("\\$", placeholder).replace("$", placeholder)
    segment = _SPECIAL.sub(lambda m: _ENTITIES.get(m.group(), "\\" + m.group()), html.escape(segment, quote=False))
    segment = segment.replace(placeholder, LITERAL_DOLLAR)
    return segment.replace("\n", "  \n")


def _math(match: re.Match[str]) -> str:
    return html.escape(match.group(0), quote=False)


def to_markdown(text: str | None) -> str:
    """Markdown for gr.Markdown(latex_delimiters=LATEX_DELIMITERS)."""
    if not text:
        return ""
    out, position = [], 0
    for match in _MATH.finditer(text):
        out.append(_text(text[position : match.start()]))
        out.append(_math(match))
        position = match.end()
    out.append(_text(text[position:]))
    return "".join(out)
