"""Figures for the stats tab: progress per user and queue, and agreement on expert scores
(per axis: Krippendorff's alpha interval and ordinal, ICC(2,1)) among experts, and among
experts plus the LLM judge when judge scores were imported; agreement of the reviewers of
overlapped items on their decisions (item queue) and Korea flags (Cohen's κ for two raters,
Fleiss' κ for more, Krippendorff's α nominal); and the judge's meta-evaluation (judge vs each
expert and the expert mean, item and model level)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from annotator.review import adjudication, queues, scoring
from annotator.review.agreement import cohen_kappa, fleiss_kappa, icc, krippendorff_alpha
from evaluation.judge_agreement import JudgeAgreement, ScoreSheet, judge_agreement


@dataclass(frozen=True)
class AgreementRow:
    raters: str
    axis: str
    alpha_interval: float
    alpha_ordinal: float
    icc_2_1: float
    units: int


@dataclass(frozen=True)
class DecisionAgreementRow:
    what: str  # the reviewers' item decisions, or their Korea flags
    raters: int
    kappa_kind: str  # Cohen (the same two raters on every item) or Fleiss
    kappa: float
    alpha_nominal: float
    items: int  # items with two or more reviewers' decisions
    pairs: int  # reviewer pairs over those items


DECISION_AGREEMENT = (("item", "item decisions"), ("korea", "Korea flags"), ("verdicts", "response verdicts"))
VERDICTS_WHAT = "response verdicts"


def decision_agreement_rows(engine: Engine) -> list[DecisionAgreementRow]:
    from annotator.review import verdicts

    rows = []
    for queue, what in DECISION_AGREEMENT:
        rated = verdicts.ratings(engine) if queue == verdicts.QUEUE else adjudication.ratings(engine, queue)
        units = {item: found for item, found in rated.items() if len(found) >= 2}
        if not units:
            continue
        raters = sorted({user for found in units.values() for user in found})
        pairs = sum(len(found) * (len(found) - 1) // 2 for found in units.values())
        if len(raters) == 2:
            kind, kappa = "Cohen", cohen_kappa(units, *raters)
        else:
            kind, kappa = "Fleiss", fleiss_kappa(units)
        categories = sorted({decision for found in units.values() for decision in found.values()})
        matrix = [[float(categories.index(units[item][user])) if user in units[item] else math.nan for item in units]
                  for user in raters]
        rows.append(DecisionAgreementRow(what, len(raters), kind, kappa, krippendorff_alpha(matrix, "nominal"),
                                         len(units), pairs))
    return rows


def progress_rows(engine: Engine) -> list[dict[str, Any]]:
    rows = queues.progress(engine)
    for expert, n in scoring.score_counts(engine).items():
        rows.append({"user": expert, "queue": "score", "decided": n, "assigned": None, "assigned_done": None})
    return sorted(rows, key=lambda row: (row["user"], row["queue"]))


def _pairable_units(matrix: list[list[float]]) -> int:
    return sum(1 for unit in zip(*matrix, strict=True) if sum(not math.isnan(v) for v in unit) >= 2) if matrix else 0


def agreement_rows(engine: Engine) -> list[AgreementRow]:
    groups = [("experts", False)]
    if scoring.has_judge_scores(engine):
        groups.append(("experts + judge", True))
    rows = []
    for label, with_judge in groups:
        for axis, matrix in scoring.score_matrices(engine, include_judge=with_judge).items():
            if len(matrix) < 2:
                continue
            rows.append(AgreementRow(label, axis, krippendorff_alpha(matrix, "interval"),
                                     krippendorff_alpha(matrix, "ordinal"), icc(matrix, "2,1"),
                                     _pairable_units(matrix)))
    return rows


def score_sheet(engine: Engine) -> ScoreSheet:
    """Expert and imported judge scores per (item, model) of the scoring tasks."""
    from sqlalchemy import select

    from annotator.review.tables import expert_scores, judge_scores

    task_units = {task.id: (task.item_id, task.model) for task in scoring.tasks(engine)}
    units = set(task_units.values())
    sheet = ScoreSheet()
    with engine.connect() as conn:
        for row in conn.execute(select(expert_scores)):
            if row.task_id in task_units:
                sheet.experts.setdefault(row.expert, {})[task_units[row.task_id]] = {
                    axis: float(getattr(row, axis)) for axis in scoring.AXES}
        for row in conn.execute(select(judge_scores)):
            if (row.item_id, row.model) in units:
                sheet.judge[(row.item_id, row.model)] = {axis: float(getattr(row, axis)) for axis in scoring.AXES}
    return sheet


def judge_meta_evaluation(engine: Engine, *, resamples: int = 500) -> JudgeAgreement | None:
    """None until there are both expert scores and imported judge scores."""
    sheet = score_sheet(engine)
    if not sheet.experts or not sheet.judge:
        return None
    return judge_agreement(sheet, resamples=resamples)
