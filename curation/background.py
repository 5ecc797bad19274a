"""Work done in a forked child while this process goes on: the second core for a pool command.

The child sees this process's memory as it was at the fork (copy-on-write: nothing is pickled,
however many items and rows it reads), runs one function and exits without running this
process's clean-up (`os._exit`: it must not close the parent's database connections or delete
its temporary files). It must only write files of its own; a failure comes back as its
traceback when the parent waits. Where there is no fork (Windows), the work runs inline.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Callable

from curation.errors import BenchsmithError


class Background:
    def __init__(self, work: Callable[[], object]):
        self._pid: int | None = None
        self._read_fd: int | None = None
        if not hasattr(os, "fork"):
            work()
            return
        sys.stdout.flush()
        sys.stderr.flush()
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(read_fd)
            code = 0
            try:
                work()
            except BaseException:  # noqa: BLE001 - every failure goes back to the parent
                os.write(write_fd, traceback.format_exc().encode("utf-8", "replace"))
                code = 1
            finally:
                os._exit(code)
        os.close(write_fd)
        self._pid, self._read_fd = pid, read_fd

    def wait(self) -> None:
        """Wait for the child; raise with its traceback if it failed."""
        if self._pid is None or self._read_fd is None:
            return
        with os.fdopen(self._read_fd, "rb") as pipe:
            message = pipe.read().decode("utf-8", "replace")
        _, status = os.waitpid(self._pid, 0)
        self._pid = self._read_fd = None
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise BenchsmithError(f"background work failed (exit {code}):\n{message.strip()}")

    def cancel(self) -> None:
        """Stop the child (the parent failed or was interrupted) and reap it."""
        if self._pid is None:
            return
        try:
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
        except ProcessLookupError:
            pass
        if self._read_fd is not None:
            os.close(self._read_fd)
        self._pid = self._read_fd = None
