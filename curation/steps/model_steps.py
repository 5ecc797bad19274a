"""Curation steps that use a model: paraphrase, Korea-specific detection, explicit rewrites and
rationale drafts. Each takes a `TextModel` client (see curation/llm.py) and returns new item
versions; nothing here knows how the model is reached. Prompts are Korean and versioned (the
version is part of each request's cache key).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from curation.core.item import Item, Paraphrase, Rationale
from curation.core.revise import with_review_reason
from curation.llm import TextModel, TextRequest
from curation.steps.korea import KoreaLexicon, tag_korea
from curation.steps.terms import DOMAIN_TERMS, missing_terms

PARAPHRASE_PROMPT = "paraphrase-v1"
_PARAPHRASE_SYSTEM = ("당신은 국가 시험 문제를 다듬는 편집자입니다. 문제의 뜻, 정답, 난이도를 바꾸지 않고 문장만 "
                      "다르게 씁니다.")
_PARAPHRASE_USER = ("다음 문제의 질문 문장을 같은 뜻의 다른 문장으로 바꿔 쓰세요.\n"
                    "규칙: 전문 용어, 숫자, 단위, 기호, 수식(\\( \\) 안의 LaTeX), 〈보기〉의 ㄱ/ㄴ/ㄷ 항목은 그대로 두세요. "
                    "바꾼 문장만 출력하세요.\n\n[문제]\n{stem}")

KOREA_PROMPT = "korea-detect-v1"
_KOREA_SYSTEM = "당신은 시험 문제가 한국에 특화된 지식을 요구하는지 판정하는 검토자입니다."
_KOREA_USER = ("다음 문제를 풀려면 한국(대한민국)에 특화된 지식(지리, 기후, 법령, 제도, 역사, 지명, 기관)이 필요한지 "
               "판정하세요. JSON 한 줄로만 답하세요: {{\"korea_specific\": true 또는 false, \"reason\": \"근거\"}}. "
               "true이면 근거를 반드시 쓰세요.\n\n[문제]\n{text}")
KOREA_SCHEMA = {"type": "object", "properties": {"korea_specific": {"type": "boolean"}, "reason": {"type": "string"}},
                "required": ["korea_specific", "reason"]}

EXPLICIT_PROMPT = "explicit-v1"
_EXPLICIT_SYSTEM = "당신은 시험 문제의 암묵적인 한국 맥락을 명시적으로 바꿔 쓰는 편집자입니다."
_EXPLICIT_USER = ("다음 문제에서 한국을 전제로 한 암묵적 표현을 명시적으로 바꿔 쓰세요. 예: '우리나라' → '한국', "
                  "'동해안' → '한국 지역의 동해안', '마파람' → '한국 지역의 지방풍인 마파람'. 나머지 문장, 용어, 숫자, "
                  "수식은 그대로 두고, 바꾼 문제 문장만 출력하세요.\n\n[문제]\n{stem}")


@dataclass
class StepReport:
    changed: dict[str, Item] = field(default_factory=dict)
    tries: dict[str, int] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)


def _clean(text: str | None) -> str:
    text = (text or "").strip()
    text = re.sub(r"^```\w*\n|\n```$", "", text).strip()
    return re.sub(r"^(?:\[?문제\]?|바꾼 문장)\s*[:：]?\s*", "", text).strip()


def paraphrase_items(items: list[Item], model: TextModel, *, max_tries: int = 3,
                     domain_terms: tuple[str, ...] = DOMAIN_TERMS) -> StepReport:
    """A paraphrase per item that keeps every protected token; violations are retried."""
    report = StepReport()
    pending = {item.id: item for item in items}
    for attempt in range(max_tries):
        if not pending:
            break
        requests = [TextRequest(item.id, _PARAPHRASE_SYSTEM, _PARAPHRASE_USER.format(stem=item.stem), attempt)
                    for item in pending.values()]
        results = model.generate(requests, PARAPHRASE_PROMPT)
        for item_id, result in results.items():
            item = pending[item_id]
            text = _clean(result.text)
            report.tries[item_id] = attempt + 1
            if result.text is None:
                report.failures[item_id] = f"no response: {result.error}"
                continue
            lost = missing_terms(item.stem, text, domain_terms)
            if not text or text == item.stem.strip():
                report.failures[item_id] = "the model returned the stem unchanged or nothing"
                continue
            if lost:
                report.failures[item_id] = f"lost protected terms: {', '.join(lost)}"
                continue
            paraphrase = Paraphrase(text=text, original=item.stem, model=model.name, status="proposed")
            updated = item.model_copy(update={"paraphrase": paraphrase})
            report.changed[item_id] = with_review_reason(updated, "paraphrase to review")
            report.failures.pop(item_id, None)
            del pending[item_id]
    for item_id in pending:
        item = pending[item_id]
        reason = f"paraphrase rejected after {max_tries} tries ({report.failures.get(item_id, 'unknown')})"
        report.changed[item_id] = with_review_reason(item, reason)
    return report


def _parse_korea(text: str | None) -> tuple[bool, str] | None:
    if not text:
        return None
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        return None
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError:
        try:
            data = json.loads(match.group(0).replace("'", '"'))
        except json.JSONDecodeError:
            return None
    if not isinstance(data, dict) or not isinstance(data.get("korea_specific"), bool):
        return None
    reason = str(data.get("reason") or "").strip()
    if data["korea_specific"] and not reason:
        return None  # a detector must say why
    return data["korea_specific"], reason


def detect_korea(items: list[Item], models: Iterable[TextModel], lexicon: KoreaLexicon, *,
                 max_tries: int = 3) -> StepReport:
    """Lexicon candidates united with each model's verdicts; a model's 'yes' needs a reason."""
    report = StepReport()
    llm_reasons: dict[str, list[str]] = {item.id: [] for item in items}
    by_id = {item.id: item for item in items}
    for model in models:
        pending = dict(by_id)
        for attempt in range(max_tries):
            if not pending:
                break
            text = lambda item: item.stem + "\n" + "\n".join(o.text for o in item.options)  # noqa: E731
            requests = [TextRequest(i.id, _KOREA_SYSTEM, _KOREA_USER.format(text=text(i)), attempt, KOREA_SCHEMA)
                        for i in pending.values()]
            for item_id, result in model.generate(requests, KOREA_PROMPT).items():
                verdict = _parse_korea(result.text)
                if verdict is None:
                    report.failures[f"{model.name}:{item_id}"] = "invalid verdict (no JSON, or yes without a reason)"
                    continue
                report.failures.pop(f"{model.name}:{item_id}", None)
                if verdict[0]:
                    llm_reasons[item_id].append(f"llm {model.name}: {verdict[1]}")
                del pending[item_id]
    for item in items:
        tagged = tag_korea(item, lexicon, llm_reasons[item.id])
        if tagged != item:
            report.changed[item.id] = tagged
    return report


def explicit_rewrites(items: list[Item], model: TextModel, *, max_tries: int = 2,
                      domain_terms: tuple[str, ...] = DOMAIN_TERMS) -> StepReport:
    """Model-proposed explicit variants for candidates without one (checked like paraphrases)."""
    report = StepReport()
    pending = {item.id: item for item in items if not item.explicit_variant}
    for attempt in range(max_tries):
        if not pending:
            break
        requests = [TextRequest(i.id, _EXPLICIT_SYSTEM, _EXPLICIT_USER.format(stem=i.stem), attempt) for i in pending.values()]
        for item_id, result in model.generate(requests, EXPLICIT_PROMPT).items():
            text = _clean(result.text)
            lost = missing_terms(pending[item_id].stem, text, domain_terms) if text else ["(empty)"]
            if lost:
                report.failures[item_id] = f"lost protected terms: {', '.join(lost)}"
                continue
            item = pending.pop(item_id)
            report.changed[item_id] = with_review_reason(item.model_copy(update={"explicit_variant": text}),
                                                         "explicit variant to review")
            report.failures.pop(item_id, None)
    return report


def draft_rationales(items: list[Item], model: TextModel, *, max_tries: int = 5) -> StepReport:
    """A draft rationale per item, regenerated until the drafted answer equals the gold one."""
    report = StepReport()
    pending = {item.id: item for item in items if item.answer_list()}
    for attempt in range(max_tries):
        if not pending:
            break
        solved = model.solve_with_rationale(list(pending.values()), attempt)
        for item_id, result in solved.items():
            if item_id not in pending:
                continue
            report.tries[item_id] = attempt + 1
            if result.outcome != "correct" or not result.rationale:
                report.failures[item_id] = f"try {attempt + 1}: {result.outcome}" + (
                    "" if result.rationale else " (no rationale)")
                continue
            item = pending.pop(item_id)
            rationale = Rationale(text=result.rationale, status="draft", author=model.name,
                                  notes=f"drafted by {model.name}; reached the gold answer on try {attempt + 1}")
            report.changed[item_id] = with_review_reason(item.model_copy(update={"rationale": rationale}),
                                                         "draft rationale to review")
            report.failures.pop(item_id, None)
    return report
