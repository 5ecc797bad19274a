"""Several models × many items on an executor (local processes or Ray), same results as one machine.

Work units are deterministic shards: each model's items sorted by id and cut into fixed-size
slices, keyed `MODEL#NNNN`; a model on local weights (vllm, hf, llamacpp) is one shard holding
all its items, placed with `num_gpus` = its tensor-parallel size for vllm. Workers return
records; this driver alone writes the run logs (the same `runs/RUN_ID/` folders `run_model`
uses) and the response cache. Requests already logged or cached are never scheduled, so a
rerun after a crash resumes; a retried shard carries only the requests not yet returned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from curation.core.errors import BenchsmithError
from curation.core.workspace import Workspace
from curation.execution.executors import Shard, ShardExecutor
from curation.execution.shard_driver import DEFAULT_MAX_ATTEMPTS, ShardProgress, drive
from evaluation.cache import ResponseCache
from evaluation.local_answers import answer_locally, local_chooser
from evaluation.models import ModelSpec
from evaluation.runlog import RESPONSES, RunLog
from evaluation.runner import PreparedRun, RunRequest, RunSummary, prepare_run
from evaluation.sender import Job, RecordWriter, cached_meta
from evaluation.shard_worker import AnswerShard, ShardRequest, answer_shard, pack_images, received

DEFAULT_SHARD_SIZE = 100
LOCAL_WEIGHTS = ("vllm", "hf", "llamacpp")  # loading the weights is the cost: one shard per model


def shard_resources(spec: ModelSpec) -> tuple[float, float]:
    """(CPUs, GPUs) one shard of this model asks the cluster for."""
    if spec.backend == "vllm":
        return 1.0, float(spec.options.get("tensor_parallel_size", 1))
    if spec.backend == "hf":
        return 1.0, float(spec.options.get("num_gpus", 0))
    return 1.0, 0.0


def plan_slices(item_ids: list[str], spec: ModelSpec, shard_size: int) -> list[list[str]]:
    """Sorted item ids in fixed-size slices (one slice for a model on local weights)."""
    ordered = sorted(item_ids)
    size = len(ordered) if spec.backend in LOCAL_WEIGHTS else shard_size
    return [ordered[start:start + size] for start in range(0, len(ordered), max(1, size))]


@dataclass
class _ModelRun:
    request: RunRequest
    run: PreparedRun
    log: RunLog
    jobs: dict[str, Job]  # cache key → job still to finish
    counts: dict[str, int]
    stats: dict[str, Any] = field(default_factory=lambda: {"shards": 0, "scheduled": 0, "cached": 0, "received": 0})
    failed: dict[str, str] = field(default_factory=dict)
    writer: RecordWriter = field(init=False)


@dataclass
class ShardedRunResult:
    summaries: list[RunSummary]
    failed: dict[str, str]  # shard key → its last error


class ShardedRun:
    """The driver's state: per model its run log and open jobs; the one cache."""

    def __init__(self, ws: Workspace, requests: list[RunRequest],
                 on_record: Callable[[dict[str, Any]], None] | None = None):
        names = [request.spec.name for request in requests]
        if len(set(names)) != len(names):
            raise BenchsmithError(f"a model is given twice: {', '.join(sorted({n for n in names if names.count(n) > 1}))}")
        self.on_record = on_record
        self.cache = ResponseCache(ws.cache_path) if any(request.use_cache for request in requests) else None
        self.models: dict[str, _ModelRun] = {}
        self._model_of: dict[str, str] = {}  # shard key → model name
        try:
            for request in requests:
                local = local_chooser(request.spec) is not None
                run = prepare_run(ws, request, views=local)
                jobs = {} if local else {job.key: job for job in run.jobs()}
                model = _ModelRun(request, run, RunLog(run.run_dir / RESPONSES), jobs, run.counts())
                model.writer = RecordWriter(model.log, self.cache, request.spec, model.counts, on_record)
                self.models[request.spec.name] = model
        except BaseException:
            self.close()
            raise

    def _finish(self, model: _ModelRun, job: Job, record: dict[str, Any], meta: dict[str, Any]) -> None:
        completion, error = received(record)
        model.writer.write(job.finish(job, completion, error, meta), job.key, completion if error is None else None,
                           bool(meta.get("cached")))
        del model.jobs[job.key]

    def answer_locally(self) -> int:
        """Baseline heuristics answer here, in the driver: computing one costs less than shipping it."""
        answered = 0
        for model in self.models.values():
            choose = local_chooser(model.request.spec)
            if choose is None or not model.run.to_ask:
                continue
            stats = answer_locally(model.run.to_ask, choose, model.request.variant == "question_only", model.log,
                                   self.on_record)
            for outcome, count in stats["by_outcome"].items():
                model.counts[outcome] = model.counts.get(outcome, 0) + count
            model.stats["computed_locally"] = stats["computed_locally"]
            answered += stats["computed_locally"]
        return answered

    def finish_cached(self) -> int:
        """Requests whose response is in the cache are finished here and never scheduled."""
        finished = 0
        for model in self.models.values():
            if self.cache is None or not model.request.use_cache or not model.jobs:
                continue
            for key, completion in self.cache.get_many(list(model.jobs)).items():
                self._finish(model, model.jobs[key], {"completion": completion.to_record(), "error": None},
                             cached_meta(key))
                model.stats["cached"] += 1
                finished += 1
        return finished

    def shards(self, shard_size: int) -> list[Shard]:
        planned: list[Shard] = []
        for name, model in self.models.items():
            spec = model.request.spec
            open_by_item = {job.id: job for job in model.jobs.values()}
            slices = plan_slices(model.run.item_ids, spec, shard_size)
            model.stats["shards"] = len(slices)
            cpus, gpus = shard_resources(spec)
            for index, item_ids in enumerate(slices):
                jobs = [open_by_item[item_id] for item_id in item_ids if item_id in open_by_item]
                if not jobs:
                    continue  # everything in it is logged or cached: not scheduled again
                key = f"{name}#{index:04d}"
                self._model_of[key] = name
                payload = AnswerShard(spec, model.request.settings,
                                      tuple(ShardRequest(job.id, job.key, job.request) for job in jobs),
                                      pack_images(job.request for job in jobs))
                planned.append(Shard(key, answer_shard, payload, len(jobs), cpus, gpus))
                model.stats["scheduled"] += 1
        return planned

    def handle(self, shard: Shard, batch: list[dict[str, Any]]) -> int:
        model = self.models[self._model_of[shard.key]]
        finished = 0
        for record in batch:
            job = model.jobs.get(record["meta"]["key"])
            if job is None:
                continue  # already returned by an earlier attempt of this shard
            self._finish(model, job, record, record["meta"])
            model.stats["received"] += 1
            finished += 1
        return finished

    def remaining(self, shard: Shard) -> Shard | None:
        model = self.models[self._model_of[shard.key]]
        payload: AnswerShard = shard.payload
        left = payload.without({r.key for r in payload.requests if r.key not in model.jobs})
        if not left.requests:
            return None
        return Shard(shard.key, shard.fn, left, len(left.requests), shard.num_cpus, shard.num_gpus)

    def summaries(self, failed: dict[str, str]) -> list[RunSummary]:
        out = []
        for name, model in self.models.items():
            model.failed = {key: error for key, error in failed.items() if self._model_of.get(key) == name}
            stats = dict(model.stats, failed_shards=model.failed, not_finished=len(model.jobs))
            out.append(RunSummary(model.run.run_id, model.run.run_dir, len(model.run.item_ids), model.run.done_before,
                                  model.counts, model.run.skipped, stats))
        return out

    def close(self) -> None:
        for model in self.models.values():
            model.log.close()
        if self.cache is not None:
            self.cache.close()


def run_models(ws: Workspace, requests: list[RunRequest], executor: ShardExecutor, *,
               shard_size: int = DEFAULT_SHARD_SIZE, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
               on_plan: Callable[[int, int], None] | None = None,
               on_progress: Callable[[ShardProgress], None] | None = None,
               on_record: Callable[[dict[str, Any]], None] | None = None) -> ShardedRunResult:
    """Run every model over its items on `executor`; a shard that keeps failing is reported, the rest completes."""
    sharded = ShardedRun(ws, requests, on_record)
    try:
        total = sum(len(model.run.item_ids) for model in sharded.models.values())
        done_before = sum(model.run.done_before for model in sharded.models.values())
        done_before += sharded.answer_locally() + sharded.finish_cached()
        if on_plan is not None:
            on_plan(total, done_before)
        report = drive(executor, sharded.shards(shard_size), sharded.handle, sharded.remaining,
                       max_attempts=max_attempts, on_progress=on_progress)
        return ShardedRunResult(sharded.summaries(report.failed), report.failed)
    finally:
        sharded.close()
