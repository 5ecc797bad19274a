"""Adaptive runs (`benchsmith run --adaptive K --bank BANK.json`): each model is asked items chosen
one (or a batch of b) at a time from what it has answered so far, through the same run folders,
request sender, response cache and logs as any run.

The run is the ordinary run of that model on that selection (same run id): its records are
ordinary records, so a resumed run re-asks nothing (what is logged is read back, in the order it
was logged, as the answers so far), a rerun with a larger K continues from them, and a plain run
afterwards asks the rest. K counts every item of the run with a record, earlier ones included.

Which item comes next and what the answers say about accuracy is the plan's business (an
`AdaptivePlan`, made from an item bank by the filtering package and handed over by the root
command, as the report's paper sections are): this module only asks and logs. The models are
asked at the same time, each in its own coroutine on one event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from curation.core.errors import BenchsmithError
from curation.core.workspace import Workspace
from evaluation.backends import make_backend
from evaluation.cache import ResponseCache
from evaluation.runlog import RESPONSES, RunLog, read_records
from evaluation.runner import RunRequest, prepare_run
from evaluation.sender import RequestSender

MIN_DETERMINED_TO_STOP = 10  # --stop-se is not trusted on fewer determined answers


class AdaptivePlan(Protocol):
    items: list[str]  # the target items: the estimate is the accuracy on these
    notes: list[str]
    summary: dict[str, Any]  # what the plan says about itself (the bank's cross-validated error …)

    def next_items(self, answers: list[tuple[str, float | None]], count: int, seed: str) -> list[str]: ...

    def estimate(self, answers: list[tuple[str, float | None]]) -> dict[str, Any]: ...


PlanMaker = Callable[[Path, dict[str, str]], AdaptivePlan]  # (bank file, askable item → its content hash)
PLAN_MAKERS: list[PlanMaker] = []  # set by the root command (filtering's item bank)


def plan_maker() -> PlanMaker:
    if not PLAN_MAKERS:
        raise BenchsmithError("adaptive runs need the filtering package's item bank (run them through `benchsmith`)")
    return PLAN_MAKERS[0]


OUTCOME_VALUE = {"correct": 1.0, "wrong": 0.0}  # any other outcome: asked, not determined


@dataclass
class AdaptiveSettings:
    k: int
    bank: Path
    stop_se: float | None = None
    batch: int = 1


@dataclass
class AdaptiveResult:
    model: str
    run_id: str
    run_dir: Path
    asked: int
    new: int
    estimate: dict[str, Any]
    targets: int
    notes: list[str] = field(default_factory=list)
    stopped: str = "k"  # k | se | exhausted
    plan_summary: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "asked": self.asked, **self.estimate, "new": self.new,
                "items": self.targets, "stopped": self.stopped, "run_id": self.run_id, "notes": self.notes}


def _answers(records: dict[str, dict[str, Any]], targets: set[str]) -> list[tuple[str, float | None]]:
    return [(item_id, OUTCOME_VALUE.get(record.get("outcome", ""))) for item_id, record in records.items()
            if item_id in targets]


@dataclass
class _Model:
    request: RunRequest
    plan: AdaptivePlan
    run_id: str
    run_dir: Path
    to_ask: dict[str, tuple[Any, str]]  # item → (item, digest)
    job_for: Callable[[Any, str], Any]
    answers: list[tuple[str, float | None]]


def _prepare(ws: Workspace, request: RunRequest, settings: AdaptiveSettings) -> _Model:
    run = prepare_run(ws, request)
    logged = read_records(run.run_dir / RESPONSES)
    current = {item.id: digest for item, digest in run.to_ask}
    current |= {item_id: logged[item_id]["content_hash"] for item_id in run.done if item_id in logged}
    plan = plan_maker()(settings.bank, current)
    if run.skipped:
        plan.notes.append(f"{len(run.skipped)} item(s) of the selection cannot be sent to this model and are not "
                          "estimated · 이 모델에 보낼 수 없는 문항은 추정에서 빠집니다")
    targets = set(plan.items)
    return _Model(request, plan, run.run_id, run.run_dir,
                  {item.id: (item, digest) for item, digest in run.to_ask if item.id in targets},
                  run.job_for, _answers({i: logged[i] for i in run.done if i in logged}, targets))


async def _ask(model: _Model, settings: AdaptiveSettings, cache: ResponseCache | None,
               on_record: Callable[[dict[str, Any]], None] | None) -> AdaptiveResult:
    spec = model.request.spec
    before = len(model.answers)
    answered = {item_id for item_id, _ in model.answers}
    stopped = "k"
    backend = make_backend(spec, model.request.settings.concurrency)
    log = RunLog(model.run_dir / RESPONSES)
    outcomes: dict[str, float | None] = {}

    def keep(record: dict[str, Any]) -> None:
        outcomes[record["item_id"]] = OUTCOME_VALUE.get(record.get("outcome", ""))
        if on_record is not None:
            on_record(record)

    try:
        sender = RequestSender(backend, model.request.settings, log, cache, keep)
        while len(model.answers) < settings.k:
            if settings.stop_se is not None and _settled(model, settings.stop_se):
                stopped = "se"
                break
            count = min(settings.batch, settings.k - len(model.answers))
            chosen = [i for i in model.plan.next_items(model.answers, count, spec.name) if i not in answered]
            if not chosen:
                stopped = "exhausted"
                break
            await sender.send_now([model.job_for(*model.to_ask[item_id]) for item_id in chosen])
            model.answers += [(item_id, outcomes.get(item_id)) for item_id in chosen]
            answered.update(chosen)
    finally:
        log.close()
        await backend.aclose()
    return AdaptiveResult(spec.name, model.run_id, model.run_dir, len(model.answers), len(model.answers) - before,
                          model.plan.estimate(model.answers), len(model.plan.items), model.plan.notes, stopped,
                          model.plan.summary)


def _settled(model: _Model, stop_se: float) -> bool:
    if sum(v is not None for _, v in model.answers) < MIN_DETERMINED_TO_STOP:
        return False
    found = model.plan.estimate(model.answers)
    return found.get("outside") is None and found["se"] < stop_se


def run_adaptive(ws: Workspace, requests: list[RunRequest], settings: AdaptiveSettings,
                 on_record: Callable[[dict[str, Any]], None] | None = None) -> tuple[list[AdaptiveResult], dict[str, str]]:
    """Every model's adaptive run, the models at the same time; (results, model → error for the
    models that failed: their finished records are kept)."""
    if settings.k < 1:
        raise BenchsmithError("--adaptive K: K must be at least 1")
    if settings.batch < 1:
        raise BenchsmithError("--batch must be at least 1")
    names = [request.spec.name for request in requests]
    if len(set(names)) != len(names):
        raise BenchsmithError(f"a model is given twice: {', '.join(sorted({n for n in names if names.count(n) > 1}))}")
    models = [_prepare(ws, request, settings) for request in requests]
    cache = ResponseCache(ws.cache_path) if any(request.use_cache for request in requests) else None

    async def all_models() -> list[AdaptiveResult | BaseException]:
        return await asyncio.gather(*(_ask(model, settings, cache if model.request.use_cache else None, on_record)
                                      for model in models), return_exceptions=True)

    try:
        found = asyncio.run(all_models())
    finally:
        if cache is not None:
            cache.close()
    results = [r for r in found if isinstance(r, AdaptiveResult)]
    failed = {}
    for model, result in zip(models, found, strict=True):
        if isinstance(result, BenchsmithError):
            failed[model.request.spec.name] = str(result)
        elif isinstance(result, BaseException):
            raise result
    return results, failed
