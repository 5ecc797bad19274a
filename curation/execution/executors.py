"""Where shards run: the executor seam shared by `benchsmith run` and `benchsmith extract`.

A shard is a deterministic unit of work (a model's slice of items, one PDF) given as a module-level
generator function and its payload. The function never touches the workspace: it yields results
back to the driver, which alone writes the store, the cache and the run logs. Executors only move
shards to workers and results back; retries and bookkeeping live in `curation.execution.shard_driver`.

- `InProcessExecutor`: shards run one after another in this process.
- `ProcessPoolExecutor`: a pool of local processes (spawned), sized to the cores.
- `RayExecutor` (`curation.execution.ray_executor`, the `ray` extra): a Ray cluster.

`curation.execution.choose.make_executor` picks one of them by the CLI's `--executor`.
"""

from __future__ import annotations

import os
import socket
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import ProcessPoolExecutor as _Pool
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from curation.core.errors import BenchsmithError

ShardFunction = Callable[[Any], Iterator[Any]]


class ExecutorError(BenchsmithError):
    """An executor that cannot be used (unreachable cluster, bad option)."""

    exit_code = 2


@dataclass(frozen=True)
class Shard:
    key: str  # deterministic: the same work always gets the same key
    fn: ShardFunction  # module-level generator function (importable on workers)
    payload: Any
    units: int  # items or PDFs in the shard, for progress
    num_cpus: float = 1.0
    num_gpus: float = 0.0


@dataclass(frozen=True)
class Started:
    """The first value every shard yields: where it runs."""

    pid: int
    host: str
    node: str = ""  # the Ray node id, where there is one


@dataclass
class Event:
    kind: Literal["start", "output", "end", "error"]
    key: str
    attempt: int
    value: Any = None
    error: str | None = None


class ShardExecutor(Protocol):
    name: str

    def submit(self, shard: Shard, attempt: int) -> None: ...

    def next_event(self) -> Event:
        """Block until a submitted shard starts, yields, ends or fails (only while one is in flight)."""
        ...

    def close(self) -> None: ...


def pump(fn: ShardFunction, payload: Any) -> Iterator[Any]:
    """What a worker runs: announce itself, then the shard's own results."""
    yield Started(os.getpid(), socket.gethostname())
    yield from fn(payload)


def describe_error(error: BaseException) -> str:
    """One line: a user error's own message, otherwise the exception type and message."""
    if isinstance(error, BenchsmithError):
        return str(error)
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


def local_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class InProcessExecutor:
    """Shards one after another in this process; their generators are stepped as events are asked for."""

    name = "local"

    def __init__(self) -> None:
        self._queue: deque[tuple[Shard, int]] = deque()
        self._current: tuple[str, int, Iterator[Any]] | None = None

    def submit(self, shard: Shard, attempt: int) -> None:
        self._queue.append((shard, attempt))

    def next_event(self) -> Event:
        if self._current is None:
            shard, attempt = self._queue.popleft()
            self._current = (shard.key, attempt, pump(shard.fn, shard.payload))
        key, attempt, results = self._current
        try:
            value = next(results)
        except StopIteration:
            self._current = None
            return Event("end", key, attempt)
        except Exception as error:  # noqa: BLE001 - a failing shard is reported, the rest goes on
            self._current = None
            return Event("error", key, attempt, error=describe_error(error))
        return Event("start" if isinstance(value, Started) else "output", key, attempt, value)

    def close(self) -> None:
        self._queue.clear()
        self._current = None


_results_queue: Any = None  # set in each pool process


def _init_worker(results: Any) -> None:
    global _results_queue
    _results_queue = results


def _run_in_pool(fn: ShardFunction, payload: Any, key: str, attempt: int) -> None:
    try:
        for value in pump(fn, payload):
            _results_queue.put(("start" if isinstance(value, Started) else "output", key, attempt, value, None))
    except Exception as error:  # noqa: BLE001
        _results_queue.put(("error", key, attempt, None, describe_error(error) or traceback.format_exc(limit=1)))
        return
    _results_queue.put(("end", key, attempt, None, None))


class ProcessPoolExecutor:
    """Shards on a pool of spawned local processes; results stream back through one queue.

    A process that dies (killed, out of memory) breaks the pool: the shards it held are reported
    as failed (the driver retries what they had not finished) and a fresh pool takes the rest."""

    name = "local"

    def __init__(self, workers: int | None = None):
        import multiprocessing

        self.workers = max(1, workers or local_workers())
        self._context = multiprocessing.get_context("spawn")
        self._results = self._context.Queue()
        self._pool: _Pool | None = None
        self._futures: dict[Future, tuple[str, int, _Pool]] = {}
        self._finished: set[tuple[str, int]] = set()

    def _ensure_pool(self) -> _Pool:
        if self._pool is None:
            self._pool = _Pool(self.workers, mp_context=self._context, initializer=_init_worker,
                               initargs=(self._results,))
        return self._pool

    def submit(self, shard: Shard, attempt: int) -> None:
        pool = self._ensure_pool()
        self._futures[pool.submit(_run_in_pool, shard.fn, shard.payload, shard.key, attempt)] = (shard.key, attempt, pool)

    def next_event(self) -> Event:
        import queue

        while True:
            try:
                kind, key, attempt, value, error = self._results.get(timeout=0.1)
            except queue.Empty:
                broken = self._broken()
                if broken is not None:
                    return broken
                continue
            if kind in ("end", "error"):
                self._finished.add((key, attempt))
            return Event(kind, key, attempt, value, error)

    def _broken(self) -> Event | None:
        """A shard whose process died without saying so; drop finished futures on the way."""
        for future, (key, attempt, pool) in list(self._futures.items()):
            if not future.done():
                continue
            if (key, attempt) in self._finished:
                self._finished.discard((key, attempt))
                del self._futures[future]
                continue
            error = future.exception()
            if error is None:
                continue  # finished cleanly, its last message still in the pipe
            del self._futures[future]
            if isinstance(error, BrokenProcessPool) and pool is self._pool:
                pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None  # a fresh pool for what is submitted next
            return Event("error", key, attempt, error=f"worker process died: {describe_error(error)}")
        return None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._results.close()

