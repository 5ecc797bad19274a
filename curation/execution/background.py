"""Work done in a thread of this process while the caller goes on (the release build writes the
harness folder while it writes the shards and the card).

A thread, not a forked child: a fork inside a library call copies the caller's database
connections, locks and threads into a child that may deadlock on them (Python 3.12 warns of it),
and a caller that embeds benchsmith cannot know it happens. The work reads what the caller holds
(nothing is pickled) and must only write files of its own; its failure is raised, with the
original exception as its cause, when the caller waits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from curation.core.errors import BenchsmithError


class Background:
    def __init__(self, work: Callable[[], object], name: str = "benchsmith-background"):
        self._error: BaseException | None = None

        def run() -> None:
            try:
                work()
            except BaseException as error:  # noqa: BLE001 - every failure goes back to the caller
                self._error = error

        self._thread = threading.Thread(target=run, name=name, daemon=True)
        self._thread.start()

    def wait(self) -> None:
        """Wait for the work to end; raise if it failed."""
        self._thread.join()
        error, self._error = self._error, None
        if error is not None:
            raise BenchsmithError(f"background work failed: {type(error).__name__}: {error}") from error

    def cancel(self) -> None:
        """The caller failed or was interrupted: wait for the work to end (a thread cannot be
        stopped from outside) so that nothing writes after the caller removes its files, and drop
        its outcome."""
        self._thread.join()
        self._error = None
