"""The queues' progress bars, kept cheap on 50,000 items.

A queue's total (how many items belong to it) is, for the Korea and rationale queues, a
scan of every item's JSON: about a second on 50,000 items, and it changes only with imports,
bulk actions and assignment. It is kept for TOTAL_TTL_S, then recounted in a background
thread while the last figure stays on screen. The counts per user (decided, assigned) come
from indexed tables: recomputed at most every USER_TTL_S, and at once after a decision.
"""

from __future__ import annotations

import threading
import time

from sqlalchemy import Engine

from annotator.review import queues
from annotator.review.queues import Filters
from annotator.screens import views

TOTAL_TTL_S = 30.0
USER_TTL_S = 3.0


class ProgressBars:
    def __init__(self, engine: Engine):
        self.engine = engine
        self._totals: dict[str, tuple[float, int]] = {}
        self._recounting: set[str] = set()
        self._html: dict[tuple[str, str], tuple[float, str]] = {}
        self._lock = threading.Lock()

    def html(self, queue: str, user: str | None) -> str:
        if user is None:
            return ""
        now = time.monotonic()
        cached = self._html.get((queue, user))
        if cached is None or now - cached[0] > USER_TTL_S:
            total = self._total(queue) if queue in queues.ITEM_QUEUES else None
            cached = (now, views.progress_html(queues.queue_progress(self.engine, queue, user, total)))
            self._html[(queue, user)] = cached
        return cached[1]

    def decided(self, queue: str) -> None:
        """After a decision in `queue`: the users' counts change, the queue's size does not."""
        with self._lock:
            for key in [key for key in self._html if key[0] == queue]:
                self._html.pop(key, None)

    def changed(self, queue: str) -> None:
        """After bulk actions or assignment: count everything again."""
        self.decided(queue)
        with self._lock:
            self._totals.pop(queue, None)

    def _total(self, queue: str) -> int:
        known = self._totals.get(queue)
        if known is None:
            return self._count(queue)
        if time.monotonic() - known[0] > TOTAL_TTL_S:
            with self._lock:
                start = queue not in self._recounting
                self._recounting.add(queue)
            if start:
                threading.Thread(target=self._recount, args=(queue,), name=f"count-{queue}", daemon=True).start()
        return known[1]

    def _count(self, queue: str) -> int:
        total = queues.count(self.engine, queue, Filters())
        self._totals[queue] = (time.monotonic(), total)
        return total

    def _recount(self, queue: str) -> None:
        try:
            self._count(queue)
        finally:
            with self._lock:
                self._recounting.discard(queue)
