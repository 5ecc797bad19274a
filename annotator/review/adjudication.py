"""Each reviewer's own decision on an overlapped item, then agreement or adjudication.

An item assigned to two or more reviewers in a queue whose spec is `overlap_adjudicated` (item,
korea) does not take a reviewer's decision at once: it is kept in `reviewer_decisions` with the
reviewer's edits, reason and the revision it was made on. When every assignee has decided:

- the same decision with the same edits on the same revision (the item's current one) applies as
  one revision through `decisions.decide`, its reason naming every reviewer's decision;
- anything else is disputed and waits in the adjudicate queue, where a lead (admin) applies one
  of the queue's decisions, picked from the reviewers' or merged, again with every decision named.

An item with one assignee or none never comes here: `Reviewer.save` decides it directly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, and_, delete, func, select, tuple_, update

from annotator.review import decisions, queues
from annotator.review.auth import User
from annotator.review.queue_specs import QUEUES, Decision, QueueSpec
from annotator.review.tables import assignments, now, reviewer_decisions, write_connection
from curation.core.errors import ConflictError
from curation.core.item import ItemValidationError, parse_item
from curation.core.store import Store, set_path

ADJUDICATE = "adjudicate"
PENDING, AGREED, DISPUTED, ADJUDICATED = None, "agreed", "disputed", "adjudicated"
STAGE_AGREED, STAGE_ADJUDICATED = "annotate-agreed", "adjudicate"


@dataclass(frozen=True)
class ReviewerDecision:
    user: str
    decision: str
    edits: dict[str, Any]
    reason: str | None
    base_rev: int

    def describe(self) -> str:
        edited = f", edits {', '.join(sorted(self.edits))}" if self.edits else ""
        why = f" ({self.reason})" if self.reason else ""
        return f"{self.user}: {self.decision}{why} on rev {self.base_rev}{edited}"


@dataclass(frozen=True)
class Case:
    """A disputed item: what each of its reviewers decided."""

    queue: str
    item_id: str
    decisions: tuple[ReviewerDecision, ...]


@dataclass(frozen=True)
class Recorded:
    outcome: str | None  # None: others have still to decide; agreed (applied) or disputed
    decided: int
    assigned: int
    applied_rev: int | None = None

    @property
    def message(self) -> str:
        if self.outcome == AGREED:
            return (f"모두 같은 결정 · All {self.assigned} reviewers agree: applied as rev {self.applied_rev}")
        if self.outcome == DISPUTED:
            return "검토자 결정이 다릅니다 · The reviewers differ: the item goes to the lead (Adjudicate)"
        return (f"내 결정을 기록했습니다 · Your decision is recorded ({self.decided}/{self.assigned} reviewers); "
                "it applies when all have decided")


def assignees(engine: Engine, queue: str, item_id: str) -> list[str]:
    with engine.connect() as conn:
        return sorted(conn.execute(select(assignments.c.user).where(assignments.c.queue == queue,
                                                                    assignments.c.item_id == item_id)).scalars())


def keeps_apart(engine: Engine, spec: QueueSpec, item_id: str, user: str) -> bool:
    """Is `user` one of two or more reviewers the item is assigned to, in a queue that keeps their
    decisions apart? (Anyone else deciding on it, such as an admin overriding, decides directly.)"""
    if not spec.overlap_adjudicated:
        return False
    holders = assignees(engine, spec.name, item_id)
    return len(holders) >= 2 and user in holders


def _row(row: Any) -> ReviewerDecision:
    return ReviewerDecision(row.user, row.decision, json.loads(row.edits), row.reason, row.base_rev)


def _canonical(edits: dict[str, Any]) -> str:
    return json.dumps(edits, sort_keys=True, ensure_ascii=False)


def _check(store: Store, decision: Decision, item_id: str, user: str, reason: str, edits: dict[str, Any]) -> None:
    """What deciding would check, without writing: a decision this item cannot take is refused now,
    not when the last reviewer decides."""
    item = store.get(item_id).item
    record = item.to_record()
    for path, value in {**edits, **decisions.changes(store, decision, item, user, reason, edits)}.items():
        set_path(record, path, value)
    parse_item(record)


def record(store: Store, spec: QueueSpec, decision: Decision, item_id: str, base_rev: int, user: str, *,
           reason: str = "", edits: dict[str, Any] | None = None) -> Recorded:
    """Keep `user`'s decision on the overlapped item (replacing theirs while others have still to
    decide); settle the item when it is the last one. Raises DecisionError or ItemValidationError,
    writing nothing, for a decision the item cannot take, or when the item already waits for the lead."""
    edits = dict(edits or {})
    engine = store.engine
    _check(store, decision, item_id, user, reason, edits)
    of_item = and_(reviewer_decisions.c.queue == spec.name, reviewer_decisions.c.item_id == item_id)
    with write_connection(engine) as conn, conn.begin():
        # one decider at a time per item (SQLite's write lock does this for the whole store)
        holders = set(conn.execute(select(assignments.c.user).where(
            assignments.c.queue == spec.name, assignments.c.item_id == item_id).with_for_update()).scalars())
        if conn.execute(select(reviewer_decisions.c.id).where(
                of_item, reviewer_decisions.c.outcome == DISPUTED).limit(1)).first() is not None:
            raise decisions.DecisionError("검토자 결정이 달라 조정 중입니다 · The reviewers' decisions differ and "
                                          "wait for the lead (Adjudicate)")
        conn.execute(delete(reviewer_decisions).where(of_item, reviewer_decisions.c.user == user,
                                                      reviewer_decisions.c.outcome.is_(None)))
        conn.execute(reviewer_decisions.insert().values(
            queue=spec.name, item_id=item_id, user=user, decision=decision.name, edits=_canonical(edits),
            reason=reason or None, base_rev=base_rev, at=now()))
        pending = [_row(row) for row in conn.execute(select(reviewer_decisions).where(
            of_item, reviewer_decisions.c.outcome.is_(None)).order_by(reviewer_decisions.c.user))]
        outcome = PENDING
        if holders <= {row.user for row in pending}:
            current_rev = store.get(item_id).rev
            same = {(row.decision, _canonical(row.edits), row.base_rev) for row in pending}
            outcome = AGREED if len(same) == 1 and base_rev == current_rev else DISPUTED
            conn.execute(update(reviewer_decisions).where(of_item, reviewer_decisions.c.outcome.is_(None))
                         .values(outcome=outcome))
    # the reviewer has decided: their progress and "next unreviewed" count it (at the revision it was made on)
    queues.record_review(engine, spec.name, item_id, user, decision.name, base_rev, reason or None)
    recorded = Recorded(outcome, len(pending), len(holders))
    if outcome == AGREED:
        return _apply_agreed(store, spec, decision, item_id, base_rev, pending, recorded)
    return recorded


def _apply_agreed(store: Store, spec: QueueSpec, decision: Decision, item_id: str, base_rev: int,
                  pending: Sequence[ReviewerDecision], recorded: Recorded) -> Recorded:
    reasons = list(dict.fromkeys(row.reason for row in pending if row.reason))
    users = [row.user for row in pending]
    history = f"{AGREED}: " + "; ".join(row.describe() for row in pending)
    try:
        new_rev = decisions.decide(store, spec, decision, item_id, base_rev, "+".join(users),
                                   reason=" / ".join(reasons), edits=pending[0].edits, stage=STAGE_AGREED,
                                   history=history, record=False)
    except (ConflictError, decisions.DecisionError, ItemValidationError):
        # the item moved on after the check: the lead settles it
        _settle(store.engine, spec.name, item_id, AGREED, DISPUTED, None)
        return Recorded(DISPUTED, recorded.decided, recorded.assigned)
    _settle(store.engine, spec.name, item_id, AGREED, AGREED, new_rev)
    return Recorded(AGREED, recorded.decided, recorded.assigned, new_rev)


def _settle(engine: Engine, queue: str, item_id: str, outcome: str, to: str, applied_rev: int | None) -> None:
    with write_connection(engine) as conn, conn.begin():
        conn.execute(update(reviewer_decisions).where(
            reviewer_decisions.c.queue == queue, reviewer_decisions.c.item_id == item_id,
            reviewer_decisions.c.outcome == outcome, reviewer_decisions.c.applied_rev.is_(None))
            .values(outcome=to, applied_rev=applied_rev))


def _disputed(queue: str, item_id: str) -> Any:
    return and_(reviewer_decisions.c.queue == queue, reviewer_decisions.c.item_id == item_id,
                reviewer_decisions.c.outcome == DISPUTED)


def case(engine: Engine, queue: str, item_id: str) -> Case | None:
    """The item's reviewers' decisions when they are disputed."""
    with engine.connect() as conn:
        rows = conn.execute(select(reviewer_decisions).where(_disputed(queue, item_id))
                            .order_by(reviewer_decisions.c.user)).all()
    return Case(queue, item_id, tuple(_row(row) for row in rows)) if rows else None


def next_case(engine: Engine, after: tuple[str, str] | None = None) -> Case | None:
    """The adjudicate queue in (queue, item id) order: the disputed item after `after`, wrapping round."""
    key = tuple_(reviewer_decisions.c.queue, reviewer_decisions.c.item_id)
    first = select(reviewer_decisions.c.queue, reviewer_decisions.c.item_id).where(
        reviewer_decisions.c.outcome == DISPUTED).order_by(*key.clauses).limit(1)
    with engine.connect() as conn:
        found = conn.execute(first.where(key > tuple_(*after))).first() if after else None
        found = found or conn.execute(first).first()
    return case(engine, *found) if found else None


def count_cases(engine: Engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(
            select(reviewer_decisions.c.queue, reviewer_decisions.c.item_id).where(
                reviewer_decisions.c.outcome == DISPUTED).distinct().subquery())).scalar_one()


def cases(engine: Engine) -> list[Case]:
    """The whole adjudicate queue, in (queue, item id) order."""
    found, current = [], next_case(engine)
    while current is not None and current not in found:
        found.append(current)
        current = next_case(engine, (current.queue, current.item_id))
    return found


def resolve(store: Store, lead: User, queue: str, item_id: str, expect_rev: int, decision_name: str, *,
            edits: dict[str, Any] | None = None, reason: str = "") -> int:
    """The lead's decision on a disputed item (one of the queue's, with the edits picked or merged),
    applied at `expect_rev` with every reviewer's decision in the revision's reason. Raises NotAllowed
    for a role the adjudicate queue does not admit, DecisionError when the item is not disputed,
    ConflictError when it moved on; nothing is written then."""
    QUEUES[ADJUDICATE].check_decision(lead.role, ADJUDICATE)
    spec = queues.spec(queue)
    decision = spec.decision(decision_name)
    edits = dict(edits or {})
    for path in edits:
        spec.check_edit(lead.role, path)
    disputed = case(store.engine, queue, item_id)
    if disputed is None:
        raise decisions.DecisionError(f"{queue} · {item_id}: no reviewers' decisions wait for adjudication")
    reason = (reason or "").strip()
    history = (f"{ADJUDICATED} by {lead.name}: {decision.name}{f' ({reason})' if reason else ''} — "
               + "; ".join(row.describe() for row in disputed.decisions))
    new_rev = decisions.decide(store, spec, decision, item_id, expect_rev, lead.name, reason=reason, edits=edits,
                               stage=STAGE_ADJUDICATED, history=history, record=False)
    _settle(store.engine, queue, item_id, DISPUTED, ADJUDICATED, new_rev)
    queues.record_review(store.engine, ADJUDICATE, item_id, lead.name, ADJUDICATE, new_rev, reason or None)
    return new_rev


def ratings(engine: Engine, queue: str) -> dict[str, dict[str, str]]:
    """Every reviewer's latest decision per overlapped item of `queue`: {item_id: {user: decision}}."""
    with engine.connect() as conn:
        rows = conn.execute(select(reviewer_decisions.c.item_id, reviewer_decisions.c.user,
                                   reviewer_decisions.c.decision).where(reviewer_decisions.c.queue == queue)
                            .order_by(reviewer_decisions.c.id)).all()
    found: dict[str, dict[str, str]] = {}
    for item_id, user, decision in rows:
        found.setdefault(item_id, {})[user] = decision
    return found
