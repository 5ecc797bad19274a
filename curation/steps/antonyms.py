"""The antonym lexicon that marks "inverted logic" pairs (highest/lowest …).

Two near-identical questions that differ by such a swap ask opposite things: they are never
removed automatically but queued for review. The lexicon is extensible by a file with one
pair per line, `높은/낮은` (lines starting with # are comments).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from curation.core.errors import BenchsmithError

DEFAULT_PAIRS: tuple[tuple[str, str], ...] = (
    ("높은", "낮은"), ("높다", "낮다"), ("높아", "낮아"), ("최대", "최소"), ("최고", "최저"),
    ("옳은", "옳지 않은"), ("맞는", "틀린"), ("해당하는", "해당하지 않는"), ("적절한", "적절하지 않은"),
    ("포화", "불포화"), ("증가", "감소"), ("상승", "하강"), ("북쪽", "남쪽"), ("동쪽", "서쪽"),
    ("이상", "이하"), ("초과", "미만"), ("큰", "작은"), ("많은", "적은"), ("장점", "단점"),
    ("가장 먼", "가장 가까운"), ("빠른", "느린"), ("강한", "약한"), ("따뜻한", "차가운"), ("고기압", "저기압"),
    ("온난", "한랭"), ("상층", "하층"), ("주간", "야간"), ("여름", "겨울"), ("가능", "불가능"),
)


# A question and its negation ("…인 것은?" / "…이 아닌 것은?") ask opposite things too.
NEGATION_MARKERS: tuple[str, ...] = ("않", "아닌", "아니", "없는", "틀린")
NEGATION_SWAP = ("(긍정)", "(부정)")


class AntonymLexicon:
    def __init__(self, pairs: tuple[tuple[str, str], ...] | list[tuple[str, str]] = DEFAULT_PAIRS):
        self.pairs = list(pairs)
        terms = {term for pair in self.pairs for term in pair}
        # "포화" is inside "불포화": count a term only where no longer lexicon term covers it.
        self._longer = {term: [other for other in terms if other != term and term in other] for term in terms}
        self._cache: dict[str, tuple[Counter, int]] = {}

    @classmethod
    def from_file(cls, path: Path, *, extend_default: bool = True) -> AntonymLexicon:
        pairs = list(DEFAULT_PAIRS) if extend_default else []
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            left, sep, right = line.partition("/")
            if not sep or not left.strip() or not right.strip():
                raise BenchsmithError(f"{path}:{number}: expected a pair like 높은/낮은, got {line!r}")
            pairs.append((left.strip(), right.strip()))
        return cls(pairs)

    def _counts(self, text: str) -> tuple[Counter, int]:
        """Lexicon term counts and negation markers of a text (cached: dedup asks per pair)."""
        if text in self._cache:
            return self._cache[text]
        counts: Counter = Counter()
        for term, longer in self._longer.items():
            n = text.count(term) - sum(text.count(other) for other in longer)
            if n > 0:
                counts[term] = n
        self._cache[text] = counts, sum(map(text.count, NEGATION_MARKERS))
        return self._cache[text]

    def swaps(self, first: str, second: str) -> list[tuple[str, str]]:
        """The lexicon pairs that one text uses where the other uses the opposite term."""
        (a, negations_a), (b, negations_b) = self._counts(first), self._counts(second)
        found = []
        if negations_a != negations_b:
            found.append(NEGATION_SWAP)
        for left, right in self.pairs:
            if (a[left] > b[left] and b[right] > a[right]) or (a[right] > b[right] and b[left] > a[left]):
                found.append((left, right))
        return found
