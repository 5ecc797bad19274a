"""The judge: scores a run's rationales on four axes (1–5) against the reference rationale.

The judge never sees which model wrote the rationale. Its reply must be JSON following
VERDICT_SCHEMA (sent as native structured output where the model declares it); an invalid
reply is asked for again, and a verdict still invalid is recorded as `missing` — never
averaged in as 0 or −1. Each verdict is a `JudgeVerdict` (evaluation.records), the record
`annotate load-judge` reads; a rationale is judged again when its item, its reference or the
rationale itself changed (the request key covers all three).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curation.core.item import Item
from curation.core.workspace import Workspace
from evaluation.backends.base import BackendError, ChatRequest, Completion, Message
from evaluation.cache import cache_key
from evaluation.judge_sections import judge_user_text
from evaluation.metrics import load_run
from evaluation.models import ModelSpec
from evaluation.records import JUDGE_AXES, JudgeScores, JudgeVerdict, read_jsonl_records
from evaluation.runlog import now_iso
from evaluation.sender import InvalidResponse, Job, SenderSettings, send_jobs
from scoring.portable.choice_parsing import json_objects, load_object, split_thinking

JUDGE_PROMPT_VERSION = "judge-v1"  # the rubric and its prompt: part of every judge request key

_Score = Field(ge=1, le=5)


class Verdict(BaseModel):
    model_config = ConfigDict(extra="ignore")
    factuality: int = _Score
    logical_soundness: int = _Score
    depth: int = _Score
    clarity: int = _Score
    factual_errors: list[str] = Field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(getattr(self, axis) for axis in JUDGE_AXES)


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


def judge_request(item: Item, rationale: str) -> ChatRequest:
    user = judge_user_text(item, rationale)
    return ChatRequest((Message("system", (_SYSTEM,)), Message("user", (user,))), response_schema=VERDICT_SCHEMA)


def parse_verdict(text: str) -> Verdict:
    visible, _, _ = split_thinking(text or "")
    problems = []
    for candidate in reversed(json_objects(visible)):
        data = load_object(candidate)
        if data is None:
            continue
        try:
            return Verdict.model_validate(data)
        except ValidationError as error:
            problems.append("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()))
    reason = problems[0] if problems else "no JSON object"
    raise InvalidResponse(f"{reason} in {visible[:160]!r}")


def judge_log_path(run_dir: Path, judge: ModelSpec) -> Path:
    return run_dir / f"judge-{re.sub(r'[^A-Za-z0-9._-]+', '-', judge.name).strip('-')}.jsonl"


def _finisher(base: dict[str, Any]) -> Callable[[Job, Completion | None, BackendError | None, dict[str, Any]],
                                                 dict[str, Any]]:
    def finish(job: Job, completion: Completion | None, error: BackendError | None, meta: dict[str, Any]) -> dict[str, Any]:
        common = base | {"key": job.key, "usage": completion.usage if completion else None,
                         "ts": now_iso()}
        if completion is None:
            verdict = JudgeVerdict.model_validate(common | {"status": "missing", "error": {
                "kind": error.kind if error else "error", "message": str(error)}})
        else:
            parsed = parse_verdict(completion.text)
            verdict = JudgeVerdict.model_validate(common | {
                "status": "ok", "scores": JudgeScores.model_validate(parsed.model_dump(include=set(JUDGE_AXES))),
                "factual_errors": parsed.factual_errors, "text": completion.text, "thinking": completion.thinking})
        return verdict.model_dump(mode="json", exclude_none=True)

    return finish


def judge_run(ws: Workspace, run_dir: Path, judge: ModelSpec, settings: SenderSettings, *, max_invalid: int = 2,
              on_start: Callable[[int, int], None] | None = None,
              on_record: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    run = load_run(run_dir, ws)
    log_path = judge_log_path(run_dir, judge)
    done = read_jsonl_records(log_path, JudgeVerdict)
    jobs: list[Job] = []
    candidates = 0
    for item_id, record in run.records.items():
        item = run.items.get(item_id)
        rationale = (record.rationale or "").strip()
        if item is None or not rationale or not (item.rationale and item.rationale.text.strip()):
            continue
        candidates += 1
        request = judge_request(item, rationale)

        def rekey(req: ChatRequest) -> str:
            return cache_key(judge, req, JUDGE_PROMPT_VERSION)

        previous = done.get(item_id)
        if previous is not None and previous.key == rekey(request) and previous.status == "ok":
            continue
        base = {"item_id": item_id, "content_hash": record.content_hash, "run_id": run.run_id, "model": run.model_name,
                "judge": judge.name, "rubric_version": JUDGE_PROMPT_VERSION}
        jobs.append(Job(item_id, request, rekey(request), _finisher(base), rekey, max_invalid))
    if on_start is not None:
        on_start(candidates, candidates - len(jobs))
    if jobs:
        asyncio.run(send_jobs(judge, settings, log_path, jobs, ws.cache_path, on_record))
    verdicts = [v for item_id, v in read_jsonl_records(log_path, JudgeVerdict).items() if item_id in run.records]
    ok = sum(1 for v in verdicts if v.status == "ok")
    return {"judged": len(verdicts), "ok": ok, "missing": len(verdicts) - ok,
            "not_judged": len(run.records) - candidates, "stale_skipped": run.stale, "log": str(log_path)}


def current_verdicts(ws: Workspace, source: Path | str) -> tuple[list[JudgeVerdict], list[str]]:
    """The verdicts of a judge log (or of every judge log of a run) whose item and answer are still current."""
    from evaluation.runlog import find_run

    if isinstance(source, Path) and source.is_file():
        run_dir, logs = source.parent, [source]
    else:
        run_dir = find_run(ws.runs_dir, str(source))
        logs = sorted(run_dir.glob("judge-*.jsonl"))
    run = load_run(run_dir, ws)
    verdicts, stale = [], 0
    for log in logs:
        for item_id, verdict in read_jsonl_records(log, JudgeVerdict).items():
            answer = run.records.get(item_id)
            if answer is None or answer.content_hash != verdict.content_hash:
                stale += 1
                continue
            verdicts.append(verdict)
    notes = [f"{stale} stale verdict(s) skipped (the item or its answer changed since judging)"] if stale else []
    if not logs:
        notes.append(f"{run_dir.name}: no judge logs (run `benchsmith judge {run_dir.name} --judge MODEL` first)")
    return verdicts, notes
