"""Numbers and units as exam answers write them, read with the standard library only.

A number is read exactly (`fractions.Fraction`), with how precisely it is written:
integers (`7`, `1,000`), decimals (`0.5`, `.5`, `50.0`), fractions (`1/2`, `\\frac{1}{2}`),
scientific notation (`1.5e-3`, `2.72 \\times 10^{-6}`, `2.72×10⁻⁶`, `10^{-3}`) and a percent
sign (a unit, `%`). LaTeX wrappers (`$…$`, `\\text{}`, `\\,`), Unicode minus signs and
superscripts, full-width forms and thousands separators are folded first.

Units come from a small table of symbols with their dimension and factor (m, cm, mm, km, g, kg,
s, min, h, L, mL, N, J, W, V, A, Pa, Hz, mol, % …), and Korean names map onto them (미터 → m,
킬로그램 → kg, 초 → s, 리터 → L …). Anything else is kept as written (normalised) and compared as
a string only.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

_TEXTCIRCLED = re.compile(r"\\textcircled\s*\{\s*(\d{1,2})\s*\}")
_WHITESPACE = re.compile(r"\s+")
_RELATION = re.compile(r"[=<>:]")
_DIGIT = re.compile(r"\d")
_UNIT_EXPONENT = re.compile(r"(?<=[A-Za-zμΩ°)])\^?\(?-?\d\)?")
_BEYOND_NUMBERS = re.compile(r"\\(?!frac\b)[A-Za-z]+|π")
_LEADING_LABEL = re.compile(r"^\s*(?:[(\[]\s*(?:\d{1,2}|[a-zA-Z])\s*[)\]]|(?:\d{1,2}|[a-zA-Z])\s*\))\s*")
_PARENTHETICAL = re.compile(r"\([^()]*\)")
_UNIT_END = re.compile(r"[,;(\n]| 또는 | or | 이므로|, ")

_SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+", strict=True))
_SUPER_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_TEXT_CMD = re.compile(r"\\(?:text|mathrm|textrm|mathit|operatorname|mbox|rm)\s*\{([^{}]*)\}")
_SPACES = re.compile(r"\\[,;:! ]|~|\\quad|\\qquad|\\displaystyle|\\left|\\right|\\mathstrut")
_TIMES = re.compile(r"\\times|\\cdot|[×·⋅∙]")
_BRACED_EXP = re.compile(r"\^\s*\{\s*([-+]?\s*[\d.]+)\s*\}")

_SIGNED = r"(?:[-+]\s*)?"
_DEC = r"(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+)(?:\.\d+)?|\.\d+"
NUMBER_PATTERN = (
    rf"(?P<frac>\\frac\s*\{{\s*(?P<fn>{_SIGNED}(?:{_DEC}))\s*\}}\s*\{{\s*(?P<fd>{_SIGNED}(?:{_DEC}))\s*\}})"
    rf"|(?P<mant>{_SIGNED}(?:{_DEC}))"
    rf"(?:\s*/\s*(?P<den>{_DEC})(?![\d.])"
    rf"|\s*[eE](?P<e>[-+]?\d+)(?![\w.])"
    rf"|\s*[×xX*]\s*10\s*\^\s*\(?(?P<p>[-+]?\d+)\)?(?![\d.]))?"
    rf"|(?P<pow>10\s*\^\s*\(?(?P<pe>[-+]?\d+)\)?(?![\d.]))"
)
NUMBER = re.compile(NUMBER_PATTERN)
_FULL_NUMBER = re.compile(rf"^\s*(?:{NUMBER_PATTERN})\s*$")
_LEADING_WORDS = re.compile(r"^\s*(?:약|대략|about|approximately|approx\.?|around|≈|~)\s*", re.I)
_PARTICLES = re.compile(r"(?:입니다|의|이다|이고|이며|이므로|이에요|예요|임|으로|로|이|가|은|는|을|를|와|과|정도)$")


@dataclass(frozen=True)
class Number:
    """A number as written: its exact value, whether it is exact (an integer, a fraction, an
    expression) or rounded (a decimal, scientific notation), the power of ten of its last
    written digit (0.012 → -3, 50.0 → -1, 2.72e-6 → -8) and its significant digits."""

    value: Fraction
    exact: bool
    last_digit: int = 0
    significant: int = 0

    def half_unit(self) -> Fraction:
        """Half a unit in the last written digit: how far a rounded value may be off."""
        return Fraction(1, 2) * Fraction(10) ** self.last_digit


@dataclass(frozen=True)
class Quantity:
    number: Number
    unit: str = ""  # normalised (see `normalise_unit`), "" when none


# symbol → (dimension, factor to the dimension's base unit)
UNITS: dict[str, tuple[str, Fraction]] = {}


def _add(dimension: str, entries: dict[str, Fraction | int | str]) -> None:
    for symbol, factor in entries.items():
        UNITS[symbol] = (dimension, Fraction(factor))


_add("length", {"m": 1, "km": 1000, "cm": "1/100", "mm": "1/1000", "μm": "1e-6", "nm": "1e-9", "pm": "1e-12",
                "Å": "1e-10"})
_add("mass", {"kg": 1, "g": "1/1000", "mg": "1e-6", "μg": "1e-9", "t": 1000})
_add("time", {"s": 1, "ms": "1/1000", "μs": "1e-6", "ns": "1e-9", "min": 60, "h": 3600})
_add("volume", {"L": 1, "mL": "1/1000", "dL": "1/10", "μL": "1e-6", "m3": 1000, "cm3": "1/1000", "mm3": "1e-6"})
_add("area", {"m2": 1, "cm2": "1e-4", "mm2": "1e-6", "km2": "1e6"})
_add("speed", {"m/s": 1, "km/h": "5/18", "cm/s": "1/100", "km/s": 1000})
_add("acceleration", {"m/s2": 1})
_add("force", {"N": 1, "kN": 1000, "mN": "1/1000"})
_add("energy", {"J": 1, "kJ": 1000, "MJ": "1e6", "cal": "4.184", "kcal": "4184", "eV": "1.602176634e-19",
                "kWh": 3600000})
_add("power", {"W": 1, "kW": 1000, "MW": "1e6", "mW": "1/1000"})
_add("voltage", {"V": 1, "kV": 1000, "mV": "1/1000"})
_add("current", {"A": 1, "mA": "1/1000", "μA": "1e-6"})
_add("pressure", {"Pa": 1, "kPa": 1000, "hPa": 100, "MPa": "1e6", "atm": 101325, "mmHg": "101325/760",
                  "bar": 100000, "mbar": 100})
_add("frequency", {"Hz": 1, "kHz": 1000, "MHz": "1e6", "GHz": "1e9"})
_add("charge", {"C": 1, "mC": "1/1000", "μC": "1e-6"})
_add("resistance", {"Ω": 1, "kΩ": 1000, "MΩ": "1e6"})
_add("amount", {"mol": 1, "mmol": "1/1000", "μmol": "1e-6"})
_add("concentration", {"M": 1, "mM": "1/1000", "μM": "1e-6", "mol/L": 1, "mmol/L": "1/1000"})
_add("mass concentration", {"g/L": 1, "mg/L": "1/1000", "kg/m3": 1, "g/mL": 1000, "mg/mL": 1})
_add("temperature °C", {"°C": 1})
_add("temperature K", {"K": 1})
_add("angle", {"°": 1, "rad": Fraction("180") / Fraction("3.141592653589793")})
_add("ratio", {"%": "1/100", "‰": "1/1000"})
_add("currency", {"원": 1, "만원": 10000, "억원": 100000000})

UNIT_ALIASES: dict[str, str] = {
    "미터": "m", "킬로미터": "km", "센티미터": "cm", "밀리미터": "mm", "마이크로미터": "μm", "나노미터": "nm",
    "um": "μm", "µm": "μm", "옹스트롬": "Å",
    "킬로그램": "kg", "그램": "g", "밀리그램": "mg", "톤": "t", "ton": "t", "tonne": "t",
    "초": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s", "밀리초": "ms",
    "분": "min", "mins": "min", "minute": "min", "minutes": "min",
    "시간": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "리터": "L", "l": "L", "밀리리터": "mL", "ml": "mL", "㎖": "mL", "cc": "cm3",
    "뉴턴": "N", "줄": "J", "킬로줄": "kJ", "칼로리": "cal", "킬로칼로리": "kcal",
    "와트": "W", "킬로와트": "kW", "볼트": "V", "암페어": "A", "밀리암페어": "mA",
    "파스칼": "Pa", "킬로파스칼": "kPa", "헥토파스칼": "hPa", "메가파스칼": "MPa", "기압": "atm",
    "헤르츠": "Hz", "킬로헤르츠": "kHz", "메가헤르츠": "MHz", "쿨롬": "C", "쿨롱": "C",
    "옴": "Ω", "ohm": "Ω", "Ω": "Ω", "킬로옴": "kΩ",
    "몰": "mol", "밀리몰": "mmol", "켈빈": "K", "℃": "°C", "섭씨": "°C", "degC": "°C", "°c": "°C",
    "도": "°", "deg": "°", "degree": "°", "degrees": "°", "라디안": "rad",
    "퍼센트": "%", "프로": "%", "percent": "%", "퍼밀": "‰",
    "m/sec": "m/s", "m/s^2": "m/s2", "m/s²": "m/s2", "m^2": "m2", "m^3": "m3", "cm^3": "cm3", "cm^2": "cm2",
    "mm^2": "mm2", "mm^3": "mm3", "km^2": "km2", "kg/m^3": "kg/m3", "mol/l": "mol/L", "mg/l": "mg/L",
    "g/l": "g/L", "㏖": "mol",
}


def _superscripts(text: str) -> str:
    return _SUPER_RUN.sub(lambda m: "^" + "".join(_SUPERSCRIPTS[c] for c in m.group(0)), text)


def clean(text: str) -> str:
    """LaTeX and Unicode folded to plain text a number regex can read."""
    text = _superscripts(text.replace("√", "\\sqrt "))
    if "textcircled" in text:
        text = _TEXTCIRCLED.sub(r"\1", text)
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("$", "").replace("\\(", "").replace("\\)", "").replace("\\[", "").replace("\\]", "")
    text = _SPACES.sub(" ", text)
    for _ in range(2):
        text = _TEXT_CMD.sub(r"\1", text)
    text = _TIMES.sub("×", text).replace("\\%", "%").replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = text.replace("−", "-").replace("–", "-").replace("\\mu", "μ").replace("µ", "μ").replace("\\circ", "°")
    text = text.replace("^°", "°").replace("\\ohm", "Ω").replace("\\Omega", "Ω")
    text = _BRACED_EXP.sub(lambda m: "^" + m.group(1).replace(" ", ""), text)
    return _WHITESPACE.sub(" ", text).strip()


def normalise_unit(unit: str) -> str:
    """A unit as the table knows it (`미터` → `m`, `m^2` → `m2`), or as written, spaces removed."""
    text = clean(unit).strip().strip(".,;:)(")
    text = _WHITESPACE.sub("", text).replace("{", "").replace("}", "")
    while True:  # Korean particles after the unit: "m이다" → "m"
        shorter = _PARTICLES.sub("", text) if len(text) > 1 else text
        if shorter == text or not shorter or shorter in UNITS or shorter in UNIT_ALIASES:
            text = shorter or text
            break
        text = shorter
    if text in UNITS:
        return text
    if text in UNIT_ALIASES:
        return UNIT_ALIASES[text]
    caret = text.replace("^", "")
    if caret in UNITS:
        return caret
    return UNIT_ALIASES.get(text.lower(), text)


def unit_info(unit: str) -> tuple[str, Fraction] | None:
    return UNITS.get(unit)


def _decimal(text: str) -> tuple[Fraction, int, int, bool]:
    """(value, last digit exponent, significant digits, is an integer) of a plain decimal."""
    text = text.replace(" ", "").replace(",", "")
    try:
        dec = Decimal(text)
    except InvalidOperation:
        raise ValueError(text) from None
    sign, digits, exponent = dec.as_tuple()
    assert isinstance(exponent, int)
    stripped = "".join(str(d) for d in digits).lstrip("0")
    significant = len(stripped) if stripped else 1
    return Fraction(dec), exponent, significant, "." not in text


def number_from_match(match: re.Match[str]) -> Number:
    """The Number a `NUMBER_PATTERN` match denotes."""
    if match.group("frac"):
        numerator, *_ = _decimal(match.group("fn"))
        denominator, *_ = _decimal(match.group("fd"))
        if denominator == 0:
            raise ValueError("division by zero")
        return Number(numerator / denominator, True)
    if match.group("pow"):
        exponent = int(match.group("pe"))
        return Number(Fraction(10) ** exponent, True, exponent, 1)
    value, last, significant, integer = _decimal(match.group("mant"))
    if match.group("den"):
        denominator, *_ = _decimal(match.group("den"))
        if denominator == 0:
            raise ValueError("division by zero")
        return Number(value / denominator, True)
    power = match.group("e") or match.group("p")
    if power is not None:
        exponent = int(power)
        return Number(value * Fraction(10) ** exponent, False, last + exponent, significant)
    return Number(value, integer, last, significant)


def parse_number(text: str) -> Number | None:
    """A whole string as one number (after `clean`), else None."""
    match = _FULL_NUMBER.match(clean(text))
    if not match:
        return None
    try:
        return number_from_match(match)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None


def _unit_like(text: str) -> bool:
    text = text.strip()
    if not text:
        return True
    if len(text) > 24 or _RELATION.search(text):
        return False
    # digits only as exponents (m^2, m2, s^-1, m⁻¹), never a second number
    return not _DIGIT.search(_UNIT_EXPONENT.sub("", text))


def final_segment(text: str) -> str:
    """The part of an answer after its last `=`, `≈` or `:` (when that part holds a digit)."""
    for separator in ("=", "≈", "≒", ":"):
        if separator in text:
            rest = text.rsplit(separator, 1)[1]
            if _DIGIT.search(rest):
                text = rest
    return _LEADING_WORDS.sub("", text).strip()


def read_quantity(answer: str) -> Quantity | None:
    """The number (and unit) an answer states: `0.0120 m`, `v = 2.72 × 10^{-6} m/s`,
    `약 30 cm이다`, `50%`: in the part after the last `=` (`final_segment`), parenthetical
    remarks dropped, the last number, with the words right after it as its unit. None when
    there is no number, or when the answer is an expression (`4/√7`: Math-Verify's)."""
    text = final_segment(clean(answer))
    if _BEYOND_NUMBERS.search(text):
        return None  # LaTeX beyond plain numbers (\sqrt, \pi …): Math-Verify reads it
    text = _LEADING_LABEL.sub("", text)
    text = _PARENTHETICAL.sub(" ", text).strip() or text  # remarks in parentheses: (약 30.0 m)
    found: Quantity | None = None
    for match in NUMBER.finditer(text):
        if match.start() > 0 and (text[match.start() - 1].isalpha() or text[match.start() - 1] in "_^\\"):
            continue  # a subscript or a symbol's digit (x_1, H2O), not a number
        try:
            number = number_from_match(match)
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        rest = text[match.end():]
        unit_text = _UNIT_END.split(rest, maxsplit=1)[0].strip()
        if unit_text.startswith(("×", "*", "/", "^", "\\")):
            return None  # an expression, not a number with a unit: leave it to Math-Verify
        if not _unit_like(unit_text):
            words = unit_text.split()
            unit_text = words[0] if words and _unit_like(words[0]) else ""
        found = Quantity(number, normalise_unit(unit_text) if unit_text else "")
    return found  # the last number stated: "200 g/L을 쓰면 … 약 79.2 g/L" is 79.2 g/L


def split_value_unit(text: str) -> tuple[str, str] | None:
    """`1.0 mm` → (`1.0`, `mm`), `50` → (`50`, ``): a whole text as one number and a unit, or None."""
    cleaned = clean(text)
    match = NUMBER.match(cleaned)
    if not match or match.start() != 0:
        return None
    rest = cleaned[match.end():].strip()
    if rest and (not _unit_like(rest) or rest[0] in "×*/^\\.,"):
        return None
    return cleaned[:match.end()].strip(), rest
