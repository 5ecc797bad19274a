"""What a reviewer can do on an item, independent of the UI: open, navigate, edit (kept as
a server-side draft), save or decide (compare-and-swap on the revision they saw), resolve a
conflict by reloading or re-applying, re-crop an image from the PDF.

The Gradio app (app.py), the API endpoints and the benchmark all call this layer.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from annotator.review import adjudication, blinding, claims, decisions, drafts, key_form, queues
from annotator.review.auth import User
from annotator.review.limits import Limits, check_edits, check_text
from annotator.review.queue_specs import Decision
from annotator.review.queues import Filters
from annotator.review.render import PdfRenderer
from annotator.review.request_context import request_login
from curation.core.diff import field_changes
from curation.core.errors import BenchsmithError, ConflictError, NotFoundError, WorkspaceError
from curation.core.item import ItemValidationError, choice_answer
from curation.core.store import Revision, Store, StoredItem, get_path, set_path
from scoring.keys import parse_key

STAGE = "annotate"

Move = Literal["next", "prev", "unreviewed", "first"]


class EditError(BenchsmithError):
    """An edit the item cannot take (bad answer, field not editable in this queue…)."""


@dataclass
class Session:
    """Per browser session (held in gr.State, restored from the store after a refresh)."""

    queue: str
    item_id: str | None = None
    rev: int | None = None
    edits: dict[str, Any] = field(default_factory=dict)


class _Blinded:
    """A form value that is the stored one with the hidden names scrubbed (blinding.py) is no edit:
    an expert saving what they were shown must not write '‹hidden›' over a model's name."""

    def __init__(self, engine: Any, item_id: str, history: Any):
        self.engine, self.item_id, self.history = engine, item_id, history
        self._names: set[str] | None = None

    def same(self, path: str, value: Any, stored: Any) -> bool:
        if self._names is None:  # the history is read only for an item with blind responses
            texts, _ = blinding.blind_responses(self.engine, self.item_id)
            self._names = blinding.hidden_authors(self.engine, self.item_id, [
                revision for revision, _ in self.history(self.item_id)]) if texts else set()
        names = self._names
        return bool(names) and _same(path, value, blinding.scrub(stored, names))


@dataclass
class Conflict:
    message: str
    since: list[str]
    current_rev: int
    fields: list[tuple[str, Any, Any, Any]]  # path, at your revision, now, yours


@dataclass
class View:
    session: Session
    stored: StoredItem | None = None
    shown: dict[str, Any] | None = None  # the stored record with the user's edits applied
    message: str = ""
    error: str = ""
    conflict: Conflict | None = None
    restored_draft: bool = False
    reserved_by: claims.Reservation | None = None  # someone else is working on the item: saving waits


def parse_answer(raw: Any) -> int | list[int] | None:
    if raw is None or isinstance(raw, int | list):
        return raw
    text = str(raw).strip()
    if not text:
        return None
    parts = [part.strip() for part in re.split(r"[,\s]+", text) if part.strip()]
    if not all(part.isdigit() for part in parts):
        raise EditError(f"정답 answer {text!r}: give option numbers such as 3 or 1,3")
    numbers = [int(part) for part in parts]
    return numbers[0] if len(numbers) == 1 else numbers


def key_options(answer: Any) -> list[int] | None:
    """A stored answer's option numbers: a choice key's (or a schema-1 answer's); None for no key
    or a key of another format."""
    if isinstance(answer, BaseModel):
        answer = answer.model_dump(mode="json")
    if isinstance(answer, dict):
        return [int(n) for n in answer.get("options") or []] if answer.get("format") == "choice" else None
    if isinstance(answer, bool) or answer is None:
        return None
    return [answer] if isinstance(answer, int) else list(answer) if isinstance(answer, list) else None


def answer_text(answer: Any) -> str:
    """What the answer box shows: a choice key's option numbers ("3", "1,3"); a key of another
    format as its text (edited by its own editor, not as option numbers)."""
    if answer is None:
        return ""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, BaseModel):
        answer = answer.model_dump(mode="json")
    numbers = key_options(answer)
    if numbers is not None:
        return ",".join(str(n) for n in numbers)
    try:
        return parse_key(answer).text()
    except ValueError:
        return str(answer)


def to_change(path: str, value: Any, record: dict[str, Any] | None = None) -> Any:
    """A UI value as the item field wants it: the key editor's form becomes the key it makes
    (key_form.py); option numbers typed as text become a choice key (requiring all of them as the
    item's key does; `record` is the item it is for); 배점 as typed becomes a number. Raises
    EditError for a value the field cannot take."""
    if path == "points":
        try:
            return key_form.points_of(value)
        except key_form.KeyFormError as error:
            raise EditError(str(error)) from None
    if path == "answer":
        if key_form.is_form(value):
            try:
                return key_form.key_of(value, (record or {}).get("answer"))
            except key_form.KeyFormError as error:
                raise EditError(str(error)) from None
        if isinstance(value, dict):  # a key already
            return value
        current = (record or {}).get("answer")
        if current is not None and key_options(current) is None:
            raise EditError(f"정답 answer: this item's key is a {current.get('format')} key, not option numbers "
                            "· 번호로 고칠 수 없는 정답입니다")
        numbers = parse_answer(value)
        return None if numbers is None else choice_answer(numbers, record or {})
    if path in ("explicit_variant", "rationale.notes") and isinstance(value, str) and not value.strip():
        return None
    return value


def apply_edits(record: dict[str, Any], edits: dict[str, Any]) -> dict[str, Any]:
    """The record as the user sees it: their edits on top (a value the item cannot take,
    such as an answer '가', is shown as typed; saving reports the problem)."""
    shown = copy.deepcopy(record)
    for path, value in edits.items():
        try:
            value = to_change(path, value, record)
        except EditError:
            pass
        try:
            set_path(shown, path, value)
        except WorkspaceError:
            continue
    return shown


class Reviewer:
    """One per app; holds no user state (that lives in Session and in the drafts table)."""

    def __init__(self, store: Store, renderer: PdfRenderer, reservation_s: float = claims.RESERVATION_S,
                 reservations_per_user: int = claims.PER_USER, limits: Limits | None = None):
        self.store = store
        self.engine = store.engine
        self.renderer = renderer
        self.reservation_s = reservation_s  # how long an edit keeps the item reserved without another (claims.py)
        self.reservations_per_user = reservations_per_user
        self.limits = limits or Limits()  # size limits on edits (limits.py)

    # -- opening and moving -------------------------------------------------------------
    def open(self, user: str, queue: str, item_id: str, message: str = "") -> View:
        stored = self.store.get(item_id)
        session = Session(queue, item_id, stored.rev)
        draft = drafts.load_draft(self.engine, user, queue, item_id)
        restored = False
        if draft is not None:
            session.rev, session.edits, restored = draft.base_rev, draft.edits, True
            note = f"저장하지 않은 수정을 복원했습니다 · Restored your unsaved edits (made on rev {draft.base_rev})"
            if draft.base_rev != stored.rev:
                note += f"; the item is now at rev {stored.rev}: saving will show what changed"
            message = f"{message} {note}".strip()
        drafts.set_position(self.engine, user, queue, item_id)
        other = claims.claim(self.engine, user, queue, item_id)  # opening reserves nothing: only edits do
        return View(session, stored, apply_edits(stored.item.to_record(), session.edits), message,
                    restored_draft=restored, reserved_by=other)

    def resume(self, user: str, queue: str, order: str = "id") -> View:
        """After a login or a page refresh: the item the user had open, with their draft; else the
        first one they have not reviewed in the queue's `order`."""
        item_id = drafts.get_position(self.engine, user, queue)
        if item_id is not None:
            try:
                return self.open(user, queue, item_id)
            except NotFoundError:
                pass
        return self.navigate(user, queue, Filters(order=order), None, "unreviewed")

    def navigate(self, user: str, queue: str, filters: Filters, current: str | None,
                 how: Move) -> View:
        walked = queues.walked(self.engine, filters)
        if walked != filters and how == "first":
            return self.open(user, queue, filters.search.strip())  # an id in the search box opens that item
        filters = walked
        if current is not None:  # leaving the item: what the user was editing there is free for others
            claims.release(self.engine, user, queue, current)
        if how == "unreviewed":
            found = queues.next_unreviewed(self.engine, queue, filters, user, current)
        else:
            found = queues.neighbour(self.engine, queue, filters, None if how == "first" else current,
                                     "prev" if how == "prev" else "next", user)
        if found is None:
            empty = {"unreviewed": "검토할 문항이 없습니다 · Nothing left to review for you here",
                     "next": "마지막 문항입니다 · This is the last item", "prev": "첫 문항입니다 · This is the first item",
                     "first": "조건에 맞는 문항이 없습니다 · No item matches the filters"}[how]
            if current is not None and queues.item_exists(self.engine, current):
                # nothing found keeps the item on screen (and any edits in it)
                return self.open(user, queue, current, empty)
            return View(Session(queue), message=empty)
        active = filters.describe()
        return self.open(user, queue, found, "" if active == "(all)" else f"필터 · Filtered by {active}")

    # -- editing ------------------------------------------------------------------------
    # The methods that write take the user with their role: the queue's spec (queue_specs.py) says
    # which fields and decisions that role has, and a request for anything else raises NotAllowed.
    def edit(self, user: User, session: Session, path: str, value: Any) -> Session:
        """Record one field edit in the session and the user's server-side draft."""
        return self.sync(user, session, {path: value})

    def sync(self, user: User, session: Session, values: dict[str, Any], login: str | None = None,
             reserve: bool = True) -> Session:
        """Take the form's values: a value is an edit when it differs both from the revision the
        user started from and from the current one. Kept in the user's draft; an edit reserves the
        item for the user's `login` session (the request's when None: claims.py) unless not to
        `reserve` (the page going away: its last edits kept, the item left). Raises TooLarge (nothing kept) past the limits."""
        if session.item_id is None or session.rev is None:
            raise EditError("먼저 문항을 여세요 · Open an item first")
        check_edits(self.limits, values)
        spec = queues.spec(session.queue)
        current = self.store.get(session.item_id)
        now = current.item.to_record()
        base = now if current.rev == session.rev else self.snapshot(session.item_id, session.rev)
        kept = drafts.load_draft(self.engine, user.name, session.queue, session.item_id)
        if kept is not None and kept.base_rev == session.rev:  # edits from other fields' events
            session.edits = {**kept.edits, **session.edits}
        blinded = _Blinded(self.engine, session.item_id, self.history)
        for path, value in values.items():
            # the form sends every field it shows: one the role may not edit is refused only if changed
            spec.check_field(path)
            if (_same(path, value, get_path(now, path)) or _same(path, value, get_path(base, path))
                    or blinded.same(path, value, get_path(now, path))):
                session.edits.pop(path, None)
            else:
                spec.check_edit(user.role, path)
                session.edits[path] = value
        check_edits(self.limits, session.edits)
        drafts.save_draft(self.engine, user.name, session.queue,
                          drafts.Draft(session.item_id, session.rev, session.edits))
        if reserve and session.edits:  # work in progress: reserved (renewed) while the user edits
            claims.reserve(self.engine, user.name, session.queue, session.item_id, self.reservation_s,
                           session=request_login.get() if login is None else login,
                           per_user=self.reservations_per_user)
        return session

    def skip(self, user: str, session: Session, filters: Filters) -> View:
        """Leave the item for someone else (its reservation released, the skip remembered) and open the
        user's next unreviewed item. Unsaved edits stay in the user's draft."""
        if session.item_id is not None:
            claims.skip(self.engine, user, session.queue, session.item_id)
        return self.navigate(user, session.queue, filters, session.item_id, "unreviewed")

    def recrop(self, user: User, session: Session, target: str, bbox: list[float]) -> View:
        """Re-render a crop (`images.N`, `options.N.image`) or move the item box (`source.bbox`)."""
        if session.item_id is None:
            raise EditError("open an item first")
        stored = self.store.get(session.item_id)
        shown = apply_edits(stored.item.to_record(), session.edits)
        source = shown["source"]
        if target == "source.bbox":
            return self._edited(user, session, target, [float(v) for v in bbox], "상자를 옮겼습니다 · Box moved")
        image = get_path(shown, target)
        if not isinstance(image, dict):
            raise EditError(f"{target}: there is no image there")
        where = image.get("provenance") or {}
        pdf_sha = where.get("pdf_sha256") or source.get("pdf_sha256")
        page = where.get("page") or source.get("page")
        if not pdf_sha or not page:
            raise EditError(f"{target}: no source PDF page is known for this image")
        ref = self.renderer.crop(pdf_sha, int(page), [float(v) for v in bbox], image.get("kind", "raster"))
        new_image = {**image, **ref.model_dump(mode="json", include={"blob", "provenance"})}
        return self._edited(user, session, target, new_image, "새로 잘랐습니다 · New crop rendered from the PDF")

    def _edited(self, user: User, session: Session, path: str, value: Any, message: str) -> View:
        self.edit(user, session, path, value)
        return self.view(session, message)

    def view(self, session: Session, message: str = "", error: str = "") -> View:
        if session.item_id is None:
            return View(session, message=message, error=error)
        stored = self.store.get(session.item_id)
        return View(session, stored, apply_edits(stored.item.to_record(), session.edits), message, error)

    # -- saving -------------------------------------------------------------------------
    def save(self, user: User, session: Session, decision: str | None = None, reason: str = "") -> View:
        """Save the session's edits (and a decision) as one revision, compare-and-swap on session.rev.
        Raises NotAllowed, writing nothing, when the user's role may not edit a field or take the decision."""
        if session.item_id is None or session.rev is None:
            return View(session, error="먼저 문항을 여세요 · Open an item first")
        reason = (reason or "").strip()
        check_edits(self.limits, session.edits)
        check_text(self.limits, "the reason", reason)
        spec = queues.spec(session.queue)
        for path in session.edits:
            spec.check_edit(user.role, path)
        chosen = spec.check_decision(user.role, decision) if decision is not None else None
        override = claims.check(self.engine, user, session.queue, session.item_id)
        overlapped = adjudication.keeps_apart(self.engine, spec, session.item_id, user.name)
        try:
            record = self.store.get(session.item_id).item.to_record() if "answer" in session.edits else None
            changes = {path: to_change(path, value, record) for path, value in session.edits.items()}
            if overlapped:
                return self._record_own_decision(user, session, chosen, reason, changes)
            if chosen is not None:
                new_rev = decisions.decide(self.store, spec, chosen, session.item_id, session.rev, user.name,
                                           reason=reason, edits=changes, stage=STAGE, note=override)
            elif not changes:
                return self.view(session, "바뀐 것이 없습니다 · Nothing to save")
            else:
                new_rev = self.store.update_fields(session.item_id, changes, expect_rev=session.rev, author=user.name,
                                                   stage=STAGE, reason=claims.with_note(reason, override) or None)
        except ConflictError as error:
            return self._conflict_view(session, error)
        except (ItemValidationError, EditError, WorkspaceError, decisions.DecisionError) as error:
            return self.view(session, error=f"저장하지 않았습니다 · Not saved: {error}")
        drafts.discard_draft(self.engine, user.name, session.queue, session.item_id)
        claims.release(self.engine, user.name, session.queue, session.item_id)
        saved = Session(session.queue, session.item_id, new_rev)
        label = f"{decision} · " if decision else ""
        return self.view(saved, f"{label}저장했습니다 · Saved as rev {new_rev}")

    def _record_own_decision(self, user: User, session: Session, chosen: Decision | None, reason: str,
                             changes: dict[str, Any]) -> View:
        """An overlapped item (assigned to this reviewer and others): the decision and edits are kept as
        this reviewer's own until all have decided (adjudication.py); the item changes only then."""
        assert session.item_id is not None and session.rev is not None
        if chosen is None:
            return self.view(session, error="여러 검토자에게 배정된 문항입니다: 결정과 함께 저장하세요 · This item has several "
                                            "reviewers: your edits are kept with your decision (accept, needs fix…)")
        recorded = adjudication.record(self.store, queues.spec(session.queue), chosen, session.item_id, session.rev,
                                       user.name, reason=reason, edits=changes)
        drafts.discard_draft(self.engine, user.name, session.queue, session.item_id)
        shown = Session(session.queue, session.item_id, recorded.applied_rev or self.store.get(session.item_id).rev)
        return self.view(shown, f"{chosen.name} · {recorded.message}")

    def revert_changes(self, user: User, session: Session, rev: int) -> list[tuple[str, Any, Any]]:
        """What bringing back revision `rev` changes: (field, now, then) for each field the user's role
        may edit in the session's queue whose value at `rev` differs from the revision the user sees.
        Every other field keeps its current value. Raises EditError for a revision that is not earlier."""
        if session.item_id is None or session.rev is None:
            raise EditError("먼저 문항을 여세요 · Open an item first")
        spec = queues.spec(session.queue)
        spec.check_role(user.role)
        then = self.snapshot(session.item_id, rev)
        if not then or rev >= session.rev:
            raise EditError(f"rev {rev}: choose an earlier revision of this item (1..{session.rev - 1})")
        now = self.snapshot(session.item_id, session.rev)
        allowed = spec.edits_for(user.role)
        paths = dict.fromkeys(field for field in (_editable_field(path, allowed) for path, _, _ in
                                                  field_changes(now, then)) if field is not None)
        return [(path, get_path(now, path), get_path(then, path)) for path in paths]

    def revert(self, user: User, session: Session, rev: int, reason: str) -> View:
        """Bring back, as a new revision (history is never rewritten), the fields of revision `rev` that
        the user's role may edit in the queue (`revert_changes`: what the preview showed); nothing else
        changes. Compare-and-swap on the revision the user sees; their unsaved edits here are dropped.
        Raises NotAllowed (Claimed) when the item is assigned to others or reserved by someone else."""
        reason = (reason or "").strip()
        if session.item_id is None or session.rev is None:
            return View(session, error="먼저 문항을 여세요 · Open an item first")
        if not reason:
            return self.view(session, error="되돌리는 사유를 적어 주세요 · Give a reason for the revert")
        try:
            changes = self.revert_changes(user, session, int(rev))
        except EditError as error:
            return self.view(session, error=str(error))
        if not changes:
            return self.view(session, error=f"rev {rev}: no field you may edit in the {session.queue} queue differs "
                                            "from it · 되돌릴 것이 없습니다")
        override = claims.check(self.engine, user, session.queue, session.item_id)
        try:
            new_rev = self.store.update_fields(session.item_id, {path: then for path, _, then in changes},
                                               expect_rev=session.rev, author=user.name, stage="revert",
                                               reason=claims.with_note(f"revert to rev {rev}: {reason}", override))
        except ConflictError as error:
            return self._conflict_view(session, error)
        except (ItemValidationError, WorkspaceError) as error:
            return self.view(session, error=f"되돌리지 못했습니다 · Not reverted: {error}")
        drafts.discard_draft(self.engine, user.name, session.queue, session.item_id)
        claims.release(self.engine, user.name, session.queue, session.item_id)
        fields = ", ".join(path for path, _, _ in changes)
        return self.view(Session(session.queue, session.item_id, new_rev),
                         f"rev {rev}으로 되돌렸습니다 · Reverted to rev {rev}, saved as rev {new_rev}: {fields}")

    def draft_rationale(self, item_id: str) -> str:
        """The rationale text as last drafted (before any review), from the item's history."""
        return decisions.draft_rationale(self.store, item_id)

    def _conflict_view(self, session: Session, error: ConflictError) -> View:
        stored = self.store.get(session.item_id or "")
        base = self.snapshot(session.item_id or "", session.rev or 0)
        now = stored.item.to_record()
        fields = [(path, get_path(base, path), get_path(now, path), mine) for path, mine in session.edits.items()]
        conflict = Conflict(str(error), error.since, error.current_rev, fields)
        message = "다른 사람이 먼저 저장했습니다 · Someone saved this item first; your edits are kept below"
        return View(session, stored, apply_edits(now, session.edits), error=message, conflict=conflict)

    def snapshot(self, item_id: str, rev: int) -> dict[str, Any]:
        for revision in self.store.history(item_id):
            if revision.rev == rev:
                return revision.snapshot
        return {}

    def reload(self, user: str, session: Session) -> View:
        """Drop the user's edits and show the current revision."""
        if session.item_id is None:
            return View(session)
        drafts.discard_draft(self.engine, user, session.queue, session.item_id)
        return self.open(user, session.queue, session.item_id, "최신 revision을 불러왔습니다 · Reloaded the latest revision")

    def reapply(self, user: str, session: Session) -> View:
        """Put the user's edits on top of the current revision, to check and save again."""
        if session.item_id is None:
            return View(session)
        current = self.store.get(session.item_id)
        rebased = Session(session.queue, session.item_id, current.rev, dict(session.edits))
        drafts.save_draft(self.engine, user, session.queue, drafts.Draft(session.item_id, current.rev, rebased.edits))
        return self.view(rebased, f"내 수정을 rev {current.rev} 위에 다시 적용했습니다 · Your edits now sit on rev "
                                  f"{current.rev}: check and save")

    # -- history ------------------------------------------------------------------------
    def history(self, item_id: str) -> list[tuple[Revision, list[tuple[str, Any, Any]]]]:
        revisions = self.store.history(item_id)
        rows: list[tuple[Revision, list[tuple[str, Any, Any]]]] = []
        previous: dict[str, Any] = {}
        for revision in revisions:
            changes = field_changes(previous, revision.snapshot) if revision.rev > 1 else []
            rows.append((revision, changes))
            previous = revision.snapshot
        return rows


def _editable_field(path: str, allowed: tuple[str, ...]) -> str | None:
    """The field a changed leaf belongs to that one of the `allowed` patterns covers (`images.1` for a
    change at `images.1.blob`), or None when none does."""
    parts = path.split(".")
    for end in range(1, len(parts) + 1):
        prefix = ".".join(parts[:end])
        if any(re.fullmatch(pattern, prefix) for pattern in allowed):
            return prefix
    return None


def _same(path: str, value: Any, stored: Any) -> bool:
    """Does a form value mean the stored value? (An empty box for a missing field does.)"""
    if path == "points":
        return key_form.same_points(value, stored)
    if path == "answer":
        if key_form.is_form(value):
            try:
                return key_form.key_of(value, stored) == (stored.model_dump(mode="json") if isinstance(stored, BaseModel)
                                                          else stored)
            except key_form.KeyFormError:
                return False
        if isinstance(value, dict) or (stored is not None and key_options(stored) is None):
            return value == stored or answer_text(value) == answer_text(stored)  # a key of another format
        try:
            numbers = parse_answer(value)
        except EditError:
            return False
        return key_options(numbers) == key_options(stored)
    if value in ("", None) and stored in ("", None):
        return True
    return value == stored
