"""Korea-specific items: a lexicon detector and implicit → explicit rewrites.

An item is a *candidate* when its text uses Korea-bound context (우리나라, 동해안, 장마 …);
the reasons are stored and a person decides (`flags.korea_specific` stays None until then).
The explicit variant rewrites implicit context so a model from anywhere can answer fairly
("우리나라" → "한국"). Both lexicons extend by file (`term` or `implicit => explicit`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from curation.errors import BenchsmithError
from curation.item import Item

KOREA_TERMS: tuple[str, ...] = (
    "우리나라", "한반도", "한국", "대한민국", "제주", "서울", "부산", "대구", "인천", "광주", "대전", "울산", "강원",
    "영동", "영서", "호남", "영남", "동해안", "서해안", "남해안", "동해", "서해", "황해", "마파람", "높새바람",
    "태백산맥", "소백산맥", "24절기", "절기", "장마", "기상청", "백두산", "한라산", "독도", "울릉도", "양간지풍",
)

EXPLICIT_RULES: tuple[tuple[str, str], ...] = (
    ("우리나라", "한국"),
    ("동해안", "한국 지역의 동해안"),
    ("서해안", "한국 지역의 서해안"),
    ("남해안", "한국 지역의 남해안"),
    ("마파람", "한국 지역의 지방풍인 마파람"),
    ("높새바람", "한국 지역의 지방풍인 높새바람"),
    ("영동 지방", "한국 강원도의 영동 지방"),
    ("장마", "한국의 장마"),
)


_COUNTRY_WORD = "한국"
_COUNTRY_PREFIX = r"(?:우리나라|대한민국|한국)(?:의)?\s*"


def _read_lines(path: Path) -> list[tuple[int, str]]:
    lines = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if line and not line.startswith("#"):
            lines.append((number, line))
    return lines


@dataclass(frozen=True)
class KoreaLexicon:
    terms: tuple[str, ...] = KOREA_TERMS
    rules: tuple[tuple[str, str], ...] = EXPLICIT_RULES

    def extended(self, terms_file: Path | None = None, rules_file: Path | None = None) -> KoreaLexicon:
        terms, rules = list(self.terms), list(self.rules)
        if terms_file:
            terms += [line for _, line in _read_lines(terms_file)]
        if rules_file:
            for number, line in _read_lines(rules_file):
                implicit, sep, explicit = line.partition("=>")
                if not sep or not implicit.strip() or not explicit.strip():
                    raise BenchsmithError(f"{rules_file}:{number}: expected 'implicit => explicit', got {line!r}")
                rules.append((implicit.strip(), explicit.strip()))
        return KoreaLexicon(tuple(dict.fromkeys(terms)), tuple(rules))

    def reasons(self, item: Item) -> list[str]:
        fields = [("stem", item.stem)] + [(f"option {n}", o.text) for n, o in enumerate(item.options, start=1)]
        found = []
        for term in self.terms:
            where = [name for name, text in fields if term in text]
            if where:
                found.append(f"lexicon: {term} ({', '.join(where)})")
        return found

    def explicit(self, text: str) -> str:
        """Apply the rewrite rules once each, longest implicit phrase first, never inside a rewrite.

        A rewrite that names the country itself absorbs a country word just before it, so
        "우리나라 동해안" becomes "한국 지역의 동해안", not "한국 한국 지역의 동해안"."""
        ordered = sorted(self.rules, key=lambda rule: -len(rule[0]))
        mapping = dict(ordered)
        names_country = "|".join(re.escape(implicit) for implicit, explicit in ordered if _COUNTRY_WORD in explicit)
        alternatives = [f"(?:{_COUNTRY_PREFIX})(?P<absorbed>{names_country})"] if names_country else []
        alternatives.append("|".join(re.escape(implicit) for implicit, _ in ordered))
        pattern = re.compile("|".join(alternatives))

        def rewrite(match: re.Match[str]) -> str:
            return mapping[match.group("absorbed") or match.group(0)] if names_country else mapping[match.group(0)]

        return pattern.sub(rewrite, text)


def tag_korea(item: Item, lexicon: KoreaLexicon, extra_reasons: list[str] | None = None) -> Item:
    """Record detector reasons; mark the item for review when it is a new candidate."""
    reasons = list(dict.fromkeys(item.flags.korea_reasons + lexicon.reasons(item) + (extra_reasons or [])))
    if reasons == item.flags.korea_reasons:
        return item
    review = item.flags.review_reasons
    if item.flags.korea_specific is None and "korea-specific candidate" not in review:
        review = [*review, "korea-specific candidate"]
    flags = item.flags.model_copy(update={"korea_reasons": reasons, "review_reasons": review})
    return item.model_copy(update={"flags": flags})


def with_explicit_variant(item: Item, lexicon: KoreaLexicon) -> Item:
    rewritten = lexicon.explicit(item.stem)
    if rewritten == item.stem or item.explicit_variant:
        return item
    return item.model_copy(update={"explicit_variant": rewritten})
