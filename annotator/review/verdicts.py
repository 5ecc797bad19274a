"""The Verdicts queue: people decide whether a model's response is correct, and their verdict
becomes the record's score.

- Loading (`annotate load-verdicts RUN`): a run's current responses become tasks keyed by (run,
  item, response sha), in three tiers: the responses a checker decided and a judge (ours beside
  it, or another tool's own verdict) contradicts; then those a judge decided, or no one; then an
  audit sample of the other checker-decided responses (`--audit N`, `[verdicts] audit`; the same
  seeded ranking each time, so a larger N keeps the smaller one's sample). Within a tier, items in
  id order and an item's responses in a blind order (an HMAC with the workspace's secret).
- Reviewing: a reviewer says correct / incorrect / no answer, whether the answer was read right,
  and for an incorrect one optionally why (the workspace's error taxonomy). A task assigned to two
  or more reviewers (`annotate assign --queue verdicts --overlap 2`) keeps each one's verdict apart
  until all have given theirs: the same verdict, reading and category settle it (`agreed`),
  anything else waits for the lead (an admin), whose verdict settles it (`adjudicated`). A task
  with one assignee or none is settled by its reviewer (`single`).
- A settled verdict is applied to the run at once (evaluation/human_verdicts.py): a line of
  `runs/RUN/verdicts.jsonl` and the record again with a human-decided Score.

Experts see no model, run or task id: a response is shown as the item's question, the key, the
response and what the checker and judges made of it. Every function that writes checks the role
(queue_specs) and the assignment (claims) itself, whatever the page showed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import Engine, and_, delete, exists, func, insert, not_, select, update
from sqlalchemy.exc import IntegrityError

from annotator.review import blinding, claims, queues
from annotator.review.auth import User
from annotator.review.queue_specs import QUEUES
from annotator.review.tables import (
    assignments,
    now,
    reviews,
    verdict_results,
    verdict_runs,
    verdict_tasks,
    verdict_votes,
    write_connection,
)
from curation.core.errors import BenchsmithError, NotFoundError
from curation.core.workspace import Workspace
from evaluation.human_verdicts import (
    VERDICT_LABELS,
    VERDICTS,
    VerdictSettings,
    apply_verdict,
    verdict_settings,
)
from evaluation.metrics import RunData
from evaluation.records import AnswerRecord, HumanVerdict, ReviewerVerdict, response_sha
from scoring import Score

QUEUE = "verdicts"
ADJUDICATE = "adjudicate"
SINGLE, AGREED, DISPUTED, ADJUDICATED = "single", "agreed", "disputed", "adjudicated"
DISAGREEMENT, JUDGED, AUDIT = 0, 1, 2
TIER_LABELS = {DISAGREEMENT: "검사기와 판정이 다름 · the checker and a judge disagree",
               JUDGED: "판정 모델이 결정했거나 미결 · decided by a judge, or by no one",
               AUDIT: "검사기 결정 표본 감사 · audit sample of checker-decided responses"}
DECIDED = ("correct", "wrong", "unparseable", "error")
VerdictMove = Literal["next", "prev", "unreviewed", "disputed"]


class VerdictError(BenchsmithError):
    """A verdict this task cannot take as asked (settled already, waiting for the lead, bad values)."""


def task_key(task_id: int) -> str:
    """The task's name in the shared tables (assignments, reservations, reviews); never served."""
    return f"verdict-{task_id}"


@dataclass(frozen=True)
class Task:
    id: int
    run_id: str
    item_id: str
    response_sha: str
    response: str
    content_hash: str | None
    answer_format: str | None
    tier: int
    score: Score  # what the record said when loaded
    external: dict[str, Any] | None

    @property
    def key(self) -> str:
        return task_key(self.id)


@dataclass(frozen=True)
class Vote:
    user: str
    verdict: str
    extraction_ok: bool | None
    error_category: str | None
    reason: str | None
    outcome: str | None
    at: str

    def as_reviewer(self) -> ReviewerVerdict:
        return ReviewerVerdict(user=self.user, verdict=self.verdict,  # type: ignore[arg-type]
                               extraction_ok=self.extraction_ok, error_category=self.error_category,
                               reason=self.reason, at=self.at)

    def same_as(self, other: Vote) -> bool:
        return (self.verdict, self.extraction_ok, self.error_category) == (
            other.verdict, other.extraction_ok, other.error_category)


@dataclass(frozen=True)
class Result:
    verdict: str
    extraction_ok: bool | None
    error_category: str | None
    by: str
    how: str
    reason: str | None
    at: str
    applied: str | None


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _task(row: Any) -> Task:
    return Task(row.id, row.run_id, row.item_id, row.response_sha, row.response, row.content_hash, row.answer_format,
                row.tier, Score.model_validate_json(row.score), json.loads(row.external) if row.external else None)


def _vote(row: Any) -> Vote:
    return Vote(row.user, row.verdict, _bool(row.extraction_ok), row.error_category, row.reason, row.outcome, row.at)


# -- loading a run --------------------------------------------------------------------------------

def judge_verdict(score: Score, external: dict[str, Any] | None) -> list[bool]:
    """What judges said beside a checker's decision: ours (`--judge-all`) and another tool's own."""
    said = []
    beside = score.details.get("judge")
    if isinstance(beside, dict) and isinstance(beside.get("verdict"), bool):
        said.append(beside["verdict"])
    if isinstance((external or {}).get("is_correct"), bool):
        said.append(bool((external or {})["is_correct"]))
    return said


def tier_of(record: AnswerRecord) -> int | None:
    """The record's place in the queue, or None when there is nothing for a person to decide (no
    response text) or a person decided it already."""
    score = record.typed_score()
    if record.text is None or score.decided_by == "human":
        return None
    if score.decided_by == "checker" and score.outcome in DECIDED:
        accepts = score.outcome == "correct"
        if any(verdict != accepts for verdict in judge_verdict(score, record.external)):
            return DISAGREEMENT
        return AUDIT
    return JUDGED  # decided by a judge, or undecided


def audit_rank(seed: int, run_id: str, item_id: str) -> str:
    """The audit sample is the first N in this order: the same seed gives the same sample, and a
    larger N keeps a smaller one's."""
    return hashlib.sha256(f"{seed}\0{run_id}\0{item_id}".encode()).hexdigest()


def blind_rank(secret: bytes, run_id: str, item_id: str) -> str:
    return hmac.new(secret, f"verdict\0{run_id}\0{item_id}".encode(), hashlib.sha256).hexdigest()[:32]


@dataclass
class LoadReport:
    run_id: str
    added: Counter[int] = field(default_factory=Counter)  # tier → tasks added
    already: int = 0  # tasks loaded before (the same response)
    decided: int = 0  # records a person decided already
    no_response: int = 0
    audit_pool: int = 0  # checker-decided responses the audit sample was drawn from
    formats: dict[str, tuple[int, int]] = field(default_factory=dict)  # format → (responses, judged)

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "added": {TIER_NAMES[t]: n for t, n in sorted(self.added.items())},
                "already": self.already, "decided_by_people": self.decided, "no_response": self.no_response,
                "audit_pool": self.audit_pool,
                "formats": {f: {"responses": r, "judged": j} for f, (r, j) in sorted(self.formats.items())}}


TIER_NAMES = {DISAGREEMENT: "disagreements", JUDGED: "judged", AUDIT: "audit"}


def was_judged(score: Score) -> bool:
    before = score.details.get("before") if score.decided_by == "human" else None
    return score.decided_by == "judge" or (isinstance(before, dict) and before.get("decided_by") == "judge")


def load_verdict_tasks(engine: Engine, run: RunData, *, audit: int, seed: int = 0) -> LoadReport:
    """Add a run's current responses to the queue (those already there are kept as they are), and
    count per answer format its responses and how many the judge decided."""
    report = LoadReport(run.run_id)
    secret = blinding.workspace_secret(engine)
    records = run.records
    items = run.items
    tiers: dict[str, int] = {}
    formats: dict[str, list[int]] = {}
    for item_id, record in records.items():
        item = items.get(item_id)
        fmt = (item.answer_format if item is not None else None) or record.typed_score().checker or "unknown"
        if record.text is not None:
            counts = formats.setdefault(fmt, [0, 0])
            counts[0] += 1
            counts[1] += was_judged(record.typed_score())
        tier = tier_of(record)
        if tier is None:
            report.decided += record.text is not None
            report.no_response += record.text is None
            continue
        tiers[item_id] = tier
    pool = sorted((i for i, t in tiers.items() if t == AUDIT), key=lambda i: audit_rank(seed, run.run_id, i))
    report.audit_pool = len(pool)
    chosen = [i for i, t in tiers.items() if t != AUDIT] + pool[:audit]
    when = now()
    with write_connection(engine) as conn, conn.begin():
        for item_id in sorted(chosen):
            record, item = records[item_id], items.get(item_id)
            sha = response_sha(record.text)
            key = and_(verdict_tasks.c.run_id == run.run_id, verdict_tasks.c.item_id == item_id,
                       verdict_tasks.c.response_sha == sha)
            if conn.execute(select(verdict_tasks.c.id).where(key)).first() is not None:
                report.already += 1
                continue
            conn.execute(insert(verdict_tasks).values(
                run_id=run.run_id, item_id=item_id, response_sha=sha, response=record.text or "",
                content_hash=record.content_hash,
                answer_format=(item.answer_format if item is not None else None) or record.typed_score().checker,
                tier=tiers[item_id], blind_rank=blind_rank(secret, run.run_id, item_id),
                score=record.typed_score().model_dump_json(),
                external=json.dumps(record.external, ensure_ascii=False) if record.external else None,
                loaded_at=when))
            report.added[tiers[item_id]] += 1
        conn.execute(delete(verdict_runs).where(verdict_runs.c.run_id == run.run_id))
        for fmt, (responses, judged) in sorted(formats.items()):
            conn.execute(insert(verdict_runs).values(run_id=run.run_id, answer_format=fmt, responses=responses,
                                                     judged=judged, loaded_at=when))
    report.formats = {fmt: (r, j) for fmt, (r, j) in formats.items()}
    return report


# -- reading the queue ------------------------------------------------------------------------------

def get_task(engine: Engine, task_id: int) -> Task:
    with engine.connect() as conn:
        row = conn.execute(select(verdict_tasks).where(verdict_tasks.c.id == task_id)).first()
    if row is None:
        raise NotFoundError("no such response in the Verdicts queue")
    return _task(row)


def ordered_ids(engine: Engine) -> list[int]:
    with engine.connect() as conn:
        return list(conn.execute(select(verdict_tasks.c.id).order_by(
            verdict_tasks.c.tier, verdict_tasks.c.item_id, verdict_tasks.c.blind_rank)).scalars())


def task_keys(engine: Engine, *, open_only: bool = True) -> list[str]:
    """The tasks' keys in queue order (for assignment), the settled ones left out by default."""
    settled = exists().where(verdict_results.c.task_id == verdict_tasks.c.id)
    statement = select(verdict_tasks.c.id).order_by(verdict_tasks.c.tier, verdict_tasks.c.item_id, verdict_tasks.c.blind_rank)
    if open_only:
        statement = statement.where(not_(settled))
    with engine.connect() as conn:
        return [task_key(i) for i in conn.execute(statement).scalars()]


def votes(engine: Engine, task_id: int) -> list[Vote]:
    with engine.connect() as conn:
        rows = conn.execute(select(verdict_votes).where(verdict_votes.c.task_id == task_id)
                            .order_by(verdict_votes.c.id)).all()
    return [_vote(row) for row in rows]


def result(engine: Engine, task_id: int) -> Result | None:
    with engine.connect() as conn:
        row = conn.execute(select(verdict_results).where(verdict_results.c.task_id == task_id)).first()
    if row is None:
        return None
    return Result(row.verdict, _bool(row.extraction_ok), row.error_category, row.decided_by, row.how, row.reason, row.at,
                  row.applied)


def is_disputed(engine: Engine, task_id: int) -> bool:
    with engine.connect() as conn:
        return conn.execute(select(verdict_votes.c.id).where(
            verdict_votes.c.task_id == task_id, verdict_votes.c.outcome == DISPUTED).limit(1)).first() is not None


def count(engine: Engine) -> tuple[int, int, int]:
    """(tasks, settled, disputed)."""
    with engine.connect() as conn:
        total = conn.execute(select(func.count()).select_from(verdict_tasks)).scalar_one()
        settled = conn.execute(select(func.count()).select_from(verdict_results)).scalar_one()
        disputed = conn.execute(select(func.count(func.distinct(verdict_votes.c.task_id))).where(
            verdict_votes.c.outcome == DISPUTED)).scalar_one()
    return total, settled, disputed


def navigate(engine: Engine, user: str, current: int | None, how: VerdictMove) -> int | None:
    """The next (previous) task; the next one `user` has still to decide (their assigned ones when
    the queue has assignments; none someone else holds); or the next one waiting for the lead."""
    order = ordered_ids(engine)
    if not order:
        return None
    start = order.index(current) if current in order else -1
    if how == "next":
        return order[start + 1] if start + 1 < len(order) else None
    if how == "prev":
        return order[start - 1] if start > 0 else None
    rotated = order[start + 1:] + order[:start + 1]
    with engine.connect() as conn:
        if how == "disputed":
            wanted = set(conn.execute(select(verdict_votes.c.task_id).where(verdict_votes.c.outcome == DISPUTED)).scalars())
        else:
            settled = set(conn.execute(select(verdict_results.c.task_id)).scalars())
            waiting = set(conn.execute(select(verdict_votes.c.task_id).where(
                verdict_votes.c.outcome == DISPUTED)).scalars())
            mine = set(conn.execute(select(verdict_votes.c.task_id).where(verdict_votes.c.user == user)).scalars())
            wanted = set(order) - settled - waiting - mine
            if queues.has_assignments(engine, QUEUE):
                assigned = {key for key in conn.execute(select(assignments.c.item_id).where(
                    assignments.c.queue == QUEUE, assignments.c.user == user)).scalars()}
                wanted = {task for task in wanted if task_key(task) in assigned}
    for task in rotated:
        if task in wanted and (how == "disputed" or not _held_by_another(engine, user, task)):
            return task
    return None


def _held_by_another(engine: Engine, user: str, task_id: int) -> bool:
    live = claims.holder(engine, QUEUE, task_key(task_id))
    return live is not None and live.user != user and user not in claims.assignees(engine, QUEUE, task_key(task_id))


# -- deciding ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Decided:
    outcome: str  # single, agreed, disputed, adjudicated, or "" (others have still to decide)
    decided: int = 1
    assigned: int = 1
    applied: str | None = None

    @property
    def message(self) -> str:
        applied = f" · {APPLIED_LABELS.get(self.applied or '', self.applied)}" if self.applied else ""
        if self.outcome == SINGLE:
            return "판정을 적용했습니다 · Your verdict is applied to the run's score" + applied
        if self.outcome == AGREED:
            return f"모두 같은 판정 · All {self.assigned} reviewers agree: applied to the run's score" + applied
        if self.outcome == ADJUDICATED:
            return "조정 판정을 적용했습니다 · The lead's verdict is applied to the run's score" + applied
        if self.outcome == DISPUTED:
            return "검토자 판정이 다릅니다 · The reviewers differ: the response goes to the lead"
        return (f"내 판정을 기록했습니다 · Your verdict is recorded ({self.decided}/{self.assigned} reviewers); "
                "it applies when all have given theirs")


APPLIED_LABELS = {"applied": "점수 갱신 · score revised", "already": "이미 반영 · already in the run",
                  "changed": "응답이 바뀌어 점수는 그대로 · the run's response changed since: its score stays",
                  "no record": "기록 없음 · the run has no record of it", "no run": "실행 없음 · the run is gone"}


def check_values(settings: VerdictSettings, verdict: str, extraction_ok: bool | None, category: str | None) -> None:
    if verdict not in VERDICTS:
        raise VerdictError(f"verdict {verdict!r}: choose one of {', '.join(VERDICTS)}")
    if extraction_ok not in (None, True, False):
        raise VerdictError("extraction: right, wrong or not judged")
    if category:
        if verdict != "incorrect":
            raise VerdictError("오류 유형은 오답에만 · an error category goes with an incorrect verdict")
        if category not in settings.category_names:
            raise VerdictError(f"error category {category!r}: choose one of {', '.join(settings.category_names)}")


class VerdictDesk:
    """The queue's reads and writes for the app and the CLI, on one workspace."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self.engine: Engine = workspace.store.engine
        self._settings: VerdictSettings | None = None

    @property
    def settings(self) -> VerdictSettings:
        if self._settings is None:
            self._settings = verdict_settings(self.workspace.root)
        return self._settings

    def decide(self, user: User, task_id: int, verdict: str, extraction_ok: bool | None = None,
               category: str | None = None, reason: str = "") -> Decided:
        """A reviewer's verdict. Raises NotAllowed (role), Claimed (assigned to others, held by
        another), VerdictError (bad values, settled, waiting for the lead), NotFoundError; nothing
        is written then."""
        spec = QUEUES[QUEUE]
        if verdict not in VERDICTS:
            spec.check_role(user.role)
            raise VerdictError(f"verdict {verdict!r}: choose one of {', '.join(VERDICTS)}")
        spec.check_decision(user.role, verdict)
        category = category or None
        check_values(self.settings, verdict, extraction_ok, category)
        task = get_task(self.engine, task_id)
        note = claims.check(self.engine, user, QUEUE, task.key)
        reason = claims.with_note((reason or "").strip(), note)
        holders = set(claims.assignees(self.engine, QUEUE, task.key))
        apart = len(holders) >= 2 and user.name in holders
        when = now()
        outcome = ""
        pending: list[Vote] = []
        with write_connection(self.engine) as conn, conn.begin():
            conn.execute(select(verdict_tasks.c.id).where(verdict_tasks.c.id == task_id).with_for_update())
            self._refuse_closed(conn, task_id)
            of_task = verdict_votes.c.task_id == task_id
            if apart:
                conn.execute(delete(verdict_votes).where(of_task, verdict_votes.c.user == user.name,
                                                         verdict_votes.c.outcome.is_(None)))
            conn.execute(insert(verdict_votes).values(
                task_id=task_id, user=user.name, verdict=verdict,
                extraction_ok=None if extraction_ok is None else int(extraction_ok), error_category=category,
                reason=reason or None, outcome=None if apart else SINGLE, at=when))
            if apart:
                pending = [_vote(row) for row in conn.execute(select(verdict_votes).where(
                    of_task, verdict_votes.c.outcome.is_(None)).order_by(verdict_votes.c.user))]
                if holders <= {vote.user for vote in pending}:
                    outcome = AGREED if all(vote.same_as(pending[0]) for vote in pending) else DISPUTED
                    conn.execute(update(verdict_votes).where(of_task, verdict_votes.c.outcome.is_(None))
                                 .values(outcome=outcome))
            else:
                outcome = SINGLE
                pending = [Vote(user.name, verdict, extraction_ok, category, reason or None, SINGLE, when)]
            if outcome in (SINGLE, AGREED):
                first = pending[0]
                reasons = " / ".join(dict.fromkeys(v.reason for v in pending if v.reason))
                self._settle(conn, task_id, first.verdict, first.extraction_ok, first.error_category,
                             "+".join(v.user for v in pending), outcome, reasons or None, when)
        queues.record_review(self.engine, QUEUE, task.key, user.name, verdict, 0, reason or None)
        claims.release(self.engine, user.name, QUEUE, task.key)
        applied = self.apply(task_id) if outcome in (SINGLE, AGREED) else None
        return Decided(outcome, len(pending), max(len(holders), 1), applied)

    def adjudicate(self, lead: User, task_id: int, verdict: str, extraction_ok: bool | None = None,
                   category: str | None = None, reason: str = "") -> Decided:
        """The lead's verdict on a task whose reviewers differ, with every reviewer's verdict kept."""
        QUEUES[QUEUE].check_decision(lead.role, ADJUDICATE)
        category = category or None
        check_values(self.settings, verdict, extraction_ok, category)
        task = get_task(self.engine, task_id)
        claims.override(lead, QUEUE, task.key, claims.assignees(self.engine, QUEUE, task.key))  # as decide does
        when = now()
        with write_connection(self.engine) as conn, conn.begin():
            conn.execute(select(verdict_tasks.c.id).where(verdict_tasks.c.id == task_id).with_for_update())
            disputed = and_(verdict_votes.c.task_id == task_id, verdict_votes.c.outcome == DISPUTED)
            if conn.execute(select(verdict_votes.c.id).where(disputed).limit(1)).first() is None:
                raise VerdictError("이 응답은 조정할 것이 없습니다 · The reviewers of this response do not differ: "
                                   "nothing to adjudicate")
            conn.execute(update(verdict_votes).where(disputed).values(outcome=ADJUDICATED))
            self._settle(conn, task_id, verdict, extraction_ok, category, lead.name, ADJUDICATED,
                         (reason or "").strip() or None, when)
        queues.record_review(self.engine, QUEUE, task.key, lead.name, ADJUDICATE, 0, (reason or "").strip() or None)
        return Decided(ADJUDICATED, applied=self.apply(task_id))

    def _refuse_closed(self, conn: Any, task_id: int) -> None:
        settled = conn.execute(select(verdict_results.c.decided_by, verdict_results.c.verdict).where(
            verdict_results.c.task_id == task_id)).first()
        if settled is not None:
            raise VerdictError(f"이미 판정된 응답입니다 · This response is settled already ({settled.verdict}, by "
                               f"{settled.decided_by})")
        if conn.execute(select(verdict_votes.c.id).where(verdict_votes.c.task_id == task_id,
                                                         verdict_votes.c.outcome == DISPUTED).limit(1)).first():
            raise VerdictError("검토자 판정이 달라 조정 중입니다 · The reviewers' verdicts differ and wait for the lead")

    @staticmethod
    def _settle(conn: Any, task_id: int, verdict: str, extraction_ok: bool | None, category: str | None, by: str,
                how: str, reason: str | None, when: str) -> None:
        try:
            conn.execute(insert(verdict_results).values(
                task_id=task_id, verdict=verdict, extraction_ok=None if extraction_ok is None else int(extraction_ok),
                error_category=category, decided_by=by, how=how, reason=reason, at=when))
        except IntegrityError:
            raise VerdictError("이미 판정된 응답입니다 · This response is settled already") from None

    def human_verdict(self, task_id: int) -> HumanVerdict | None:
        """The settled verdict as the run records it."""
        settled = result(self.engine, task_id)
        if settled is None:
            return None
        task = get_task(self.engine, task_id)
        reviewers = [vote.as_reviewer() for vote in votes(self.engine, task_id)]
        return HumanVerdict(item_id=task.item_id, content_hash=task.content_hash, response_sha=task.response_sha,
                            verdict=settled.verdict,  # type: ignore[arg-type]
                            extraction_ok=settled.extraction_ok, error_category=settled.error_category,
                            by=settled.by, how=settled.how,  # type: ignore[arg-type]
                            reason=settled.reason, at=settled.at, reviewers=reviewers, before=task.score,
                            answer_format=task.answer_format, external=task.external)

    def apply(self, task_id: int) -> str:
        """Apply the task's settled verdict to its run (idempotent); what became of it."""
        verdict = self.human_verdict(task_id)
        if verdict is None:
            raise VerdictError("not settled yet: nothing to apply")
        run_dir = self.workspace.runs_dir / get_task(self.engine, task_id).run_id
        applied = apply_verdict(run_dir, verdict) if (run_dir / "manifest.json").is_file() else "no run"
        with write_connection(self.engine) as conn, conn.begin():
            conn.execute(update(verdict_results).where(verdict_results.c.task_id == task_id).values(applied=applied))
        return applied

    def apply_all(self, run_id: str | None = None) -> Counter[str]:
        """Apply every settled verdict (of one run) again: what became of each."""
        statement = select(verdict_results.c.task_id).join(verdict_tasks, verdict_tasks.c.id == verdict_results.c.task_id)
        if run_id is not None:
            statement = statement.where(verdict_tasks.c.run_id == run_id)
        with self.engine.connect() as conn:
            ids = list(conn.execute(statement.order_by(verdict_results.c.task_id)).scalars())
        return Counter(self.apply(task_id) for task_id in ids)

    def settled_verdicts(self) -> list[HumanVerdict]:
        with self.engine.connect() as conn:
            ids = list(conn.execute(select(verdict_results.c.task_id).order_by(verdict_results.c.task_id)).scalars())
        return [v for v in (self.human_verdict(task_id) for task_id in ids) if v is not None]

    def responses_per_format(self) -> dict[str, tuple[int, int]]:
        """Format → (responses, judged) over the loaded runs."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(verdict_runs.c.answer_format, func.sum(verdict_runs.c.responses),
                                       func.sum(verdict_runs.c.judged)).group_by(verdict_runs.c.answer_format)).all()
        return {fmt: (int(responses), int(judged)) for fmt, responses, judged in rows}


def ratings(engine: Engine) -> dict[str, dict[str, str]]:
    """Each reviewer's verdict per overlapped task: {task key: {user: verdict}} (for the reviewers' κ)."""
    with engine.connect() as conn:
        rows = conn.execute(select(verdict_votes.c.task_id, verdict_votes.c.user, verdict_votes.c.verdict).where(
            verdict_votes.c.outcome.in_((AGREED, DISPUTED, ADJUDICATED))).order_by(verdict_votes.c.id)).all()
    found: dict[str, dict[str, str]] = {}
    for task_id, user, verdict in rows:
        found.setdefault(task_key(task_id), {})[user] = verdict
    return found


def progress(engine: Engine, user: str) -> tuple[int, int, int]:
    """(tasks, settled, decided by `user`)."""
    with engine.connect() as conn:
        total = conn.execute(select(func.count()).select_from(verdict_tasks)).scalar_one()
        settled = conn.execute(select(func.count()).select_from(verdict_results)).scalar_one()
        mine = conn.execute(select(func.count(func.distinct(reviews.c.item_id))).where(
            reviews.c.queue == QUEUE, reviews.c.user == user)).scalar_one()
    return total, settled, mine


def verdict_label(verdict: str | None) -> str:
    return VERDICT_LABELS.get(verdict or "", verdict or "—")
