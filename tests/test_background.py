"""Work in a forked child: it sees this process's memory, its files land, its failure comes back."""

from __future__ import annotations

import os
import time

import pytest

from curation.background import Background
from curation.errors import BenchsmithError


def test_the_child_reads_this_process_memory_and_writes_its_own_file(tmp_path):
    rows = [{"id": f"q-{i}", "n": i} for i in range(1000)]  # nothing pickled: the child reads these
    target = tmp_path / "sum.txt"
    job = Background(lambda: target.write_text(str(sum(row["n"] for row in rows)) + f" {os.getpid()}"))
    job.wait()
    total, pid = target.read_text().split()
    assert int(total) == sum(range(1000)) and int(pid) != os.getpid()


def test_a_failing_child_raises_its_traceback_when_waited_for():
    def fail() -> None:
        raise ValueError("the harness could not be written")

    job = Background(fail)
    with pytest.raises(BenchsmithError, match="the harness could not be written"):
        job.wait()


def test_cancel_stops_a_child_that_is_still_working(tmp_path):
    marker = tmp_path / "finished"
    job = Background(lambda: (time.sleep(30), marker.write_text("x")))
    started = time.monotonic()
    job.cancel()
    job.wait()  # nothing left to wait for
    assert time.monotonic() - started < 10 and not marker.exists()
