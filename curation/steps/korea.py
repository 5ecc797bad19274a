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

from curation.core.errors import BenchsmithError
from curation.core.item import Item

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
_COUNTRY_WORDS = r"우리나라|대한민국|한국"
_COUNTRY_PREFIX = rf"(?:{_COUNTRY_WORDS})(?:의)?\s*"
# an implicit phrase right after one of these names that country's thing, not Korea's ("일본의 마파람")
OTHER_COUNTRIES: tuple[str, ...] = (
    "북한", "일본", "중국", "대만", "몽골", "러시아", "미국", "캐나다", "영국", "프랑스", "독일", "인도", "베트남",
    "필리핀", "태국", "호주", "유럽", "북미", "남미", "아프리카",
)
# particles whose form depends on whether the word before ends in a consonant (consonant form, vowel form)
_PARTICLES: tuple[tuple[str, str], ...] = (
    ("으로", "로"), ("이랑", "랑"), ("이나", "나"), ("은", "는"), ("이", "가"), ("을", "를"), ("과", "와"), ("이야", "야"),
)


def _final_consonant(syllable: str) -> int | None:
    """The final consonant index (0 = none, 8 = ㄹ) of a Hangul syllable; None for anything else."""
    code = ord(syllable) - 0xAC00
    return code % 28 if 0 <= code < 11172 else None


def _particle_for(word: str, particle: str) -> str:
    """`particle` in the form that agrees with the end of `word` (한국 + 와 → 한국과, 한국 + 로 → 한국으로)."""
    final = _final_consonant(word[-1]) if word else None
    if final is None:
        return particle
    for consonant_form, vowel_form in _PARTICLES:
        if particle in (consonant_form, vowel_form):
            takes_vowel_form = final == 0 or (final == 8 and vowel_form == "로")  # ㄹ takes 로, not 으로
            return vowel_form if takes_vowel_form else consonant_form
    return particle


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
        """Make the implicit Korean context explicit, naming the country once.

        Each implicit phrase is rewritten at most once, longest first and never inside a rewrite.
        A country word just before a phrase is absorbed by its rewrite ("우리나라 장마" → "한국의 장마").
        Other phrases that would name the country get their explicit form only while the text names
        no country (Korea or another), so only the first does ("장마와 동해안" → "한국의 장마와
        동해안"); a phrase right after another country's name is that country's and stays as it is
        ("일본의 마파람"). A particle after a rewrite agrees with its new last syllable ("우리나라와"
        → "한국과")."""
        ordered = sorted(self.rules, key=lambda rule: -len(rule[0]))
        if not ordered:
            return text
        mapping = dict(ordered)
        alternation = lambda words: "|".join(re.escape(word) for word in words)  # noqa: E731
        naming = [implicit for implicit, explicit in ordered if _COUNTRY_WORD in explicit]
        particles = sorted({p for pair in _PARTICLES for p in pair}, key=len, reverse=True)
        absorbed = rf"{_COUNTRY_PREFIX}(?P<absorbed>{alternation(naming)})|" if naming else ""
        pattern = re.compile(rf"(?P<foreign>(?:{'|'.join(OTHER_COUNTRIES)})(?:의)?\s*)?"
                             rf"(?:{absorbed}(?P<phrase>{alternation(mapping)}))(?P<particle>{'|'.join(particles)})?")
        # a text that names a country (Korea or another) already says whose context it is
        country_named = re.search(rf"{_COUNTRY_WORDS}|{'|'.join(OTHER_COUNTRIES)}", text) is not None

        def rewrite(match: re.Match[str]) -> str:
            nonlocal country_named
            implicit = match["absorbed"] or match["phrase"]
            explicit = mapping[implicit]
            replaces_country = bool(match["absorbed"]) or re.fullmatch(_COUNTRY_WORDS, implicit) is not None
            adds_country = _COUNTRY_WORD in explicit and not replaces_country
            if (match["foreign"] and not replaces_country) or (adds_country and country_named):
                return match[0]  # another country's phrase, or the country is already named
            country_named = country_named or _COUNTRY_WORD in explicit
            particle = match["particle"] or ""
            if particle and _final_consonant(implicit[-1]) != _final_consonant(explicit[-1]):
                particle = _particle_for(explicit, particle)
            return (match["foreign"] or "") + explicit + particle

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
