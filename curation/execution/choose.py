"""The executor a command runs its shards on, chosen by `--executor`, `--workers` and `--ray-address`."""

from __future__ import annotations

from curation.execution.executors import (
    ExecutorError,
    InProcessExecutor,
    ProcessPoolExecutor,
    ShardExecutor,
    local_workers,
)
from curation.execution.ray_executor import RayExecutor

EXECUTORS = ("local", "ray")


def make_executor(name: str, *, units: int = 2, workers: int | None = None,
                  ray_address: str | None = None) -> ShardExecutor:
    """`local`: in this process for a single unit of work, else a process pool; `ray`: a Ray cluster."""
    if name == "ray":
        return RayExecutor(ray_address)
    if name != "local":
        raise ExecutorError(f"--executor {name!r}: choose one of {', '.join(EXECUTORS)}")
    if ray_address is not None:
        raise ExecutorError("--ray-address needs --executor ray")
    size = min(workers or local_workers(), units)
    return InProcessExecutor() if size <= 1 else ProcessPoolExecutor(size)
