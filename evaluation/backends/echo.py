"""`baseline:echo`: a rule that answers every item from the question's own words and numbers, not
a model. A choice item gets the option sharing the most content words with the question (the rule
of `baseline:overlap`); an item without options (a short answer) gets the last number the question
states, or, where it states none, its last content word, written as `\\boxed{…}` as the open-answer
prompt asks. Every answer says it is a rule. It gives the open items a score with no model
installed (the demo), and shows which keys a question gives away.
"""

from __future__ import annotations

import json
import re

from evaluation.backends.base import ChatRequest, Completion
from evaluation.backends.overlap import content_terms, overlap_answer
from evaluation.models import ModelSpec

NAME = "echo"  # baseline:echo, the one baseline that answers items without options
ECHO_LABEL = "[baseline:echo · 문제 되풀이 규칙, 모델 아님 · a rule that echoes the question, not a model]"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def echo_answer(question: str) -> str:
    """The last number the question states, else its last content word ("" for neither)."""
    numbers = _NUMBER.findall(question)
    if numbers:
        return numbers[-1]
    terms = content_terms(question)
    return terms[-1] if terms else ""


class EchoBackend:
    def __init__(self, spec: ModelSpec):
        self.spec = spec

    async def complete(self, request: ChatRequest) -> Completion:
        if request.choices:
            number, _ = overlap_answer(request.question, request.choices)
            return Completion(json.dumps({"정답": number}), finish_reason="stop")
        return Completion(f"{ECHO_LABEL} 정답: \\boxed{{{echo_answer(request.question)}}}", finish_reason="stop")

    async def aclose(self) -> None:
        return None
