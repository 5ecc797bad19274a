"""Math-Verify (and sympy through it), imported lazily: the one outside library the portable
scorer may use, for the equivalence of expressions and of numbers written in LaTeX.

Nothing here imports it at module level, so `portable` stays importable with the standard library
alone; where Math-Verify is missing, `load()` returns None and the checkers say `undecided` with
`MISSING` as their explanation (never a silent wrong).

Hanging is guarded three ways: answers longer than `MAX_CHARS` are not parsed; towers of powers,
big exponents, factorials and very long digit runs (which sympy would evaluate in C, beyond any
signal's reach) are refused up front (`too_big`); and in the main thread Math-Verify's own
`signal.alarm` timeouts (`TIMEOUT_S`) bound parsing and each comparison. Math-Verify's alarms
cannot run outside the main thread, so there the guards alone apply.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from fractions import Fraction
from functools import lru_cache
from typing import Any

from .extraction import unwrap_math

_SPACED_DIGITS = re.compile(r"(?<=\d) +(?=\d)")
_COMMAND = re.compile(r"\\[A-Za-z]+|\\.")

MISSING = "Math-Verify is not installed: `pip install math-verify` to compare expressions and LaTeX numbers"
MAX_CHARS = 400
TIMEOUT_S = 5

_SQRT_PAREN = re.compile(r"(?:√|\\sqrt|\bsqrt)\s*\(")
_SQRT_TOKEN = re.compile(r"√\s*([A-Za-z0-9.]+|\\[A-Za-z]+)")
_UNICODE = {"×": "\\times ", "·": "\\cdot ", "⋅": "\\cdot ", "−": "-", "π": "\\pi ", "θ": "\\theta ",
            "α": "\\alpha ", "β": "\\beta ", "λ": "\\lambda ", "μ": "\\mu ", "ω": "\\omega ", "∞": "\\infty ",
            "²": "^{2}", "³": "^{3}", "≤": "\\le ", "≥": "\\ge ", "÷": "/"}
_state: dict[str, Any] = {}
_FUNCTION_NAMES = frozenset({
    "sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "log", "ln",
    "exp", "lim", "max", "min", "det", "gcd", "lcm", "mod", "sqrt", "frac", "deg", "arg", "dim", "inf", "sup",
})
_PROTECTING = re.compile(r"\\(?:text|mathrm|textrm|mathit|mathbf|operatorname|mbox|rm|bf|it)\s*\{")
_BIG = re.compile(
    r"\^\s*\{?\s*[-+]?\s*\d{4,}"  # x^{1000}
    r"|\^\s*\{[^{}]*\^|\^\s*\{[^{}]*\}\s*\^|\^\s*\w\s*\^"  # towers: x^{y^z}, x^{2}^{3}, x^2^3
    r"|\d{3,}\s*!|!\s*!|\d\s*!\s*\^|\\(?:binom)\s*\{?\s*\d{3,}"  # factorials
    r"|\d{200,}"
)


def _paren_to_braces(text: str) -> str:
    """`√(…)` and `sqrt(…)` → `\\sqrt{…}` (parentheses matched)."""
    while True:
        match = _SQRT_PAREN.search(text)
        if not match:
            return text
        depth, index = 1, match.end()
        while index < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            index += 1
        if depth:
            return text
        text = f"{text[:match.start()]}\\sqrt{{{text[match.end():index - 1]}}}{text[index:]}"


def to_latex(answer: str) -> str:
    """Unicode and plain-text math rewritten as LaTeX (`√(2gd)` → `\\sqrt{2gd}`)."""
    text = unwrap_math(answer)
    text = _SPACED_DIGITS.sub("", text)  # `{ 2 3 }` is 23, as LaTeX typesets it
    text = _paren_to_braces(text)
    text = _SQRT_TOKEN.sub(r"\\sqrt{\1}", text)
    for char, latex in _UNICODE.items():
        text = text.replace(char, latex)
    return text.strip().rstrip(".")


def load() -> Any | None:
    """The math_verify module, or None where it is not installed (tried once)."""
    if "module" not in _state:
        try:
            import math_verify  # noqa: PLC0415 - lazy: portable stays stdlib-only at import time

            logging.getLogger("math_verify").setLevel(logging.ERROR)
            # the first parse loads the LaTeX grammar and sympy's parsers (seconds on a busy machine):
            # done here once, without a time limit, so that no answer's time limit pays for it
            math_verify.parse("$\\frac{1}{2}+x$", parsing_timeout=None)
            _state["module"] = math_verify
        except ImportError:
            _state["module"] = None
    return _state["module"]


def available() -> bool:
    return load() is not None


def _timeout() -> int | None:
    return TIMEOUT_S if threading.current_thread() is threading.main_thread() else None


def too_big(latex: str) -> str | None:
    """Why an answer is refused before parsing (too long, or numbers sympy would grind on)."""
    if len(latex) > MAX_CHARS:
        return f"the answer is longer than {MAX_CHARS} characters; not compared"
    if _BIG.search(latex):
        return "the answer holds numbers too large to compare safely (big powers or factorials)"
    return None


def split_symbols(latex: str) -> str:
    """Adjacent single-letter symbols written together made explicit: `2dg` → `2d*g`, so that
    Math-Verify does not read `dg` as a differential, and `2dg` equals `2gd`. Command names,
    function names (sin, log …), subscripts and `\\text{}` contents are left alone."""
    out: list[str] = []
    index, end = 0, len(latex)
    protect_depth = 0  # > 0 while inside \text{…} or a subscript group
    depth = 0
    protect_at: list[int] = []
    while index < end:
        char = latex[index]
        if char == "\\":
            match = _COMMAND.match(latex[index:])
            token = match.group(0) if match else char
            protected = _PROTECTING.match(latex, index)
            if protected:
                out.append(latex[index:protected.end()])
                depth += 1
                protect_at.append(depth)
                protect_depth += 1
                index = protected.end()
                continue
            out.append(token)
            index += len(token)
            continue
        if char == "_":
            out.append(char)
            index += 1
            if index < end and latex[index] == "{":
                depth += 1
                protect_at.append(depth)
                protect_depth += 1
                out.append("{")
                index += 1
            elif index < end:
                out.append(latex[index])
                index += 1
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            if protect_at and protect_at[-1] == depth:
                protect_at.pop()
                protect_depth -= 1
            depth -= 1
        if char.isascii() and char.isalpha() and not protect_depth:
            run_end = index
            while run_end < end and latex[run_end].isascii() and latex[run_end].isalpha():
                run_end += 1
            run = latex[index:run_end]
            out.append(run if len(run) == 1 or run.lower() in _FUNCTION_NAMES else "*".join(run))
            index = run_end
            continue
        out.append(char)
        index += 1
    return "".join(out)


def parse(latex: str) -> list[Any]:
    """Math-Verify's parse of one answer (LaTeX or plain), [] when it reads nothing."""
    module = load()
    if module is None:
        return []
    configs = [module.LatexExtractionConfig(), module.ExprExtractionConfig()]
    text = latex if "$" in latex or "\\boxed" in latex else f"${latex}$"
    try:
        return list(module.parse(text, extraction_config=configs, parsing_timeout=_timeout()))
    except Exception:  # noqa: BLE001 - a library failure on odd input means "not read"
        return []


_KEYS: dict[str, tuple[Any, ...]] = {}


def parse_key(latex: str) -> tuple[Any, ...]:
    """A key's parse, once per key string (a failed parse, e.g. a time limit on a busy machine,
    is not remembered: the next answer tries again)."""
    found = _KEYS.get(latex)
    if found is None:
        found = tuple(parse(latex))
        if found and len(_KEYS) < 8192:
            _KEYS[latex] = found
    return found


def verify(gold: Any, answer: Any) -> bool | None:
    """Equivalent or not; None when the comparison ran out of its time (Math-Verify then answers
    False, which must not be read as "different")."""
    module = load()
    if module is None:
        return False
    limit = _timeout()
    started = time.monotonic()
    try:
        same = bool(module.verify(list(gold), list(answer), timeout_seconds=limit))
    except Exception:  # noqa: BLE001
        return False
    if not same and limit is not None and time.monotonic() - started >= 0.9 * limit:
        return None
    return same


_PROBES = ((0.731, 1.309, 1.787, 2.213, 0.577, 1.618, 2.718, 0.367),
           (1.414, 0.861, 2.449, 1.123, 1.951, 0.694, 1.272, 2.031))


def _expression(parsed: Any) -> Any | None:
    """The first sympy expression of a parse (not a relation, set, matrix or string), or None."""
    try:
        from sympy import Expr  # noqa: PLC0415 - sympy comes with Math-Verify
    except ImportError:
        return None
    for item in parsed:
        if isinstance(item, str):
            continue
        return item if isinstance(item, Expr) and not getattr(item, "is_Relational", False) else None
    return None


def differs(gold: Any, answer: Any) -> bool:
    """True when the two parsed expressions take clearly different values at a probe point (a
    proof they are not equal), which spares sympy's `simplify` for a wrong answer. False when
    they agree, or cannot be probed (relations, sets, other symbols): then `verify` decides."""
    left, right = _expression(gold), _expression(answer)
    if left is None or right is None:
        return False
    try:
        symbols = sorted(left.free_symbols | right.free_symbols, key=str)
        if {str(s) for s in left.free_symbols} != {str(s) for s in right.free_symbols} or len(symbols) > 8:
            return False
        for probe in _PROBES:
            values = dict(zip(symbols, probe, strict=False))
            one, two = complex(left.evalf(20, subs=values)), complex(right.evalf(20, subs=values))
            if abs(one.imag) > 1e-12 or abs(two.imag) > 1e-12 or one != one or two != two:
                return False  # not a real value here (or NaN): leave it to verify
            if abs(one.real - two.real) > 1e-6 * max(1.0, abs(one.real)):
                return True
        return False
    except Exception:  # noqa: BLE001 - anything odd: let verify decide
        return False


def numeric_value(parsed: Any) -> Fraction | None:
    """The value of a parsed constant expression (`\\frac{4}{\\sqrt{7}}`) to 30 digits, or None
    when it has free symbols or is not a finite real number."""
    for item in parsed:
        if isinstance(item, str):
            continue
        try:
            if not getattr(item, "is_number", False) or getattr(item, "free_symbols", None):
                return None
            value = item.evalf(30)
            if not value.is_real or not value.is_finite:
                return None
            return Fraction(str(value))
        except Exception:  # noqa: BLE001
            return None
    return None


@lru_cache(maxsize=8192)
def key_value(latex: str) -> Fraction | None:
    return numeric_value(parse_key(latex))
