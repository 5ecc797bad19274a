"""Gradio's per-browser-session state, bounded per user: what a page load leaves in the server's memory.

This is the one module that touches Gradio's internals (everything else uses its public
settings: see `configure_blocks`). `check_gradio` runs when the server is built and refuses
to start, naming what is missing, when the Gradio installed lacks an attribute used here.

Gradio keeps a SessionState per page load (its session hash) for up to 10,000 page loads, one
bound for everyone, and never lets one go while the tab stays open or after it closes (our events
skip the queue, so Gradio never learns a tab closed). Each one also held a copy of the whole page
config, about 1.8 MB on this app. Here:

- a session keeps only its gr.State values and the components a handler re-created (new
  choices, visibility), not a config copy of every component nor every value sent or received
  (those serve only Gradio's deep links, which this app does not offer);
- each session belongs to the user whose request made it (the gate's user, `gate.request_user`);
  a user keeps at most `per_user` sessions, their own least recently used dropped first, and when
  all users together pass `capacity` the least recently used session of the user holding the most
  goes: one account cannot push another's page state out, however many session hashes it sends;
- an event refused for the user's role leaves no state behind (`drop_if_empty`);
- a session idle for `idle_s` (the login session's idle limit) is dropped, and the sessions a
  login made are dropped when that login ends (their edits live in the store's drafts, not here;
  the user's other devices keep theirs).

A dropped session that comes back starts from the page's initial state, as a new tab does.
"""

from __future__ import annotations

import datetime
import time
from collections import OrderedDict
from copy import copy
from typing import Any

from gradio.state_holder import SessionState, StateHolder

from annotator.review.request_context import request_login, request_user
from curation.core.errors import BenchsmithError

MAX_SESSIONS = 500  # page loads kept in all (a lean one holds ~0.1 MB: what its handlers updated)
PER_USER = 20  # page loads kept per user (tabs and reloads of one person's working day)
IDLE_S = 12 * 3600  # a working day with a long lunch
SWEEP_EVERY_S = 60.0
UNKNOWN = ""  # the owner of a session made outside a request the gate let in (local mode)

# the Gradio the `annotator` extra pins (pyproject.toml): 6.24 is the first with mount_gradio_app's
# run_history (checked by hand: the annotator tests pass on 6.24.0 and on 6.31.0)
GRADIO_PIN = "gradio>=6.24,<7"
# what this module uses of Gradio beyond its documented API: checked at start-up
NEEDED = {
    "gradio.state_holder.StateHolder": ("session_data", "time_last_used", "lock", "capacity", "set_blocks", "update"),
    "gradio.state_holder.SessionState": ("blocks_config", "config_values", "state_data", "_state_ttl", "is_closed",
                                         "STATE_TTL_WHEN_CLOSED", "_update_config", "_update_value_in_config"),
    "gradio.Blocks": ("default_config", "state_session_capacity"),
}


def check_gradio(objects: dict[str, Any] | None = None) -> None:
    """Refuse to start (BenchsmithError naming each missing attribute) when the installed Gradio
    lacks what this module relies on. `objects`: name → an instance of each class in NEEDED
    (made here from the installed Gradio when None)."""
    import gradio as gr

    if objects is None:
        with gr.Blocks() as blocks:
            pass
        objects = {"gradio.state_holder.StateHolder": StateHolder(),
                   "gradio.state_holder.SessionState": SessionState(blocks), "gradio.Blocks": blocks}
    missing = [f"{name}.{attribute}" for name, attributes in NEEDED.items()
               for attribute in attributes if not hasattr(objects[name], attribute)]
    if missing:
        raise BenchsmithError(
            f"this Gradio ({getattr(gr, '__version__', '?')}) lacks what the annotator's page sessions use "
            f"({', '.join(missing)}): install the Gradio the `annotator` extra pins ({GRADIO_PIN})")


class LeanSessionState(SessionState):
    def __init__(self, blocks: Any):  # noqa: D107 - SessionState's, without the per-block config copy
        self.blocks_config = copy(blocks.default_config)
        self.config_values: dict[int, Any] = {}  # stays empty: it only serves deep links
        self.state_data: dict[int, Any] = {}
        self._state_ttl: dict[int, Any] = {}
        self.is_closed = False
        self.STATE_TTL_WHEN_CLOSED = 3600
        self.touched = False  # a handler stored something in it

    def __setitem__(self, key: int, value: Any) -> None:
        from gradio.components import State

        self.touched = True
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
    def __init__(self, capacity: int | None = None, idle_s: float | None = None, per_user: int | None = None):
        super().__init__()
        self.capacity = capacity or MAX_SESSIONS
        self.idle_s, self.per_user = idle_s or IDLE_S, per_user or PER_USER
        self.last_used: dict[str, float] = {}
        self.owners: dict[str, str] = {}  # session hash → the user whose request made it
        self.by_user: dict[str, OrderedDict[str, None]] = {}  # user → their sessions, least recently used first
        self.logins: dict[str, str] = {}  # session hash → the login session that made it
        self._swept = time.monotonic()

    def set_blocks(self, blocks: Any) -> None:
        blocks.state_session_capacity = self.capacity  # Gradio's own setting; set_blocks reads it
        super().set_blocks(blocks)

    def __getitem__(self, session_id: str) -> SessionState:
        now = time.monotonic()
        if now - self._swept > SWEEP_EVERY_S:
            self._swept = now
            self.drop([sid for sid, used in list(self.last_used.items()) if now - used > self.idle_s])
        with self.lock:
            if session_id not in self.session_data:
                self.session_data[session_id] = LeanSessionState(self.blocks)
                self._own(session_id, request_user.get() or UNKNOWN)
                self.logins[session_id] = request_login.get()
            self.last_used[session_id] = now
        return super().__getitem__(session_id)

    def update(self, session_id: str) -> None:
        with self.lock:
            if session_id in self.session_data:
                self.session_data.move_to_end(session_id)
                owner = self.owners.get(session_id)
                if owner is not None:
                    self.by_user[owner].move_to_end(session_id)
            while len(self.session_data) > self.capacity:
                largest = max(self.by_user.values(), key=len, default=None)
                self._forget(next(iter(largest)) if largest else next(iter(self.session_data)))

    def _own(self, session_id: str, user: str) -> None:
        """(under the lock) `session_id` is `user`'s; their oldest sessions past `per_user` go."""
        previous = self.owners.get(session_id)
        if previous is not None:
            self._disown(session_id, previous)
        self.owners[session_id] = user
        mine = self.by_user.setdefault(user, OrderedDict())
        mine[session_id] = None
        while len(mine) > self.per_user:
            self._forget(next(iter(mine)))

    def _disown(self, session_id: str, user: str) -> None:
        mine = self.by_user.get(user)
        if mine is not None:
            mine.pop(session_id, None)
            if not mine:
                del self.by_user[user]

    def note_owner(self, session_id: str, user: str) -> None:
        """A handler learnt whose the session is (one made outside the gate's request had no owner)."""
        if self.owners.get(session_id) == UNKNOWN and user != UNKNOWN:
            with self.lock:
                if session_id in self.session_data:
                    self._own(session_id, user)

    def sessions_of(self, user: str) -> list[str]:
        return list(self.by_user.get(user, ()))

    def drop_if_empty(self, session_id: str | None) -> None:
        """A refused event: the session it made (holding nothing yet) goes."""
        state = self.session_data.get(session_id or "")
        if isinstance(state, LeanSessionState) and not state.touched:
            self.drop([session_id or ""])

    def drop_login(self, user: str, login: str) -> None:
        """At logout: the page sessions that login made go (a later event from that tab starts afresh)."""
        self.drop([sid for sid in self.sessions_of(user) if self.logins.get(sid, login) == login])

    def drop(self, session_ids: list[str]) -> None:
        with self.lock:
            for sid in session_ids:
                self._forget(sid)

    def _forget(self, session_id: str) -> None:
        self.session_data.pop(session_id, None)
        self.time_last_used.pop(session_id, None)
        self.last_used.pop(session_id, None)
        self.logins.pop(session_id, None)
        owner = self.owners.pop(session_id, None)
        if owner is not None:
            self._disown(session_id, owner)

    def __len__(self) -> int:
        return len(self.session_data)
