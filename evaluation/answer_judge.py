"""An LLM judge for answers no checker can decide (a Score `undecided`), or for every answer
with `judge_all` (KMMMU's protocol, to compare).

The judge sees the question (and its options), the key, the response (its last part when long:
at least the last `TAIL_CHARS` characters) and the answer the checker extracted, and answers
`true` or `false`. A reply that is neither is asked again (`max_invalid` times), then recorded
as undecided. Requests go through the runner's sender: the same cache, retries and fault
handling as any run. Every judgement — the judge's model, its raw reply, the verdict — is a
line of `runs/RUN/answer-judge-JUDGE.jsonl`; the run's records then get the judge's Score
(`decided_by: judge`), appended to the run log like a rescore.

Only an undecided record takes the judge's verdict as its outcome. With `judge_all`, a record a
checker decided keeps its outcome: the judge's verdict is written beside it (`details.judge`,
with whether the two agree), for comparison. A judge that gave no valid verdict leaves the
record undecided, with the judge's error in `details.judge`.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from curation.core.identity import content_hash
from curation.core.item import Item
from curation.core.workspace import Workspace
from evaluation.backends.base import BackendError, ChatRequest, Completion, Message
from evaluation.cache import cache_key
from evaluation.datasets import dataset_from_manifest
from evaluation.models import ModelSpec
from evaluation.records import AnswerRecord, read_jsonl_records, response_sha
from evaluation.runlog import RESPONSES, RunLog, now_iso, read_answer_manifest
from evaluation.sender import InvalidResponse, Job, SenderSettings, send_jobs
from scoring import Score
from scoring.portable.choice_parsing import split_thinking

ANSWER_JUDGE_VERSION = "answer-judge-v1"  # the prompt below: part of every judge request key
TAIL_CHARS = 1500  # the judge always sees at least this much of the response's end
HEAD_CHARS = 1000  # and, of a longer response, this much of its start

_SYSTEM = ("당신은 시험 채점자입니다. 문제, 정답, 응시자의 응답을 보고 응답의 최종 답이 정답과 같은 뜻인지 판단하세요. "
           "수치는 같은 값이면(단위 환산, 분수와 소수 포함) 맞습니다. 최종 답을 하나로 정하지 않았거나, "
           "단일 정답 문제에 답을 둘 이상 냈거나, 같은 말을 되풀이하다 끝난 응답은 틀립니다.\n"
           "Return ONLY: true or false")
_TRUE = re.compile(r"^\W*(true|참|맞음|correct)\W*$", re.I)
_FALSE = re.compile(r"^\W*(false|거짓|틀림|incorrect)\W*$", re.I)


class AnswerJudgement(BaseModel):
    """One line of `answer-judge-JUDGE.jsonl`."""

    model_config = ConfigDict(extra="ignore")
    item_id: str
    content_hash: str | None = None
    response_sha: str  # of the response text judged: a judgement holds only for that text
    judge: str
    prompt_version: str = ANSWER_JUDGE_VERSION
    key: str | None = None  # the cache key of the request answered (a resend's, after an invalid reply)
    request_key: str | None = None  # the first request's key: the same judgement asked for again
    verdict: bool | None = None  # None: no valid reply (undecided)
    reply: str | None = None
    error: dict[str, Any] | None = None
    ts: str | None = None


def response_excerpt(text: str, tail: int = TAIL_CHARS, head: int = HEAD_CHARS) -> str:
    """The response as the judge sees it: whole when short, else its start and its last part."""
    if len(text) <= head + tail + 200:
        return text
    return f"{text[:head]}\n\n[… {len(text) - head - tail}자 생략 …]\n\n{text[-tail:]}"


def judge_request(item: Item, response: str, extracted: Any) -> ChatRequest:
    visible, _, _ = split_thinking(response or "")
    lines = [f"[문제]\n{item.stem}"]
    if item.options:
        lines.append("[선택지]\n" + "\n".join(f"{n}. {o.text}" for n, o in enumerate(item.options, start=1)))
    key = item.answer
    key_text = key.text() if key is not None else ""
    if key is not None and key.format == "judged" and key.rubric:
        key_text += f"\n[채점 기준]\n{key.rubric}"
    lines.append(f"[정답]\n{key_text}")
    lines.append(f"[응답]\n{response_excerpt(visible)}")
    shown = extracted if isinstance(extracted, str) else json.dumps(extracted, ensure_ascii=False)
    lines.append(f"[응답에서 읽은 최종 답]\n{shown if extracted is not None else '(읽지 못함)'}")
    return ChatRequest((Message("system", (_SYSTEM,)), Message("user", ("\n\n".join(lines),))))


def parse_judgement(text: str | None) -> bool:
    visible, _, _ = split_thinking(text or "")
    last = visible.strip().splitlines()[-1] if visible.strip() else ""
    for candidate in (visible.strip(), last):
        if _TRUE.match(candidate):
            return True
        if _FALSE.match(candidate):
            return False
    raise InvalidResponse(f"neither true nor false: {visible[:120]!r}")


def judge_log_path(run_dir: Path, judge: ModelSpec) -> Path:
    return run_dir / f"answer-judge-{re.sub(r'[^A-Za-z0-9._-]+', '-', judge.name).strip('-')}.jsonl"


def _finisher(base: dict[str, Any]) -> Callable[[Job, Completion | None, BackendError | None, dict[str, Any]],
                                                 dict[str, Any]]:
    def finish(job: Job, completion: Completion | None, error: BackendError | None, meta: dict[str, Any]) -> dict[str, Any]:
        line = base | {"key": job.key, "ts": now_iso()}
        if completion is None:
            line |= {"verdict": None, "error": {"kind": error.kind if error else "error", "message": str(error)}}
        else:
            # a reply that is neither raises InvalidResponse: the sender asks again, and after the
            # last try finishes the job with a `malformed` error (recorded as undecided)
            line |= {"verdict": parse_judgement(completion.text), "reply": completion.text}
        return AnswerJudgement.model_validate(line).model_dump(mode="json", exclude_none=True)

    return finish


def judged_score(record: AnswerRecord, judgement: AnswerJudgement) -> Score:
    """The record's Score once the judgement is known: the judge's outcome for an undecided
    record (or one a judge decided before), else the checker's with the verdict beside it."""
    checker = record.typed_score()
    if checker.decided_by == "judge":  # judged before (another judge, or an older reply): start from the checker's
        checker = checker.model_copy(update={"outcome": checker.details.get("checker_outcome", "undecided"),
                                             "value": 0.0, "decided_by": "checker", "judge_model": None})
    details = {key: value for key, value in checker.details.items() if key not in ("judge", "checker_outcome")}
    if judgement.verdict is None:
        error = judgement.error or {"kind": "error", "message": "no verdict"}
        return checker.model_copy(update={"details": details | {"judge": {"model": judgement.judge, "error": error}}})
    if checker.outcome != "undecided":
        agrees = (checker.outcome == "correct") == judgement.verdict if checker.outcome in ("correct", "wrong") else None
        beside = {"model": judgement.judge, "verdict": judgement.verdict, "agrees": agrees}
        return checker.model_copy(update={"details": details | {"judge": beside}})
    return checker.model_copy(update={
        "outcome": "correct" if judgement.verdict else "wrong", "value": 1.0 if judgement.verdict else 0.0,
        "decided_by": "judge", "judge_model": judgement.judge, "details": details | {"checker_outcome": "undecided"},
        "explanation": f"judged {'correct' if judgement.verdict else 'wrong'} by {judgement.judge}"})


def judge_answers(ws: Workspace, run_dir: Path, judge: ModelSpec, settings: SenderSettings, *,
                  judge_all: bool = False, max_invalid: int = 1,
                  on_record: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Judge a run's undecided records (every record with a response, with `judge_all`), then
    apply the verdicts: a summary of what was asked, sent, found and changed."""
    manifest = read_answer_manifest(run_dir)
    records = read_jsonl_records(run_dir / RESPONSES, AnswerRecord)
    dataset = dataset_from_manifest(manifest, ws.store, ws.blobs, ws.root)
    items = dataset.lookup(list(records))
    log_path = judge_log_path(run_dir, judge)
    done = read_jsonl_records(log_path, AnswerJudgement)

    def rekey(req: ChatRequest) -> str:
        return cache_key(judge, req, ANSWER_JUDGE_VERSION)

    jobs: list[Job] = []
    wanted: dict[str, str] = {}
    for item_id, record in records.items():
        item = items.get(item_id)
        score = record.typed_score()
        if item is None or record.text is None or content_hash(item, manifest.variant) != record.content_hash:
            continue
        undecided = score.outcome == "undecided" or score.decided_by == "judge"
        if score.decided_by == "human" or not (judge_all or undecided):
            continue
        request = judge_request(item, record.text, score.extracted)
        sha = response_sha(record.text)
        wanted[item_id] = sha
        first_key = rekey(request)
        previous = done.get(item_id)
        if previous is not None and previous.response_sha == sha and previous.request_key == first_key \
                and previous.verdict is not None:
            continue
        base = {"item_id": item_id, "content_hash": record.content_hash, "response_sha": sha, "judge": judge.name,
                "request_key": first_key}
        jobs.append(Job(item_id, request, first_key, _finisher(base), rekey, max_invalid))
    if jobs:
        asyncio.run(send_jobs(judge, settings, log_path, jobs, ws.cache_path, on_record))
    judgements = read_jsonl_records(log_path, AnswerJudgement)
    applied: list[dict[str, Any]] = []
    counts = {"true": 0, "false": 0, "undecided": 0}
    agreement = {"agree": 0, "disagree": 0}
    decided = 0
    for item_id, sha in wanted.items():
        judgement = judgements.get(item_id)
        if judgement is None or judgement.response_sha != sha:
            counts["undecided"] += 1
            continue
        counts["undecided" if judgement.verdict is None else str(judgement.verdict).lower()] += 1
        record = records[item_id]
        score = judged_score(record, judgement)
        decided += score.decided_by == "judge"
        beside = score.details.get("judge") or {}
        if beside.get("agrees") is not None:
            agreement["agree" if beside["agrees"] else "disagree"] += 1
        if score == record.typed_score():
            continue
        line = record.model_dump(mode="json", exclude_none=True)
        line.update(outcome=score.outcome, score=score.model_dump(mode="json"), judged=now_iso())
        applied.append(line)
    if applied:
        log = RunLog(run_dir / RESPONSES)
        try:
            log.append_many(applied)
        finally:
            log.close()
    return {"run_id": manifest.run_id, "judge": judge.name, "judge_all": judge_all, "asked": len(wanted),
            "sent": len(jobs), "verdicts": counts, "decided": decided, "with_checker": agreement,
            "applied": len(applied), "log": str(log_path)}
