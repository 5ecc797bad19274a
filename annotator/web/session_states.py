"""Gradio's per-browser-session state, bounded: what a page load leaves in the server's memory.

Gradio keeps a SessionState per page load (its session hash) for up to 10,000 page loads and
never lets one go while the tab stays open or after it closes (our events skip the queue, so
Gradio never learns a tab closed). Each one also held a copy of the whole page config, about
1.8 MB on this app: server memory grew with every page load and was never freed. Here:

- a session keeps only its gr.State values and the components a handler re-created (new
  choices, visibility), not a config copy of every component nor every value sent or
  received (those serve only Gradio's deep links, which this app does not offer; kept, they
  held the last page image, item and table of every session: +220 MB in two minutes of a
  20-user team);
- at most `capacity` sessions are kept, least recently used dropped first; a session idle
  for `idle_s` (the login session's idle limit) is dropped, and a user's sessions are dropped
  when they log out (their edits live in the store's drafts, not here).

A dropped session that comes back starts from the page's initial state, as a new tab does.
"""

from __future__ import annotations

import datetime
import time
from copy import copy
from typing import Any

from gradio.state_holder import SessionState, StateHolder

MAX_SESSIONS = 500  # page loads kept (a lean one holds ~0.1 MB: what its handlers updated)
IDLE_S = 12 * 3600  # a working day with a long lunch
SWEEP_EVERY_S = 60.0


class LeanSessionState(SessionState):
    def __init__(self, blocks: Any):  # noqa: D107 - SessionState's, without the per-block config copy
        self.blocks_config = copy(blocks.default_config)
        self.config_values: dict[int, Any] = {}  # stays empty: it only serves deep links
        self.state_data: dict[int, Any] = {}
        self._state_ttl: dict[int, Any] = {}
        self.is_closed = False
        self.STATE_TTL_WHEN_CLOSED = 3600

    def __setitem__(self, key: int, value: Any) -> None:
        from gradio.components import State

        block = self.blocks_config.blocks.get(key)
        if isinstance(block, State):
            self._state_ttl[key] = (block.time_to_live, datetime.datetime.now())
            self.state_data[key] = value
        else:
            self.blocks_config.blocks[key] = value

    def _update_config(self, key: int) -> None:
        pass

    def _update_value_in_config(self, key: int, value: Any) -> None:
        pass


class BoundedStateHolder(StateHolder):
    def __init__(self, capacity: int | None = None, idle_s: float | None = None):
        super().__init__()
        self.bound, self.idle_s = capacity or MAX_SESSIONS, idle_s or IDLE_S
        self.last_used: dict[str, float] = {}
        self.owners: dict[str, str] = {}  # session hash → the user its handlers ran for
        self._swept = time.monotonic()

    def set_blocks(self, blocks: Any) -> None:
        super().set_blocks(blocks)
        self.capacity = self.bound  # set_blocks takes the Blocks' 10,000

    def __getitem__(self, session_id: str) -> SessionState:
        now = time.monotonic()
        if now - self._swept > SWEEP_EVERY_S:
            self._swept = now
            self.drop([sid for sid, used in list(self.last_used.items()) if now - used > self.idle_s])
        with self.lock:
            if session_id not in self.session_data:
                self.session_data[session_id] = LeanSessionState(self.blocks)
            self.last_used[session_id] = now
        return super().__getitem__(session_id)

    def update(self, session_id: str) -> None:
        with self.lock:
            if session_id in self.session_data:
                self.session_data.move_to_end(session_id)
            while len(self.session_data) > self.capacity:
                self._forget(next(iter(self.session_data)))

    def note_owner(self, session_id: str, user: str) -> None:
        if self.owners.get(session_id) != user:
            with self.lock:
                self.owners[session_id] = user

    def drop_user(self, user: str) -> None:
        """At logout: the user's page sessions go (a later event from that tab starts afresh)."""
        self.drop([sid for sid, owner in list(self.owners.items()) if owner == user])

    def drop(self, session_ids: list[str]) -> None:
        with self.lock:
            for sid in session_ids:
                self._forget(sid)

    def _forget(self, session_id: str) -> None:
        self.session_data.pop(session_id, None)
        self.time_last_used.pop(session_id, None)
        self.last_used.pop(session_id, None)
        self.owners.pop(session_id, None)

    def __len__(self) -> int:
        return len(self.session_data)
