"""The expert scoring desk: blind tasks in a per-expert order, draft scores kept server-side,
saves compare-and-swap on the expert's own score revision."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import Engine

from annotator import drafts, scoring
from annotator.scoring import Task
from curation.errors import ConflictError, NotFoundError
from curation.store import Store, StoredItem

QUEUE = "score"
ScoreMove = Literal["next", "prev", "unscored"]


def _draft_key(task_id: int) -> str:
    return f"task-{task_id}"


@dataclass
class ScoreSession:
    task_id: int | None = None
    rev: int = 0
    values: dict[str, Any] = field(default_factory=dict)
    comment: str = ""


@dataclass
class ScoreView:
    session: ScoreSession
    task: Task | None = None
    label: str = ""
    position: str = ""
    stored: StoredItem | None = None
    message: str = ""
    error: str = ""
    conflict: bool = False


class ScoreDesk:
    def __init__(self, store: Store):
        self.store = store
        self.engine: Engine = store.engine

    def _ordered(self, expert: str) -> list[Task]:
        return scoring.blind_order(scoring.tasks(self.engine), expert)

    def open(self, expert: str, task_id: int, message: str = "") -> ScoreView:
        ordered = self._ordered(expert)
        task = next((t for t in ordered if t.id == task_id), None)
        if task is None:
            return ScoreView(ScoreSession(), error=f"no scoring task {task_id}")
        score = scoring.get_score(self.engine, task_id, expert)
        session = ScoreSession(task_id, score.rev if score else 0, dict(score.values) if score else {},
                               score.comment if score else "")
        draft = drafts.load_draft(self.engine, expert, QUEUE, _draft_key(task_id))
        if draft is not None:
            session.rev = draft.base_rev
            session.values.update(draft.edits.get("values", {}))
            session.comment = draft.edits.get("comment", session.comment)
            message = f"{message} 저장하지 않은 점수를 복원했습니다 · Restored your unsaved scores".strip()
        drafts.set_position(self.engine, expert, QUEUE, _draft_key(task_id))
        try:
            stored = self.store.get(task.item_id)
        except NotFoundError:
            stored = None
        position = f"{ordered.index(task) + 1} / {len(ordered)}"
        return ScoreView(session, task, scoring.blind_label(ordered, task), position, stored, message)

    def resume(self, expert: str) -> ScoreView:
        key = drafts.get_position(self.engine, expert, QUEUE)
        if key and key.startswith("task-") and key[5:].isdigit():
            view = self.open(expert, int(key[5:]))
            if view.task is not None:
                return view
        return self.navigate(expert, None, "unscored")

    def navigate(self, expert: str, current: int | None, how: ScoreMove) -> ScoreView:
        ordered = self._ordered(expert)
        ids = [t.id for t in ordered]
        start = ids.index(current) if current in ids else -1
        if how == "unscored":
            # from the task on screen: while it has no saved score it is the next one to score
            rotated = ids[max(start, 0):] + ids[: max(start, 0)]
            found = next((t for t in rotated if scoring.get_score(self.engine, t, expert) is None), None)
            if found is not None and found == current:
                return self.open(expert, found, "이 응답은 아직 채점하지 않았습니다 · This response is not scored yet")
        elif how == "next":
            found = ids[start + 1] if start + 1 < len(ids) else None
        else:
            found = ids[start - 1] if start > 0 else None
        if found is None:
            note = "채점할 응답이 없습니다 · Nothing left to score" if how == "unscored" else "끝입니다 · No more tasks that way"
            return self.open(expert, current, note) if current in ids else ScoreView(ScoreSession(), message=note)
        return self.open(expert, found)

    def edit(self, expert: str, session: ScoreSession, axis: str, value: Any) -> ScoreSession:
        if session.task_id is None:
            return session
        kept = drafts.load_draft(self.engine, expert, QUEUE, _draft_key(session.task_id))
        if kept is not None and kept.base_rev == session.rev:  # other axes' events
            session.values = {**kept.edits.get("values", {}), **session.values}
            session.comment = kept.edits.get("comment", session.comment) if axis != "comment" else session.comment
        if axis == "comment":
            session.comment = value or ""
        else:
            session.values[axis] = value
        edits = {"values": session.values, "comment": session.comment}
        drafts.save_draft(self.engine, expert, QUEUE, drafts.Draft(_draft_key(session.task_id), session.rev, edits))
        return session

    def save(self, expert: str, session: ScoreSession) -> ScoreView:
        if session.task_id is None:
            return ScoreView(session, error="먼저 과제를 여세요 · Open a task first")
        try:
            new_rev = scoring.save_score(self.engine, session.task_id, expert, session.values, session.comment,
                                         session.rev)
        except ConflictError as error:
            view = self.open(expert, session.task_id)
            view.session = session
            view.error = f"다른 탭에서 먼저 저장했습니다 · Saved elsewhere first: {error}"
            view.conflict = True
            return view
        except scoring.ScoringError as error:
            view = self.open(expert, session.task_id)
            view.session = session
            view.error = f"저장하지 않았습니다 · Not saved: {error}"
            return view
        drafts.discard_draft(self.engine, expert, QUEUE, _draft_key(session.task_id))
        return self.open(expert, session.task_id, f"저장했습니다 · Saved (rev {new_rev})")

