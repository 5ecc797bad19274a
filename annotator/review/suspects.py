"""The Suspects queue: items whose key or wording the models' answers put in doubt
(`benchsmith analyze suspects`, WS/filtering/item_analysis/suspects.json), highest score first,
and what a reviewer decides on one: fix the key, mark ambiguous, reject, or keep.

Membership: a suspect counts while its content hash is the item's current one (else it is
stale: the item changed since the analysis), the item is not rejected or excluded, and no
decision in this queue was recorded on the same content and the same answers
(`matrix_fingerprint` of the result). So a kept item comes back only when its content or the
answers change. Every decision is compare-and-swap on the revision the reviewer saw and on the
analysis they saw; each is recorded in `annot_suspect_decisions` (with the content hash and
the fingerprint) and in the reviews table (progress, stats).

The evidence shown is counts only: which option (an open item: which answer, normalised by its
format) how many models chose, never which model. Fixing an open item's key takes the new
answer as text, read by the key's format (`parse_key_text`), its other settings (unit,
tolerance …) kept.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import ValidationError
from sqlalchemy import Engine, insert, select

from annotator.review import claims, queues
from annotator.review.auth import User
from annotator.review.queue_specs import QUEUES
from annotator.review.tables import now, suspect_decisions, write_connection
from curation.core.errors import BenchsmithError, ConflictError, NotFoundError
from curation.core.item import Item, choice_answer
from curation.core.store import Store, StoredItem
from evaluation.filter_records import ITEM_ANALYSIS_FOLDER, SUSPECTS_FILE, Suspect, SuspectsResult
from scoring.keys import AnswerKey, parse_key
from scoring.portable import get_format

QUEUE = "suspects"
STAGE = "suspect-review"
DECISIONS = QUEUES[QUEUE].decision_names
CLOSED = ("rejected", "excluded")  # a suspect whose item has one of these statuses is not asked about
MAX_REASON = 2000
HOW_TO_MAKE = "benchsmith analyze suspects"
AMBIGUOUS_PREFIX = "suspect review: ambiguous"  # the review reason an "ambiguous" decision adds
Decision = Literal["fix_key", "ambiguous", "reject", "keep"]
SuspectMove = Literal["first", "next", "prev", "unreviewed"]


class SuspectError(BenchsmithError):
    """A decision the Suspects queue refuses (bad value, bad key, item not a current suspect…)."""


@dataclass(frozen=True)
class Loaded:
    result: SuspectsResult
    fingerprint: str  # of the answers the suspects were found in (or of the file, for a result without one)
    path: Path


@dataclass
class Membership:
    """The open suspects (highest score first) and why the others are not shown."""

    loaded: Loaded | None
    open: list[Suspect] = field(default_factory=list)
    stale: int = 0  # the item changed since the analysis
    decided: int = 0  # decided on this content and these answers
    closed: int = 0  # rejected or excluded
    missing: int = 0  # no longer in the store

    @property
    def ids(self) -> list[str]:
        return [s.item_id for s in self.open]

    def summary(self, show_time: Callable[[str], str] = str, escape: Callable[[str], str] = str) -> str:
        """One line; a page passes how it shows a time (the reader's time zone) and escapes the rest."""
        if self.loaded is None:
            return escape(f"의심 문항 분석 결과가 없습니다 · No suspects result yet: run `{HOW_TO_MAKE}` on this workspace")
        parts = [f"{len(self.open)} open"]
        for n, what in ((self.decided, "decided on these answers"), (self.stale, "stale (item changed since the "
                        "analysis, not shown)"), (self.closed, "rejected or excluded"), (self.missing, "not in the store")):
            if n:
                parts.append(f"{n} {what}")
        created = self.loaded.result.created_at
        return (escape("의심 문항 · Suspects from ") + (show_time(created) if created else escape("unknown time"))
                + escape(": " + ", ".join(parts)))


class ResultFile:
    """suspects.json, read again only when it changes on disk."""

    def __init__(self, root: Path):
        self.path = Path(root) / ITEM_ANALYSIS_FOLDER / SUSPECTS_FILE
        self._seen: tuple[int, int] | None = None
        self._loaded: Loaded | None = None
        self._lock = threading.Lock()

    def load(self) -> Loaded | None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        key = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if key != self._seen:
                raw = self.path.read_bytes()
                try:
                    result = SuspectsResult.model_validate_json(raw)
                except ValidationError as error:
                    raise SuspectError(f"{self.path}: not a suspects result ({error.error_count()} problems); run "
                                       f"`{HOW_TO_MAKE}` again") from None
                fingerprint = result.matrix_fingerprint or hashlib.sha256(raw).hexdigest()[:32]
                self._loaded, self._seen = Loaded(result, fingerprint, self.path), key
            return self._loaded


def membership(engine: Engine, store: Store, loaded: Loaded | None) -> Membership:
    if loaded is None:
        return Membership(None)
    found = Membership(loaded)
    rows = loaded.result.suspects
    stored = store.get_many([s.item_id for s in rows])
    decided = _decided(engine, [s.item_id for s in rows], loaded.fingerprint)
    for suspect in sorted(rows, key=lambda s: (-s.score, -s.evidence)):
        item = stored.get(suspect.item_id)
        if item is None:
            found.missing += 1
        elif suspect.content_hash is not None and suspect.content_hash != item.content_hash:
            found.stale += 1
        elif item.item.status in CLOSED:
            found.closed += 1
        elif (suspect.item_id, item.content_hash) in decided:
            found.decided += 1
        else:
            found.open.append(suspect)
    return found


def _decided(engine: Engine, item_ids: Sequence[str], fingerprint: str) -> set[tuple[str, str | None]]:
    table = suspect_decisions.c
    wanted: set[tuple[str, str | None]] = set()
    with engine.connect() as conn:
        for start in range(0, len(item_ids), 500):
            chunk = list(item_ids[start : start + 500])
            wanted.update((row.item_id, row.content_hash) for row in conn.execute(
                select(table.item_id, table.content_hash).where(table.item_id.in_(chunk),
                                                                table.fingerprint == fingerprint)))
    return wanted


def decisions_of(engine: Engine, item_id: str) -> list[dict]:
    with engine.connect() as conn:
        rows = conn.execute(select(suspect_decisions).where(suspect_decisions.c.item_id == item_id)
                            .order_by(suspect_decisions.c.id)).all()
    return [dict(row._mapping) for row in rows]


def neighbour(open_ids: list[str], current: str | None, how: SuspectMove, user: str, assigned: set[str] | None,
              order: list[str] | None = None) -> str | None:
    """The suspect to show after `current`. `order`: the whole result's order (to place a current
    item that has left the queue); `assigned`: when the queue has assignments, the user's items."""
    if not open_ids:
        return None
    if how == "first" or current is None:
        pool = [i for i in open_ids if assigned is None or i in assigned] if how == "unreviewed" else open_ids
        return pool[0] if pool else None
    rank = {item_id: n for n, item_id in enumerate(order or open_ids)}
    here = rank.get(current, -1)
    if how == "prev":
        before = [i for i in open_ids if rank.get(i, -1) < here]
        return before[-1] if before else None
    after = [i for i in open_ids if rank.get(i, -1) > here]
    if how == "next":
        return after[0] if after else None
    wrapped = after + [i for i in open_ids if i not in after and i != current]
    pool = [i for i in wrapped if assigned is None or i in assigned]
    return pool[0] if pool else None


@dataclass
class Outcome:
    rev: int  # the item's revision after the decision
    message: str


class SuspectDesk:
    """The queue's server side: membership, moving, deciding. The app checks the user's role
    (queue_specs.QUEUES["suspects"].roles) before calling it."""

    def __init__(self, store: Store, root: Path):
        self.store, self.engine = store, store.engine
        self.file = ResultFile(root)

    def membership(self) -> Membership:
        return membership(self.engine, self.store, self.file.load())

    def suspect(self, item_id: str) -> tuple[Suspect, Loaded, StoredItem]:
        """The item's row in the current result, the result and the item; refused unless it is a
        current suspect (in the result, on the item's current content)."""
        loaded = self.file.load()
        if loaded is None:
            raise SuspectError(f"no suspects result: run `{HOW_TO_MAKE}` first")
        row = next((s for s in loaded.result.suspects if s.item_id == item_id), None)
        if row is None:
            raise SuspectError(f"{item_id!r} is not among the suspects of the current analysis")
        stored = self.store.get(item_id)
        if row.content_hash is not None and row.content_hash != stored.content_hash:
            raise SuspectError(f"{item_id!r} changed since the analysis (its evidence is stale): run "
                               f"`{HOW_TO_MAKE}` again")
        return row, loaded, stored

    def assigned(self, user: str) -> set[str] | None:
        if not queues.has_assignments(self.engine, QUEUE):
            return None
        from annotator.review.tables import assignments

        with self.engine.connect() as conn:
            return set(conn.execute(select(assignments.c.item_id).where(assignments.c.queue == QUEUE,
                                                                        assignments.c.user == user)).scalars())

    def navigate(self, user: str, current: str | None, how: SuspectMove) -> str | None:
        found = self.membership()
        order = None
        if found.loaded is not None:  # the whole result's order places an item that has left the queue
            order = [s.item_id for s in sorted(found.loaded.result.suspects, key=lambda s: (-s.score, -s.evidence))]
        return neighbour(found.ids, current, how, user, self.assigned(user) if how == "unreviewed" else None, order)

    def decide(self, user: str | User, item_id: str, expect_rev: int, fingerprint: str, decision: str, reason: str,
               new_key: object = None) -> Outcome:
        """One decision, compare-and-swap on `expect_rev` (the revision the reviewer saw) and on
        `fingerprint` (the analysis they saw). Raises SuspectError, ConflictError or
        ItemValidationError; nothing is written then. A signed-in `user` (a User: the app's
        handlers) is held to the queue's assignments as the item queue is (claims.check); a bare
        name is a trusted caller's (the CLI, tests of the desk itself)."""
        if isinstance(user, User):
            try:
                override = claims.check(self.engine, user, QUEUE, item_id)
            except claims.Claimed as error:
                raise SuspectError(str(error)) from None
            user = user.name
        else:
            override = ""
        if decision not in DECISIONS:
            raise SuspectError(f"decision {decision!r}: choose one of {', '.join(DECISIONS)}")
        reason = (reason or "").strip()
        if not reason and decision != "keep":
            raise SuspectError("사유를 적어 주세요 · Give a reason for the decision")
        reason_note = claims.with_note(reason, override)
        if len(reason) > MAX_REASON:
            raise SuspectError(f"reason: at most {MAX_REASON} characters, got {len(reason)}")
        try:
            expect = int(expect_rev)
        except (TypeError, ValueError):
            raise SuspectError(f"revision {expect_rev!r}: not a revision number") from None
        current = self.store.get(item_id)
        if current.rev != expect:
            raise self._conflict(item_id, expect, current.rev)
        row, loaded, stored = self.suspect(item_id)
        if stored.rev != expect:  # saved by someone in between the two reads
            raise self._conflict(item_id, expect, stored.rev)
        if fingerprint != loaded.fingerprint:
            raise SuspectError("the suspects analysis changed since you opened this item: reload it and decide on "
                               "the new evidence")
        item = stored.item
        text = reason_note or None
        key: int | None = None
        if decision == "fix_key" and item.answer is not None and item.choice_key() is None:
            fixed = _open_key(item.answer, new_key)
            rev = self.store.update_fields(item_id, {"answer": fixed.as_dict()}, expect_rev=expect, author=user,
                                           stage=STAGE, reason=f"key {item.answer.text()} → {fixed.text()}: {reason}")
            message = f"정답을 {fixed.text()}(으)로 고쳤습니다 · Key fixed to {fixed.text()}, saved as rev {rev}"
        elif decision == "fix_key":
            key = _option_number(new_key, len(item.options))
            if item.answer_list() == [key]:
                raise SuspectError(f"option {key} is the key already: choose keep, or another option")
            rev = self.store.update_fields(item_id, {"answer": choice_answer(key, item.to_record())}, expect_rev=expect,
                                           author=user, stage=STAGE, reason=f"key {_key_text(item)} → {key}: {reason}")
            message = f"정답을 {key}번으로 고쳤습니다 · Key fixed to option {key}, saved as rev {rev}"
        elif decision == "ambiguous":
            reasons = [*item.flags.review_reasons, f"{AMBIGUOUS_PREFIX}: {reason}"]
            rev = self.store.update_fields(item_id, {"status": "in_review", "flags.review_reasons": reasons},
                                           expect_rev=expect, author=user, stage=STAGE,
                                           reason=f"ambiguous: {reason}")
            message = f"모호함으로 표시했습니다 · Marked ambiguous (in review), saved as rev {rev}"
        elif decision == "reject":
            rev = self.store.update_fields(item_id, {"status": "rejected"}, expect_rev=expect, author=user,
                                           stage=STAGE, reason=f"rejected as a suspect: {reason}")
            message = f"반려했습니다 · Rejected, saved as rev {rev}"
        else:
            rev = stored.rev
            message = "유지 · Kept: not suggested again until the item or the answers change"
        with write_connection(self.engine) as conn, conn.begin():
            conn.execute(insert(suspect_decisions).values(
                item_id=item_id, user=user, decision=decision, reason=text, rev=rev, content_hash=stored.content_hash,
                fingerprint=loaded.fingerprint, score=row.score, new_key=key,
                at=now()))
        queues.record_review(self.engine, QUEUE, item_id, user, decision, rev, text)
        return Outcome(rev, message)

    def _conflict(self, item_id: str, expected: int, current: int) -> ConflictError:
        try:
            since = [f"rev {r.rev} by {r.author} ({r.stage}, {r.created_at}): {', '.join(r.changed_fields) or 'no fields'}"
                     for r in self.store.history(item_id) if r.rev > expected]
        except NotFoundError:
            since = []
        return ConflictError(item_id, expected, current, since)


def _option_number(value: object, options: int) -> int:
    text = str(value).strip() if value is not None else ""
    if not text.isdigit() or not 1 <= int(text) <= options:
        raise SuspectError(f"new key {value!r}: choose an option number 1..{options} of this item")
    return int(text)


# what a new answer sets in an open key; the key's other settings (tolerance, normalisation, strict …) stay
ANSWER_FIELDS = {"numeric": ("value", "unit"), "text": ("accepted",), "set": ("members",), "expression": ("latex",),
                 "judged": ("reference",)}


def _open_key(current: AnswerKey, value: object) -> AnswerKey:
    """An open item's new key from the answer a reviewer gives, read by the key's format; the
    key's other settings (unit, tolerance, normalisation …) are kept where the answer sets none."""
    text = str(value).strip() if value is not None else ""
    if not text:
        raise SuspectError("new key: give the right answer")
    try:
        parsed = get_format(current.format).parse_key_text(text)
        fields = ANSWER_FIELDS.get(current.format, tuple(parsed))
        fixed = parse_key({**current.as_dict(), **{k: v for k, v in parsed.items() if v is not None and k in fields}})
    except ValueError as error:  # pydantic's ValidationError is one
        raise SuspectError(f"new key {text!r}: not a {current.format} answer ({error})") from None
    if fixed == current:
        raise SuspectError(f"{fixed.text()!r} is the key already: choose keep, or another answer")
    return fixed


def _key_text(item: Item) -> str:
    return ",".join(map(str, item.answer_list())) if item.choice_key() else item.answer.text() if item.answer else "None"

