"""Sending requests: bounded concurrency that adapts to 429/503, retries with exponential
backoff and jitter, a per-request timeout, the response cache, and one log line per job.

The sender knows nothing about exams: a job is a request plus a `finish` function that
turns the completion (or the final error) into the record logged for it. Answer runs and
judge runs both use it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from curation.core.errors import BenchsmithError
from evaluation.backends import make_backend
from evaluation.backends.base import Backend, BackendError, ChatRequest, Completion
from evaluation.cache import ResponseCache
from evaluation.models import ModelSpec
from evaluation.runlog import RunLog

FEED_CHUNK = 64  # jobs looked up in the cache and queued at a time; the first chunk is sent before more are taken
_AHEAD = 4096  # jobs built ahead of the workers, in the loop's idle time while the first requests are out


class BackendUnreachable(BenchsmithError):
    exit_code = 5


class InvalidResponse(Exception):
    """Raised by a job's `finish` when the completion must be requested again (a judge's bad JSON)."""


class RecordSink(Protocol):
    """Where finished records go: the run log on the driver, a queue back to it on a worker."""

    def append(self, record: dict[str, Any]) -> None: ...


@dataclass
class Job:
    id: str
    request: ChatRequest
    key: str
    finish: Callable[[Job, Completion | None, BackendError | None, dict[str, Any]], dict[str, Any]]
    rekey: Callable[[ChatRequest], str] | None = None  # for resends with a new salt
    max_invalid: int = 0


@dataclass
class SenderSettings:
    concurrency: int = 16
    max_retries: int = 4
    timeout_s: float = 120.0
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 30.0
    seed: int | None = None  # jitter seed (tests)


class AdaptiveLimiter:
    """At most `limit` requests in flight; halved on throttling, grown by one after `limit`
    successes in a row, never above the configured maximum."""

    def __init__(self, maximum: int):
        self.maximum = maximum
        self.limit = maximum
        self.active = 0
        self._streak = 0
        self._last_cut = 0.0
        self._cond = asyncio.Condition()

    async def acquire(self) -> None:
        async with self._cond:
            await self._cond.wait_for(lambda: self.active < self.limit)
            self.active += 1

    async def release(self, throttled: bool) -> None:
        async with self._cond:
            self.active -= 1
            if throttled:
                now = time.monotonic()
                if now - self._last_cut > 0.5:  # one cut per burst of 429s, not one per request
                    self.limit = max(1, self.limit // 2)
                    self._last_cut = now
                self._streak = 0
            else:
                self._streak += 1
                if self._streak >= self.limit and self.limit < self.maximum:
                    self.limit += 1
                    self._streak = 0
            self._cond.notify_all()


@dataclass
class SendStats:
    sent: int = 0
    cached: int = 0
    retries: int = 0
    throttled: int = 0
    min_limit: int = 0
    by_outcome: dict[str, int] = field(default_factory=dict)


def cached_meta(key: str, resends: int = 0) -> dict[str, Any]:
    """A job's meta when its response came from the cache: nothing was sent."""
    return {"attempts": 0, "latency_s": 0.0, "cached": True, "key": key, "resends": resends}


class RecordWriter:
    """The one finishing step of a job, wherever it was sent from (this process or a shard on a
    worker): the log line first (it is what a resumed run trusts), then the response cache, the
    outcome count and the progress callback."""

    def __init__(self, log: RecordSink, cache: ResponseCache | None, spec: ModelSpec, counts: dict[str, int],
                 on_record: Callable[[dict[str, Any]], None] | None = None):
        self.log = log
        self.cache = cache
        self.spec = spec
        self.counts = counts
        self.on_record = on_record

    def write(self, record: dict[str, Any], key: str, completion: Completion | None, cached: bool) -> None:
        """`completion`: the response the record was made from (None after a final error); cached
        responses are not written to the cache again."""
        self.log.append(record)
        if completion is not None and self.cache is not None and not cached:
            self.cache.put(key, completion, self.spec)
        outcome = record.get("outcome", "?")
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
        if self.on_record is not None:
            self.on_record(record)


class RequestSender:
    def __init__(self, backend: Backend, settings: SenderSettings, log: RecordSink, cache: ResponseCache | None,
                 on_record: Callable[[dict[str, Any]], None] | None = None, ready: asyncio.Event | None = None):
        self.backend = backend
        self.settings = settings
        self.log = log
        self.cache = cache
        self.on_record = on_record
        self.ready = ready  # set once records may be logged (the run's manifest is written)
        self.stats = SendStats(min_limit=settings.concurrency)
        self._writer = RecordWriter(log, cache, backend.spec, self.stats.by_outcome, on_record)
        self._random = random.Random(settings.seed)
        self._cached: dict[str, Completion] = {}
        self._limiter: AdaptiveLimiter | None = None

    def _delay(self, attempt: int, error: BackendError) -> float:
        base = min(self.settings.backoff_cap_s, self.settings.backoff_base_s * 2**attempt)
        delay = base * (0.5 + self._random.random())  # jitter: spread the retries of a burst
        if error.retry_after is not None:
            delay = max(delay, error.retry_after)
        return delay

    async def _send(self, request: ChatRequest) -> tuple[Completion | None, BackendError | None, dict[str, Any]]:
        assert self._limiter is not None
        attempts = 0
        started = time.perf_counter()
        while True:
            attempts += 1
            await self._limiter.acquire()
            error: BackendError | None = None
            try:
                async with asyncio.timeout(self.settings.timeout_s):
                    completion = await self.backend.complete(request)
            except TimeoutError:
                error = BackendError("timeout", f"no response within {self.settings.timeout_s:g} s")
            except BackendError as raised:
                error = raised
            finally:
                await self._limiter.release(throttled=error is not None and error.throttled)
            self.stats.sent += 1
            if error is None:
                return completion, None, {"attempts": attempts, "latency_s": round(time.perf_counter() - started, 4)}
            if error.throttled:
                self.stats.throttled += 1
                self.stats.min_limit = min(self.stats.min_limit, self._limiter.limit)
            if not error.retryable or attempts > self.settings.max_retries:
                if error.kind == "connection":
                    raise BackendUnreachable(f"cannot reach {getattr(self.backend.spec, 'base_url', None) or self.backend.spec.name}: "
                                             f"{error} (finished responses are kept; rerun to resume)")
                return None, error, {"attempts": attempts, "latency_s": round(time.perf_counter() - started, 4)}
            self.stats.retries += 1
            await asyncio.sleep(self._delay(attempts - 1, error))

    async def _run_job(self, job: Job) -> None:
        request, key = job.request, job.key
        for resend in range(job.max_invalid + 1):
            completion = self._cached.get(key)
            if completion is not None:
                self.stats.cached += 1
                completion_meta = cached_meta(key, resend)
                error = None
            else:
                completion, error, completion_meta = await self._send(request)
                completion_meta.update(cached=False, key=key, resends=resend)
            try:
                record = job.finish(job, completion, error, completion_meta)
            except InvalidResponse as invalid:
                if resend == job.max_invalid or job.rekey is None:
                    record = job.finish(job, None, BackendError("malformed", f"invalid after {resend + 1} tries: {invalid}"),
                                        completion_meta)
                else:
                    request = replace(request, salt=request.salt + 1)
                    key = job.rekey(request)
                    continue
            break
        if self.ready is not None:
            await self.ready.wait()
        self._writer.write(record, key, completion if error is None else None, completion_meta["cached"])

    async def send_now(self, jobs: list[Job]) -> None:
        """Send these jobs together (cached responses first) and return once each is logged: for a
        caller that chooses its next jobs from these ones' records (adaptive runs)."""
        if self._limiter is None:
            self._limiter = AdaptiveLimiter(self.settings.concurrency)
        if self.cache is not None and jobs:
            self._cached.update(self.cache.get_many(job.key for job in jobs))
        await asyncio.gather(*(self._run_job(job) for job in jobs))

    async def run(self, jobs: Iterable[Job] | AsyncIterable[Job]) -> SendStats:
        """Send every job; jobs are taken from the iterable a chunk at a time, so the first
        requests go out at once and building the later ones overlaps with waiting for responses
        (not with handling them: up to `_AHEAD` are built while the loop has nothing else to do)."""
        self._limiter = AdaptiveLimiter(self.settings.concurrency)
        queue: asyncio.Queue[Job | None] = asyncio.Queue(maxsize=_AHEAD)
        workers_n = self.settings.concurrency

        async def feed() -> None:
            chunk: list[Job] = []
            async for job in _each(jobs):
                chunk.append(job)
                if len(chunk) == FEED_CHUNK:
                    await self._enqueue(chunk, queue)
                    chunk = []
                    await asyncio.sleep(0)  # a put into a queue with room never yields: let the workers send
            await self._enqueue(chunk, queue)
            for _ in range(workers_n):
                await queue.put(None)

        async def worker() -> None:
            while (job := await queue.get()) is not None:
                await self._run_job(job)

        tasks = [asyncio.create_task(feed())] + [asyncio.create_task(worker()) for _ in range(workers_n)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.cache is not None:
                self.cache.flush()
        return self.stats

    async def _enqueue(self, chunk: list[Job], queue: asyncio.Queue[Job | None]) -> None:
        if self.cache is not None and chunk:
            self._cached.update(self.cache.get_many(job.key for job in chunk))
        for job in chunk:
            await queue.put(job)


async def _each(jobs: Iterable[Job] | AsyncIterable[Job]) -> AsyncIterator[Job]:
    if isinstance(jobs, AsyncIterable):
        async for job in jobs:
            yield job
    else:
        for job in jobs:
            yield job


async def send_jobs(spec: ModelSpec, settings: SenderSettings, log_path: Path, jobs: Iterable[Job] | AsyncIterable[Job],
                   cache_path: Path | None, on_record: Callable[[dict[str, Any]], None] | None = None,
                   ready: asyncio.Event | None = None) -> SendStats:
    """Open the backend, the log and the cache, run the jobs, close everything (also on failure)."""
    backend = make_backend(spec, settings.concurrency)
    log = RunLog(log_path)
    cache = ResponseCache(cache_path) if cache_path is not None else None
    try:
        return await RequestSender(backend, settings, log, cache, on_record, ready).run(jobs)
    finally:
        log.close()
        if cache is not None:
            cache.close()
        await backend.aclose()
