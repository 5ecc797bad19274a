"""Term preservation: a paraphrase must keep every domain term, number, unit, symbol and formula.

The check is what stands between an LLM paraphrase and a silently changed question: a
dropped "850 hPa", a lost "\\(10^{-5}\\)" or "온위" turned into "온도" is a rejection.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from pathlib import Path

DOMAIN_TERMS: tuple[str, ...] = (
    "온위", "상당온위", "가온위", "혼합비", "비습", "이슬점", "노점", "상대습도", "절대습도", "포화수증기압",
    "건조단열감률", "습윤단열감률", "환경감률", "지균풍", "경도풍", "온도풍", "전향력", "코리올리", "기압경도력",
    "와도", "발산", "수렴", "제트기류", "전선", "한랭전선", "온난전선", "폐색전선", "정체전선", "고기압", "저기압",
    "태풍", "적운", "적란운", "층운", "권운", "역전층", "대류권", "성층권", "복사", "알베도", "엘니뇨", "라니냐",
    "해풍", "육풍", "푄", "단열", "안정도", "CAPE", "CIN", "로스비", "편서풍", "무역풍",
)

# LaTeX spans, numbers with units, symbols and chemical/unit tokens that carry meaning
_LATEX = re.compile(r"\\\(.+?\\\)|\$\$.+?\$\$|\$[^$]+\$", re.S)
_NUMBER_UNIT = re.compile(
    r"-?\d+(?:[.,]\d+)*\s*(?:hPa|kPa|Pa|mb|mm|cm|km|m/s|m|K|℃|°C|°|%|g/kg|kg|g|J|W/m²|W|s|h|ppm|μm)?"
)
_SYMBOL_TOKEN = re.compile(r"[A-Za-z]+[₀-₉⁰-⁹\d]*|[αβγδεζηθλμνπρστφχψωΩΔ∇∂]")


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def protected_tokens(text: str, domain_terms: tuple[str, ...] = DOMAIN_TERMS) -> Counter:
    text = _norm(text)
    tokens: Counter = Counter()
    for match in _LATEX.findall(text):
        tokens["latex:" + re.sub(r"\s+", "", match)] += 1
    plain = _LATEX.sub(" ", text)
    for match in _NUMBER_UNIT.findall(plain):
        tokens["num:" + re.sub(r"\s+", "", match)] += 1
    for match in _SYMBOL_TOKEN.findall(plain):
        if not match.isdigit():
            tokens["sym:" + match] += 1
    for term in domain_terms:
        if term in plain:
            tokens["term:" + term] += 1
    return tokens


def missing_terms(original: str, paraphrase: str, domain_terms: tuple[str, ...] = DOMAIN_TERMS) -> list[str]:
    """Protected tokens of the original that the paraphrase lost (empty list = preserved)."""
    before = protected_tokens(original, domain_terms)
    after = protected_tokens(paraphrase, domain_terms)
    return sorted(token.split(":", 1)[1] for token, n in before.items() if after[token] < n)


def load_terms(path: Path | None) -> tuple[str, ...]:
    if path is None:
        return DOMAIN_TERMS
    extra = [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    return tuple(dict.fromkeys([*DOMAIN_TERMS, *extra]))
