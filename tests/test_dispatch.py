"""The one dispatch of `run` and `extract`: which work stays in this process, which goes to an
executor as shards, and that the executor it makes gives every shard's results."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from rich.console import Console

from curation.execution.dispatch import ExecutorChoice, dispatch
from curation.execution.executors import ExecutorError, InProcessExecutor, ProcessPoolExecutor, Shard
from curation.execution.shard_driver import drive


def squares(upto: int) -> Iterator[int]:
    yield from (n * n for n in range(upto))


@pytest.mark.parametrize(("choice", "units", "pinned", "here"), [
    (ExecutorChoice(), 1, False, True),  # one model or one PDF
    (ExecutorChoice(), 3, False, False),
    (ExecutorChoice(workers=1), 3, False, False),  # several models with one worker: shards, in-process
    (ExecutorChoice(), 3, True, True),  # MinerU, the vision model, extract --workers 1
    (ExecutorChoice("ray"), 1, False, False),
    (ExecutorChoice(ray_address="127.0.0.1:9"), 1, False, False),  # refused by make_executor, never silently local
])
def test_runs_here_only_for_one_unit_or_pinned_work_on_the_local_executor(choice, units, pinned, here) -> None:
    assert choice.runs_here(units, pinned=pinned) is here


def _collect(units: int, choice: ExecutorChoice) -> tuple[str, dict[str, list[int]]]:
    def here() -> tuple[str, dict[str, list[int]]]:
        return "here", {}

    def sharded(executor, on_plan, on_progress) -> tuple[str, dict[str, list[int]]]:
        got: dict[str, list[int]] = {}

        def handle(shard: Shard, value: int) -> int:
            got.setdefault(shard.key, []).append(value)
            return 1

        shards = [Shard(f"s{upto}", squares, upto, upto) for upto in range(1, units + 1)]
        report = drive(executor, shards, handle, lambda shard: None, on_progress=on_progress)
        assert report.failed == {}
        return type(executor).__name__, got

    return dispatch(choice, units, here, sharded, label="test", unit="items", show=False, console=Console(quiet=True))


def test_dispatch_runs_one_unit_here_and_several_as_shards_on_the_executor_it_sizes() -> None:
    assert _collect(1, ExecutorChoice()) == ("here", {})
    expected = {"s1": [0], "s2": [0, 1], "s3": [0, 1, 4]}
    assert _collect(3, ExecutorChoice(workers=1)) == (InProcessExecutor.__name__, expected)
    assert _collect(3, ExecutorChoice(workers=2)) == (ProcessPoolExecutor.__name__, expected)


def test_a_cluster_address_without_ray_is_refused_before_any_work() -> None:
    with pytest.raises(ExecutorError, match="--ray-address needs --executor ray"):
        _collect(1, ExecutorChoice(ray_address="127.0.0.1:9"))
