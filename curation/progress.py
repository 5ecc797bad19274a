"""Progress bars for long commands: counts, rate and ETA on a terminal, nothing elsewhere
(pipes, CI logs and tests get only the command's summary line)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

Advance = Callable[[int], None]


def no_progress(_: int = 1) -> None:
    """The progress callback of a step nobody watches."""


class _RateColumn(ProgressColumn):
    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f} {self.unit}/s", style="progress.data.speed")


@contextmanager
def progress_bar(console: Console, description: str, total: int | None, unit: str = "items") -> Iterator[Advance]:
    """Yield `advance(n)`; a rich bar with count, rate and ETA when `console` is a terminal."""
    if not console.is_terminal:
        yield no_progress
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), _RateColumn(unit),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(description, total=total)

        def advance(n: int = 1) -> None:
            bar.advance(task, n)

        yield advance
