"""Is every formula in a text field valid LaTeX that a KaTeX-style renderer accepts?

Text fields write formulas as `\\( … \\)` (inline) or `$$ … $$` (display). A field is valid when
the delimiters pair up without nesting, and each formula has balanced braces, balanced
parentheses and brackets (a delimiter never cuts across them: `CaMg(\\(CO_{3})_{2}\\)` is refused),
balanced `\\left`/`\\right`, only commands the parser knows, and converts with `latex2mathml`.
`repair` turns a formula that fails into its plain reading, so nothing invalid is ever stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

DELIMITER = re.compile(r"\\\(|\\\)|\$\$")
COMMAND = re.compile(r"\\([A-Za-z]+|.)")
PAIRS = {")": "(", "]": "["}
MISSING_EXTRA = "LaTeX checking needs latex2mathml (a benchsmith dependency): pip install latex2mathml"
_PLAIN = {"\\times": "×", "\\cdot": "·", "\\,": " ", "\\;": " ", "\\ ": " ", "\\{": "{", "\\}": "}"}


def formulas(text: str) -> tuple[list[str], list[str]]:
    """(the formulas of a text field, problems with its delimiters)."""
    found: list[str] = []
    problems: list[str] = []
    opened: tuple[str, int] | None = None
    for match in DELIMITER.finditer(text):
        token = match.group()
        if opened is None:
            if token == "\\)":
                problems.append(f"'\\)' without '\\(' at {match.start()}")
            else:
                opened = (token, match.end())
            continue
        closing = "\\)" if opened[0] == "\\(" else "$$"
        if token != closing:
            problems.append(f"'{token}' inside a formula opened with '{opened[0]}' at {opened[1] - len(opened[0])}")
            continue
        found.append(text[opened[1]:match.start()])
        opened = None
    if opened is not None:
        problems.append(f"'{opened[0]}' at {opened[1] - len(opened[0])} is never closed")
    return found, problems


def formula_problems(latex: str) -> list[str]:
    """What is wrong with one formula (empty when it parses)."""
    problems = _balance(latex)
    unknown = sorted({command for command in _commands(latex) if not _known(command)})
    if unknown:
        problems.append("unknown commands " + ", ".join(unknown))
    if not problems:
        try:
            from latex2mathml.converter import convert
        except ImportError:
            raise RuntimeError(MISSING_EXTRA) from None
        try:
            convert(latex)
        except Exception as error:  # the parser's own exceptions, any kind
            problems.append(f"does not parse: {type(error).__name__} {error}".strip())
    return problems


def text_problems(text: str) -> list[str]:
    """Problems of every formula in a text field, each prefixed with the formula."""
    found, problems = formulas(text)
    for latex in found:
        problems += [f"{latex!r}: {problem}" for problem in formula_problems(latex)]
    return problems


def _balance(latex: str) -> list[str]:
    problems: list[str] = []
    depth = 0
    stack: list[str] = []
    lefts = 0
    for token in _tokens(latex):
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
            if depth < 0:
                problems.append("'}' without '{'")
                depth = 0
        elif token in "([":
            stack.append(token)
        elif token in ")]":
            if not stack or stack.pop() != PAIRS[token]:
                problems.append(f"{token!r} without its opening bracket (a delimiter cuts across brackets)")
                stack.clear()
        elif token == "\\left":
            lefts += 1
        elif token == "\\right":
            lefts -= 1
    if depth > 0:
        problems.append(f"{depth} '{{' never closed")
    if stack:
        problems.append(f"{''.join(stack)!r} never closed (a delimiter cuts across brackets)")
    if lefts:
        problems.append("\\left and \\right do not pair up")
    if latex.rstrip().endswith(("^", "_")):
        problems.append("a script with nothing after it")
    return problems


def _tokens(latex: str) -> Iterator[str]:
    """Characters, with escaped ones and commands kept whole (`\\{` is not a brace)."""
    index = 0
    while index < len(latex):
        if latex[index] == "\\":
            match = COMMAND.match(latex, index)
            token = match.group() if match else "\\"
            yield token
            index += len(token)
        else:
            yield latex[index]
            index += 1


def _commands(latex: str) -> Iterator[str]:
    return (token for token in _tokens(latex) if token.startswith("\\") and token[1:].isalpha())


@lru_cache(maxsize=1)
def _known_commands() -> frozenset[str]:
    try:
        from latex2mathml import commands, symbols_parser
    except ImportError:
        raise RuntimeError(MISSING_EXTRA) from None
    known: set[str] = set()
    for name in dir(commands):
        value = getattr(commands, name)
        if not name.isupper():
            continue
        if isinstance(value, str):
            known.add(value)
        elif isinstance(value, dict | tuple | list | set | frozenset):
            known.update(key for key in value if isinstance(key, str))
    known.update(key for key in symbols_parser.SYMBOLS if isinstance(key, str))
    return frozenset(known)


def _known(command: str) -> bool:
    return command in _known_commands()


def repair(text: str) -> tuple[str, bool]:
    """`text` with every formula that fails written as its plain reading (and stray delimiters
    dropped); True when something had to be repaired."""
    found, problems = formulas(text)
    if problems:
        return _plain(DELIMITER.sub("", text)), True
    repaired = False
    for latex in found:
        if formula_problems(latex):
            text = text.replace(f"\\({latex}\\)", _plain(latex), 1).replace(f"$${latex}$$", _plain(latex), 1)
            repaired = True
    return text, repaired


def _plain(latex: str) -> str:
    """A formula read without markup: `\\mathrm{s^{-1}}` → `s^-1`, `\\times` → `×`."""
    out = []
    for token in _tokens(latex):
        if token in _PLAIN:
            out.append(_PLAIN[token])
        elif token.startswith("\\") and token[1:].isalpha() or token in "{}":
            continue
        else:
            out.append(token)
    return "".join(out)
