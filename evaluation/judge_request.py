"""What the judge is sent, written and read back: its system prompt, the user message's sections
(question, options, key, reference rationale, the rationale judged) and the verdict schema.

It imports no backend, so a rule judge among the backends (`baseline:rubric-checks`) reads a judge
request through `judge_sections` without importing the judge and the request sender.
"""

from __future__ import annotations

from typing import Any

from curation.item import Item
from evaluation.backends.base import ChatRequest, Message
from evaluation.records import JUDGE_AXES

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{axis: {"type": "integer", "minimum": 1, "maximum": 5} for axis in JUDGE_AXES},
        "factual_errors": {"type": "array", "items": {"type": "string"}},
    },
    "required": [*JUDGE_AXES, "factual_errors"],
}

_SYSTEM = ("당신은 시험 문제 풀이를 채점하는 전문가입니다. 전문가가 작성한 참고 해설을 기준으로 "
           "평가 대상 풀이를 네 가지 기준에서 1점(매우 나쁨)부터 5점(매우 좋음)까지 채점하세요.\n"
           "- factuality(사실성): 사실과 개념이 정확한가\n"
           "- logical_soundness(논리성): 근거에서 결론까지 논리가 타당한가\n"
           "- depth(깊이): 핵심 원리를 충분히 설명하는가\n"
           "- clarity(명확성): 간결하고 명확하게 쓰였는가\n"
           "풀이에 있는 사실 오류는 factual_errors 목록에 적으세요. 다음 JSON 하나로만 답하세요: "
           '{"factuality": 1-5, "logical_soundness": 1-5, "depth": 1-5, "clarity": 1-5, "factual_errors": ["…"]}')


# The sections of the judge's user message, in order: what judge_request writes and judge_sections reads
SECTIONS = ("문제", "선택지", "정답", "참고 해설", "평가 대상 풀이")


def judge_request(item: Item, rationale: str) -> ChatRequest:
    options = "\n".join(f"{n}. {option.text or '(그림)'}" for n, option in enumerate(item.options, start=1))
    gold = ", ".join(map(str, item.answer_list()))
    reference = item.rationale.text if item.rationale else ""
    bodies = (item.stem, options, gold, reference, rationale)
    user = "\n".join(f"[{name}]\n{body}" for name, body in zip(SECTIONS, bodies, strict=True))
    return ChatRequest((Message("system", (_SYSTEM,)), Message("user", (user,))), response_schema=VERDICT_SCHEMA)


def judge_sections(request: ChatRequest) -> dict[str, str] | None:
    """The sections of a judge request (for rule judges that read it), or None for any other request."""
    rest = request.messages[-1].text() if request.messages else ""
    if not rest.startswith(f"[{SECTIONS[0]}]\n"):
        return None
    rest = rest[len(SECTIONS[0]) + 3:]
    found: dict[str, str] = {}
    for name, following in zip(SECTIONS, SECTIONS[1:], strict=False):
        found[name], marker, rest = rest.partition(f"\n[{following}]\n")
        if not marker:
            return None
    found[SECTIONS[-1]] = rest
    return found
