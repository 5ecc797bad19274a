"""Figures for the stats tab: progress per user and queue, and agreement on expert scores
(per axis: Krippendorff's alpha interval and ordinal, ICC(2,1)) among experts, and among
experts plus the LLM judge when judge scores were imported."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from annotator import queues, scoring
from annotator.agreement import icc, krippendorff_alpha


@dataclass(frozen=True)
class AgreementRow:
    raters: str
    axis: str
    alpha_interval: float
    alpha_ordinal: float
    icc_2_1: float
    units: int


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
