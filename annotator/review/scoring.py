"""Expert scoring of model rationales: tasks, blind order, scores (compare-and-swap), and
judge scores imported for agreement.

A scoring task is one model's rationale for one item from one run. Experts never see the
model nor the task's id: tasks of an item are shown side by side as 응답 A, B, … in a blind order
(blinding.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, and_, func, insert, select, update

from annotator.review import blinding
from annotator.review.tables import expert_scores, judge_scores, now, scoring_tasks, write_connection
from curation.core.errors import BenchsmithError, ConflictError
from evaluation.metrics import RunData
from evaluation.records import JUDGE_AXES, JudgeVerdict

AXES: tuple[str, ...] = ("factuality", "logic", "depth", "clarity")
AXIS_LABELS: dict[str, str] = {
    "factuality": "사실성 · Factuality",
    "logic": "논리적 타당성 · Logical soundness",
    "depth": "깊이 · Depth",
    "clarity": "명료성 · Clarity",
}


# What a 1, 3 and 5 mean on each axis (2 and 4 sit between); shown under each axis in the app
RUBRIC: dict[str, dict[int, str]] = {
    "factuality": {1: "사실 오류가 핵심에 있음 · a central factual error",
                   3: "대체로 맞으나 사소한 오류·모호함 · mostly right, minor errors or vagueness",
                   5: "모든 사실·수치·단위가 정확 · every fact, figure and unit correct"},
    "logic": {1: "결론이 근거에서 나오지 않음 · the conclusion does not follow",
              3: "흐름은 맞으나 단계가 빠짐 · sound overall, steps missing",
              5: "모든 단계가 이어지고 정답으로 귀결 · every step follows, reaching the answer"},
    "depth": {1: "정답만 되풀이 · restates the answer only",
              3: "핵심 원리는 설명, 오답 보기는 다루지 않음 · explains the key principle, not the distractors",
              5: "원리와 오답 이유까지 설명 · principle and why each distractor is wrong"},
    "clarity": {1: "이해하기 어려움 · hard to follow",
                3: "읽을 만하나 장황하거나 어색함 · readable but wordy or awkward",
                5: "간결하고 명확, 용어 정확 · concise, clear, exact terms"},
}


def rubric_text(axis: str) -> str:
    return " · ".join(f"{score}: {text}" for score, text in RUBRIC[axis].items())


class ScoringError(BenchsmithError):
    """Bad scoring input: a score outside 1–5, an unknown task, a malformed JSONL line."""


@dataclass(frozen=True)
class Task:
    id: int
    item_id: str
    model: str
    rationale: str
    run_id: str


@dataclass(frozen=True)
class Score:
    task_id: int
    expert: str
    values: dict[str, int]
    comment: str
    rev: int


@dataclass
class LoadReport:
    added: int = 0
    unchanged: int = 0
    errors: list[str] = field(default_factory=list)


def load_rationales(engine: Engine, tasks_in: Iterable[RationaleTask], known_items: set[str] | None = None) -> LoadReport:
    """Add scoring tasks (one model's rationale for one item of one run); one already loaded is skipped."""
    report = LoadReport(errors=[])
    with write_connection(engine) as conn, conn.begin():
        for task in tasks_in:
            if known_items is not None and task.item_id not in known_items:
                report.errors.append(f"item {task.item_id!r} is not in the store")
                continue
            key = and_(scoring_tasks.c.item_id == task.item_id, scoring_tasks.c.model == task.model,
                       scoring_tasks.c.run_id == task.run_id)
            if conn.execute(select(scoring_tasks.c.id).where(key)).first() is not None:
                report.unchanged += 1
                continue
            conn.execute(insert(scoring_tasks).values(item_id=task.item_id, model=task.model,
                                                      rationale=task.rationale, run_id=task.run_id))
            report.added += 1
    return report


@dataclass(frozen=True)
class RationaleTask:
    item_id: str
    model: str
    rationale: str
    run_id: str


def rationale_tasks(run: RunData) -> list[RationaleTask]:
    """A reasoning run's current rationales as scoring tasks (stale answers are not offered)."""
    return [RationaleTask(item_id, run.model_name, record.rationale.strip(), run.run_id)
            for item_id, record in sorted(run.records.items()) if record.rationale and record.rationale.strip()]


def load_judge(engine: Engine, verdicts: Iterable[JudgeVerdict]) -> LoadReport:
    """Import a judge's verdicts (the records `benchsmith judge` writes), replacing earlier ones per
    (item, model). A missing verdict is reported and stays missing: never a score."""
    report = LoadReport(errors=[])
    with write_connection(engine) as conn, conn.begin():
        for verdict in verdicts:
            if verdict.status != "ok" or verdict.scores is None:
                report.errors.append(f"{verdict.item_id}/{verdict.model}: no valid verdict (missing)")
                continue
            values = {axis: float(getattr(verdict.scores, judge_axis)) for judge_axis, axis in zip(JUDGE_AXES, AXES, strict=True)}
            key = and_(judge_scores.c.item_id == verdict.item_id, judge_scores.c.model == verdict.model)
            if conn.execute(update(judge_scores).where(key).values(**values, loaded_at=now())).rowcount:
                report.unchanged += 1
                continue
            conn.execute(insert(judge_scores).values(item_id=verdict.item_id, model=verdict.model, **values,
                                                     loaded_at=now()))
            report.added += 1
    return report


def tasks(engine: Engine) -> list[Task]:
    with engine.connect() as conn:
        rows = conn.execute(select(scoring_tasks).order_by(scoring_tasks.c.item_id, scoring_tasks.c.id)).all()
    return [Task(r.id, r.item_id, r.model, r.rationale, r.run_id) for r in rows]


def get_task(engine: Engine, task_id: int) -> Task:
    with engine.connect() as conn:
        r = conn.execute(select(scoring_tasks).where(scoring_tasks.c.id == task_id)).first()
    if r is None:
        raise ScoringError(f"no scoring task {task_id}")
    return Task(r.id, r.item_id, r.model, r.rationale, r.run_id)


def blind_order(all_tasks: list[Task], expert: str, secret: bytes) -> list[Task]:
    """Items in id order; within an item the tasks in this expert's blind order (blinding.order_key:
    stable across sessions, different per expert and item, not computable without the secret)."""
    return sorted(all_tasks, key=lambda t: (t.item_id, blinding.order_key(secret, expert, t.item_id, t.id)))


def validate_values(values: dict[str, Any]) -> dict[str, int]:
    checked = {}
    for axis in AXES:
        value: Any = values.get(axis)  # None as well: int() raises TypeError, answered below
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ScoringError(f"{AXIS_LABELS[axis]}: give a score 1–5") from None
        if str(number) != str(value).strip() or not 1 <= number <= 5:
            raise ScoringError(f"{AXIS_LABELS[axis]}: {value!r} is not a score 1–5")
        checked[axis] = number
    return checked


def get_score(engine: Engine, task_id: int, expert: str) -> Score | None:
    with engine.connect() as conn:
        r = conn.execute(select(expert_scores).where(expert_scores.c.task_id == task_id,
                                                     expert_scores.c.expert == expert)).first()
    if r is None:
        return None
    return Score(r.task_id, r.expert, {axis: getattr(r, axis) for axis in AXES}, r.comment or "", r.rev)


def save_score(engine: Engine, task_id: int, expert: str, values: dict[str, Any], comment: str,
               expect_rev: int) -> int:
    """Save an expert's scores made against `expect_rev` (0 = not scored yet); return the new rev.
    A stale `expect_rev` (the same expert saved from another tab) raises ConflictError."""
    checked = validate_values(values)
    get_task(engine, task_id)
    row = {**checked, "comment": comment.strip() or None, "updated_at": now()}
    key = and_(expert_scores.c.task_id == task_id, expert_scores.c.expert == expert)
    with write_connection(engine) as conn, conn.begin():
        current = conn.execute(select(expert_scores.c.rev, expert_scores.c.updated_at).where(key)).first()
        current_rev = current.rev if current else 0
        if current_rev != expect_rev:
            since = [f"rev {current_rev} by {expert} (score, {current.updated_at}): {', '.join(AXES)}"] if current else []
            raise ConflictError(f"task-{task_id}", expect_rev, current_rev, since)
        if current is None:
            conn.execute(insert(expert_scores).values(task_id=task_id, expert=expert, rev=1, **row))
        else:
            conn.execute(update(expert_scores).where(key, expert_scores.c.rev == expect_rev).values(rev=expect_rev + 1, **row))
    return expect_rev + 1


def scored_tasks(engine: Engine, expert: str) -> set[int]:
    with engine.connect() as conn:
        return set(conn.execute(select(expert_scores.c.task_id).where(expert_scores.c.expert == expert)).scalars())


def score_counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        rows = conn.execute(select(expert_scores.c.expert, func.count()).group_by(expert_scores.c.expert)).all()
    return {expert: n for expert, n in rows}


def score_matrices(engine: Engine, include_judge: bool) -> dict[str, list[list[float]]]:
    """Per axis a raters × tasks matrix (NaN = missing); experts by name, then the judge."""
    import math

    all_tasks = tasks(engine)
    with engine.connect() as conn:
        scores = conn.execute(select(expert_scores)).all()
        judged = {(r.item_id, r.model): r for r in conn.execute(select(judge_scores))} if include_judge else {}
    experts = sorted({s.expert for s in scores})
    column = {task.id: position for position, task in enumerate(all_tasks)}
    matrices: dict[str, list[list[float]]] = {}
    for axis in AXES:
        rows = [[math.nan] * len(all_tasks) for _ in experts]
        for s in scores:
            if s.task_id in column:
                rows[experts.index(s.expert)][column[s.task_id]] = float(getattr(s, axis))
        if include_judge:
            rows.append([float(getattr(judged[(t.item_id, t.model)], axis)) if (t.item_id, t.model) in judged
                         else math.nan for t in all_tasks])
        matrices[axis] = rows
    return matrices


def has_judge_scores(engine: Engine) -> bool:
    with engine.connect() as conn:
        return conn.execute(select(judge_scores.c.item_id).limit(1)).first() is not None


def score_table(engine: Engine) -> list[dict[str, Any]]:
    """Per scoring task: the judge's scores and each expert's, side by side (None = missing, never 0)."""
    with engine.connect() as conn:
        scores = conn.execute(select(expert_scores)).all()
        judged = {(r.item_id, r.model): r for r in conn.execute(select(judge_scores))}
    by_task: dict[int, dict[str, dict[str, int]]] = {}
    for s in scores:
        by_task.setdefault(s.task_id, {})[s.expert] = {axis: int(getattr(s, axis)) for axis in AXES}
    table = []
    for task in tasks(engine):
        judge = judged.get((task.item_id, task.model))
        table.append({"task": task.id, "item_id": task.item_id, "model": task.model, "run_id": task.run_id,
                      "judge": {axis: float(getattr(judge, axis)) for axis in AXES} if judge else None,
                      "experts": by_task.get(task.id, {})})
    return table
