"""The expert scoring desk: an item's responses side by side, each by its blind label (A, B, …) in
this expert's order (blinding.py), draft scores kept server-side, and each response's save a
compare-and-swap on the expert's own score revision.

A screen is one item's responses, at most MAX_SIDE of them (an item with more takes several
screens). Task ids stay on the server: the session holding them is server-side state, and every
message names a response by its label.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import Engine

from annotator.review import blinding, drafts, scoring
from annotator.review.scoring import Task
from curation.core.errors import ConflictError, NotFoundError
from curation.core.store import Store, StoredItem

QUEUE = "score"
MAX_SIDE = 6  # responses shown side by side on one screen
CONFLICT = "다른 탭에서 먼저 저장했습니다 · Saved elsewhere first"
ScoreMove = Literal["next", "prev", "unscored"]


def _draft_key(task_id: int) -> str:
    return f"task-{task_id}"


@dataclass(frozen=True)
class Screen:
    item_id: str
    part: int  # which screen of the item (0 unless it has more than MAX_SIDE responses)
    tasks: tuple[Task, ...]
    first_label: int  # the place of tasks[0] among the item's responses

    @property
    def key(self) -> str:
        return f"{self.part}:{self.item_id}"


@dataclass
class Response:
    """One response on screen as the expert is scoring it."""

    task_id: int
    label: str
    text: str
    rev: int = 0  # the expert's saved score revision the values were made on (0 = none)
    values: dict[str, Any] = field(default_factory=dict)
    comment: str = ""
    note: str = ""  # this response's last save result or draft restore
    error: str = ""


@dataclass
class ScoreSession:
    screen: str | None = None  # Screen.key
    responses: list[Response] = field(default_factory=list)


@dataclass
class ScoreView:
    session: ScoreSession
    position: str = ""
    stored: StoredItem | None = None
    message: str = ""
    error: str = ""
    conflict: bool = False


class ScoreDesk:
    def __init__(self, store: Store):
        self.store = store
        self.engine: Engine = store.engine
        self._secret: bytes | None = None

    @property
    def secret(self) -> bytes:
        if self._secret is None:
            self._secret = blinding.workspace_secret(self.engine)
        return self._secret

    def screens(self, expert: str) -> list[Screen]:
        by_item: dict[str, list[Task]] = {}
        for task in scoring.blind_order(scoring.tasks(self.engine), expert, self.secret):
            by_item.setdefault(task.item_id, []).append(task)
        return [Screen(item_id, start // MAX_SIDE, tuple(group[start:start + MAX_SIDE]), start)
                for item_id, group in by_item.items() for start in range(0, len(group), MAX_SIDE)]

    def open(self, expert: str, key: str | None, message: str = "") -> ScoreView:
        screens = self.screens(expert)
        screen = next((s for s in screens if s.key == key), None)
        if screen is None:
            return ScoreView(ScoreSession(), error="채점할 응답이 없습니다 · No such responses to score")
        responses = []
        for place, task in enumerate(screen.tasks, start=screen.first_label):
            score = scoring.get_score(self.engine, task.id, expert)
            response = Response(task.id, blinding.label(place), task.rationale, score.rev if score else 0,
                                dict(score.values) if score else {}, score.comment if score else "")
            draft = drafts.load_draft(self.engine, expert, QUEUE, _draft_key(task.id))
            if draft is not None:
                response.rev = draft.base_rev
                response.values.update(draft.edits.get("values", {}))
                response.comment = draft.edits.get("comment", response.comment)
                response.note = "저장하지 않은 점수를 복원했습니다 · Restored your unsaved scores"
            responses.append(response)
        drafts.set_position(self.engine, expert, QUEUE, screen.key)
        try:
            stored = self.store.get(screen.item_id)
        except NotFoundError:
            stored = None
        position = f"{screens.index(screen) + 1} / {len(screens)}"
        return ScoreView(ScoreSession(screen.key, responses), position, stored, message)

    def resume(self, expert: str) -> ScoreView:
        key = drafts.get_position(self.engine, expert, QUEUE)
        if key and any(screen.key == key for screen in self.screens(expert)):
            return self.open(expert, key)
        return self.navigate(expert, None, "unscored")

    def navigate(self, expert: str, current: str | None, how: ScoreMove) -> ScoreView:
        screens = self.screens(expert)
        keys = [screen.key for screen in screens]
        start = keys.index(current) if current in keys else -1
        if how == "unscored":
            # from the screen shown: while it has a response with no saved score it is the next one
            scored = scoring.scored_tasks(self.engine, expert)
            rotated = screens[max(start, 0):] + screens[: max(start, 0)]
            found = next((s.key for s in rotated if any(t.id not in scored for t in s.tasks)), None)
            if found is not None and found == current:
                return self.open(expert, found, "아직 채점하지 않은 응답이 있습니다 · Responses here are not scored yet")
        elif how == "next":
            found = keys[start + 1] if start + 1 < len(keys) else None
        else:
            found = keys[start - 1] if start > 0 else None
        if found is None:
            note = "채점할 응답이 없습니다 · Nothing left to score" if how == "unscored" else "끝입니다 · No more items that way"
            return self.open(expert, current, note) if current in keys else ScoreView(ScoreSession(), message=note)
        return self.open(expert, found)

    def edit(self, expert: str, session: ScoreSession, slot: int, axis: str, value: Any) -> ScoreSession:
        """Keep one response's edited axis (or comment) in the expert's draft."""
        if not 0 <= slot < len(session.responses):
            return session
        response = session.responses[slot]
        kept = drafts.load_draft(self.engine, expert, QUEUE, _draft_key(response.task_id))
        if kept is not None and kept.base_rev == response.rev:  # other axes' events
            response.values = {**kept.edits.get("values", {}), **response.values}
            response.comment = kept.edits.get("comment", response.comment) if axis != "comment" else response.comment
        if axis == "comment":
            response.comment = value or ""
        else:
            response.values[axis] = value
        edits = {"values": response.values, "comment": response.comment}
        drafts.save_draft(self.engine, expert, QUEUE, drafts.Draft(_draft_key(response.task_id), response.rev, edits))
        return session

    def save(self, expert: str, session: ScoreSession, *, keep_on_conflict: bool = True) -> ScoreView:
        """Save every response on screen the expert gave a score to (each its own compare-and-swap);
        one not touched is left alone. A refused one keeps the expert's values on screen."""
        if session.screen is None:
            return ScoreView(session, error="먼저 문항을 여세요 · Open an item first")
        results = {r.task_id: self._save_one(expert, r, keep_on_conflict)
                   for r in session.responses if r.values or r.rev}
        view = self.open(expert, session.screen)
        mine = {r.task_id: r for r in session.responses}
        for shown in view.session.responses:
            if shown.task_id in results:
                saved, note = results[shown.task_id]
                if saved:
                    shown.note = note
                else:  # keep what the expert entered
                    entered = mine[shown.task_id]
                    shown.values, shown.comment, shown.error = entered.values, entered.comment, note
        if not results:
            view.error = "점수를 고르세요 · Choose scores first"
        elif any(not saved for saved, _ in results.values()):
            view.error = "일부 응답을 저장하지 않았습니다 · Some responses were not saved (see below)"
            view.conflict = any(note.startswith(CONFLICT) for saved, note in results.values() if not saved)
        else:
            view.message = "저장했습니다 · Saved " + ", ".join(
                r.label for r in view.session.responses if r.task_id in results)
        return view

    def _save_one(self, expert: str, response: Response, keep_on_conflict: bool) -> tuple[bool, str]:
        try:
            new_rev = scoring.save_score(self.engine, response.task_id, expert, response.values, response.comment,
                                         response.rev)
        except ConflictError as error:
            if keep_on_conflict:  # the page's values become a draft on the score now stored: saving again replaces it
                edits = {"values": response.values, "comment": response.comment}
                draft = drafts.Draft(_draft_key(response.task_id), error.current_rev, edits)
                drafts.save_draft(self.engine, expert, QUEUE, draft)
            return False, (f"{CONFLICT}: 응답 {response.label} — your revision {error.expected_rev}, "
                           f"now {error.current_rev}; your scores are kept, save again to replace")
        except scoring.ScoringError as error:
            return False, f"저장하지 않았습니다 · Not saved: 응답 {response.label} — {error}"
        drafts.discard_draft(self.engine, expert, QUEUE, _draft_key(response.task_id))
        return True, f"저장했습니다 · Saved (rev {new_rev})"

    def save_by_label(self, expert: str, item_id: str, label: str, values: dict[str, Any], comment: str,
                      expect_rev: int) -> ScoreView:
        """One response's save by item and blind label (the scripts' API); the view holds only it."""
        wanted = label.strip().removeprefix("응답").strip().upper()
        for screen in self.screens(expert):
            if screen.item_id != item_id:
                continue
            for slot, response in enumerate(self.open(expert, screen.key).session.responses):
                if response.label == wanted:
                    response.values, response.comment, response.rev = dict(values), comment, int(expect_rev)
                    saved = self.save(expert, ScoreSession(screen.key, [response]), keep_on_conflict=False)
                    saved.session.responses = [saved.session.responses[slot]]
                    return saved
        return ScoreView(ScoreSession(), error=f"no response {label!r} on item {item_id!r}")
