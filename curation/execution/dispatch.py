"""The one dispatch of a workload that can be sharded (`benchsmith run`, `benchsmith extract`):
the executor options decide once whether it runs here in this process, or as shards on an
executor (a local process pool or Ray) under the shard progress bar; the executor is always closed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from rich.console import Console

from curation.execution.choose import make_executor
from curation.execution.executors import ShardExecutor
from curation.execution.shard_driver import DEFAULT_MAX_ATTEMPTS, ShardProgress
from curation.execution.shard_progress import shard_progress

Result = TypeVar("Result")
OnPlan = Callable[[int, int], None]  # (units in all, units already done)
OnProgress = Callable[[ShardProgress], None]


@dataclass(frozen=True)
class ExecutorChoice:
    """What the CLI's executor options ask for (`curation.execution.options`)."""

    name: str = "local"
    ray_address: str | None = None
    workers: int | None = None
    max_attempts: int = DEFAULT_MAX_ATTEMPTS

    def runs_here(self, units: int, *, pinned: bool = False) -> bool:
        """The work runs in this process, unsharded: a single unit (or work pinned to this
        process) with the local executor and no cluster named."""
        return self.name == "local" and self.ray_address is None and (units <= 1 or pinned)


def dispatch(choice: ExecutorChoice, units: int, here: Callable[[], Result],
             sharded: Callable[[ShardExecutor, OnPlan, OnProgress], Result], *,
             label: str, unit: str, show: bool, console: Console, pinned: bool = False) -> Result:
    """`here()` when the work runs in this process, else `sharded(executor, on_plan, on_progress)`
    on the executor the choice names, sized to `units`."""
    if choice.runs_here(units, pinned=pinned):
        return here()
    executor = make_executor(choice.name, units=units, workers=choice.workers, ray_address=choice.ray_address)
    try:
        with shard_progress(show, f"{label} on {executor.name}", console, unit) as (on_plan, on_progress):
            return sharded(executor, on_plan, on_progress)
    finally:
        executor.close()
