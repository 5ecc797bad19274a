"""The driver loop: submit shards, hand each result to the caller (the one writer), retry a
failed shard with only what it had not returned (bounded), report shards that keep failing.

Progress goes out as `ShardProgress` events: done / running / failed shards and units finished.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from curation.execution.executors import Shard, ShardExecutor, Started

DEFAULT_MAX_ATTEMPTS = 3


@dataclass
class ShardProgress:
    kind: Literal["planned", "started", "units", "done", "retry", "failed"]
    key: str
    units: int = 0
    error: str | None = None
    started: Started | None = None


@dataclass
class DriveReport:
    done: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # shard key → its last error
    attempts: dict[str, int] = field(default_factory=dict)


Handle = Callable[[Shard, Any], int]  # a result → units it finished (already written by the caller)
Remaining = Callable[[Shard], Shard | None]  # a failed shard → the shard of what is left, or None


def drive(executor: ShardExecutor, shards: Iterable[Shard], handle: Handle, remaining: Remaining, *,
          max_attempts: int = DEFAULT_MAX_ATTEMPTS,
          on_progress: Callable[[ShardProgress], None] | None = None) -> DriveReport:
    """Run every shard to its end or to `max_attempts` failures; the caller writes each result."""
    notify = on_progress or (lambda progress: None)
    report = DriveReport()
    current: dict[str, Shard] = {}
    for planned in shards:
        current[planned.key] = planned
        report.attempts[planned.key] = 1
        notify(ShardProgress("planned", planned.key, planned.units))
        executor.submit(planned, 1)
    while current:
        event = executor.next_event()
        shard = current.get(event.key)
        if shard is None or event.attempt != report.attempts[event.key]:
            continue  # a late word from an attempt already given up on
        if event.kind == "start":
            notify(ShardProgress("started", shard.key, started=event.value))
        elif event.kind == "output":
            notify(ShardProgress("units", shard.key, handle(shard, event.value)))
        elif event.kind == "end":
            del current[shard.key]
            report.done.append(shard.key)
            notify(ShardProgress("done", shard.key))
        else:
            left = remaining(shard)
            if left is None:  # everything had come back before it failed
                del current[shard.key]
                report.done.append(shard.key)
                notify(ShardProgress("done", shard.key))
            elif report.attempts[shard.key] >= max_attempts:
                del current[shard.key]
                report.failed[shard.key] = event.error or "failed"
                notify(ShardProgress("failed", shard.key, left.units, error=report.failed[shard.key]))
            else:
                report.attempts[shard.key] += 1
                current[shard.key] = left
                notify(ShardProgress("retry", shard.key, left.units, error=event.error))
                executor.submit(left, report.attempts[shard.key])
    return report
