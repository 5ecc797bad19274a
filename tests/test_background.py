"""Work in a thread beside the caller: it reads the caller's memory, its files land, its failure
comes back, and no process is forked."""

from __future__ import annotations

import os
import threading

import pytest

from curation.core.errors import BenchsmithError
from curation.execution.background import Background

FORKS: list[int] = []
os.register_at_fork(before=lambda: FORKS.append(os.getpid()))


def test_the_work_reads_the_callers_memory_and_writes_its_own_file_without_a_fork(tmp_path):
    rows = [{"id": f"q-{i}", "n": i} for i in range(1000)]
    target = tmp_path / "sum.txt"
    forks_before = len(FORKS)
    job = Background(lambda: target.write_text(str(sum(row["n"] for row in rows)) + f" {os.getpid()}"))
    job.wait()
    total, pid = target.read_text().split()
    assert int(total) == sum(range(1000)) and int(pid) == os.getpid()
    assert len(FORKS) == forks_before


def test_failing_work_raises_with_its_cause_when_waited_for():
    def fail() -> None:
        raise ValueError("the harness could not be written")

    job = Background(fail)
    with pytest.raises(BenchsmithError, match="ValueError: the harness could not be written") as raised:
        job.wait()
    assert isinstance(raised.value.__cause__, ValueError)


def test_cancel_returns_only_once_the_work_has_ended_and_drops_its_failure(tmp_path):
    release = threading.Event()
    marker = tmp_path / "finished"

    def work() -> None:
        release.wait(30)
        marker.write_text("x")
        raise ValueError("ignored after cancel")

    job = Background(work)
    threading.Timer(0.2, release.set).start()
    job.cancel()
    assert marker.exists()  # nothing writes after cancel returns (the caller then removes its folder)
    job.wait()  # its failure was dropped
