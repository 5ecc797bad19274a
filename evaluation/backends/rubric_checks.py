"""`baseline:rubric-checks`: a judge made of checks anyone can redo by hand, not a model. It reads
the judge request (evaluation.judge_sections) and scores the rationale on the four axes from
facts: does it name the gold option (and no other), how many content words of the question it
cites, how much it shares with the reference rationale, how long it is. Every verdict says it is
not a model. A request that is not a judge request gets an answer the judge records as missing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from evaluation.backends.base import ChatRequest, Completion
from evaluation.backends.overlap import content_terms
from evaluation.judge_sections import judge_sections
from evaluation.models import ModelSpec

RUBRIC_LABEL = "[baseline:rubric-checks · 규칙 검사, 모델 아님 · rule checks, not a model]"
MARKERS = "①②③④⑤⑥⑦⑧⑨⑩"
_NUMBERED = re.compile(r"(?<!\d)(\d{1,2})\s*번")


def named_options(text: str) -> set[int]:
    """Option numbers a rationale names: ①…⑩ or `N번`."""
    return {MARKERS.index(ch) + 1 for ch in text if ch in MARKERS} | {int(n) for n in _NUMBERED.findall(text)}


@dataclass(frozen=True)
class RationaleFacts:
    gold: set[int]
    named: set[int]
    cited: list[str]  # content words of the question that the rationale uses
    reference_share: float  # share of the reference rationale's content words it uses
    length: int

    @property
    def names_gold(self) -> bool:
        return bool(self.named & self.gold)

    @property
    def names_other(self) -> bool:
        return bool(self.named - self.gold)

    def scores(self) -> dict[str, int]:
        if self.names_gold:
            factuality = 3 if self.names_other else (5 if self.reference_share >= 0.2 else 4)
            logic = 3 + (len(self.cited) >= 1) + (len(self.cited) >= 3)
        else:
            factuality = logic = 1 if self.named else 2
        clarity = 5 if 40 <= self.length <= 400 else 3 if 15 <= self.length <= 1200 else 1
        return {"factuality": factuality, "logical_soundness": logic, "depth": 1 + min(4, len(self.cited)),
                "clarity": clarity}

    def note(self) -> str:
        return (f"{RUBRIC_LABEL} 정답 보기 언급 · names the key: {'yes' if self.names_gold else 'no'}; "
                f"다른 보기 언급 · names another option: {'yes' if self.names_other else 'no'}; "
                f"문제 낱말 인용 · question words cited: {len(self.cited)} ({', '.join(self.cited[:8])}); "
                f"참고 해설과 겹침 · shared with the reference: {self.reference_share:.0%}; 길이 · length: {self.length}")


def rationale_facts(sections: dict[str, str]) -> RationaleFacts:
    rationale = sections["평가 대상 풀이"]
    used = set(content_terms(rationale))
    reference = content_terms(sections["참고 해설"])
    return RationaleFacts(
        gold={int(n) for n in re.findall(r"\d+", sections["정답"])},
        named=named_options(rationale),
        cited=[term for term in content_terms(sections["문제"]) if term in used],
        reference_share=sum(term in used for term in reference) / len(reference) if reference else 0.0,
        length=len(rationale.strip()),
    )


class RubricChecksBackend:
    def __init__(self, spec: ModelSpec):
        self.spec = spec

    async def complete(self, request: ChatRequest) -> Completion:
        sections = judge_sections(request.messages[-1].text() if request.messages else "")
        if sections is None:
            return Completion(f"{RUBRIC_LABEL} 채점 요청이 아닙니다 · not a judge request", finish_reason="stop")
        facts = rationale_facts(sections)
        errors = ([f"풀이가 고른 보기 {sorted(facts.named)}는 정답 {sorted(facts.gold)}이 아니다 · "
                   "the rationale names another option than the key"] if facts.named and not facts.names_gold else [])
        verdict = {"note": facts.note(), **facts.scores(), "factual_errors": errors}
        return Completion(json.dumps(verdict, ensure_ascii=False), finish_reason="stop")

    async def aclose(self) -> None:
        return None
