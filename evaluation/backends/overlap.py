"""`baseline:overlap`: a rule that reads the question, picks the option sharing the most content
words with it, and writes which words as its rationale (the reasoning prompt's JSON). It is not
a model and every rationale says so; it gives the judge and the experts something real to score
with no model installed.
"""

from __future__ import annotations

import json
import re

from evaluation.backends.base import ChatRequest, Completion
from evaluation.models import ModelSpec

OVERLAP_LABEL = "[baseline:overlap · 낱말 겹침 규칙, 모델 아님 · a word-overlap rule, not a model]"
_WORD = re.compile(r"[가-힣A-Za-z0-9]{2,}")
_PARTICLES = ("에서", "으로", "에게", "은", "는", "이", "가", "을", "를", "의", "에", "와", "과", "로", "도")
# the wording of a question, not its content
_STOPWORDS = frozenset({"다음", "대한", "설명", "설명으로", "가장", "옳은", "옳지", "않은", "것은", "것을", "모두", "고른",
                        "알맞은", "가까운", "관련", "관계", "깊은", "있는", "하는", "어떻게", "무엇", "그림", "그림은", "무엇인가"})


def content_terms(text: str) -> list[str]:
    """The content words of a text, in order, once each, a trailing particle cut off (기압이 → 기압)."""
    found: dict[str, None] = {}
    for word in _WORD.findall(text):
        if word in _STOPWORDS:
            continue
        for particle in _PARTICLES:
            if word.endswith(particle) and len(word) - len(particle) >= 2:
                word = word[: -len(particle)]
                break
        if word not in _STOPWORDS:
            found[word] = None
    return list(found)


def overlap_answer(question: str, choices: tuple[str, ...]) -> tuple[int, list[str]]:
    """The 1-based option sharing the most question terms (the first on a tie), and those terms."""
    asked = set(content_terms(question))
    shared = [[term for term in content_terms(option) if term in asked] for option in choices]
    best = max(range(len(choices)), key=lambda i: (len(shared[i]), -i))
    return best + 1, shared[best]


class OverlapBackend:
    def __init__(self, spec: ModelSpec):
        self.spec = spec

    async def complete(self, request: ChatRequest) -> Completion:
        if not request.choices:
            return Completion("선택지가 없습니다.", finish_reason="stop")
        number, shared = overlap_answer(request.question, request.choices)
        if shared:
            why = (f"{OVERLAP_LABEL} {number}번 보기 ‘{request.choices[number - 1].strip()}’이(가) 문제와 가장 많은 낱말"
                   f"({', '.join(shared)})을 함께 쓰므로 {number}번을 골랐다.")
        else:
            why = f"{OVERLAP_LABEL} 문제와 낱말이 겹치는 보기가 없어 {number}번을 골랐다."
        return Completion(json.dumps({"생성된_추론_근거": why, "정답": number}, ensure_ascii=False), finish_reason="stop")

    async def aclose(self) -> None:
        return None
