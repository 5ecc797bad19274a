"""The driver's progress bar for sharded work: units finished across the cluster, shards done /
running / failed, and units per second."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from curation.execution.shard_driver import ShardProgress


@dataclass
class ShardTally:
    planned: int = 0
    running: set[str] = field(default_factory=set)
    done: int = 0
    failed: int = 0
    retries: int = 0
    units: int = 0
    started_at: float = field(default_factory=time.perf_counter)

    def update(self, event: ShardProgress) -> None:
        if event.kind == "planned":
            self.planned += 1
        elif event.kind == "started":
            self.running.add(event.key)
        elif event.kind == "units":
            self.units += event.units
        elif event.kind == "retry":
            self.retries += 1
            self.running.discard(event.key)
        else:
            self.running.discard(event.key)
            if event.kind == "done":
                self.done += 1
            else:
                self.failed += 1

    def line(self, unit: str) -> str:
        rate = self.units / max(time.perf_counter() - self.started_at, 1e-9)
        retried = f" · {self.retries} retried" if self.retries else ""
        return (f"shards {self.done} done · {len(self.running)} running · {self.failed} failed of {self.planned}"
                f"{retried} · {rate:.1f} {unit}/s")


@contextmanager
def shard_progress(enabled: bool, label: str, console: Console, unit: str = "items"
                   ) -> Iterator[tuple[Callable[[int, int], None], Callable[[ShardProgress], None]]]:
    """(on_plan(total, already_done), on_progress(event)) driving a rich bar."""
    tally = ShardTally()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.fields[shards]}"), console=console, disable=not enabled)
    task_id = progress.add_task(label, total=None, shards="")
    before = 0

    def on_plan(total: int, done: int) -> None:
        nonlocal before
        before = done
        progress.update(task_id, total=total, completed=done)

    def on_progress(event: ShardProgress) -> None:
        tally.update(event)
        progress.update(task_id, completed=before + tally.units, shards=tally.line(unit))

    with progress:
        yield on_plan, on_progress
