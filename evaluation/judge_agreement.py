"""Judge meta-evaluation: does the LLM judge agree with the experts?

Item level (a unit is one model's rationale for one item): Krippendorff's α (interval) and
ICC(2,1) between the judge and each expert, and between the judge and the expert mean, per
axis and for the total. Model level: Kendall τb between each model's judge-mean and
expert-mean score, with a bootstrap CI over models. A judge verdict that is missing is missing
(NaN, left out of every figure), never 0 or −1; n says how many units or models were used.

Expert scores come from the annotator (its stats tab) or from a JSONL export
(`benchsmith annotate export-scores`); judge scores from the runs' `judge-*.jsonl` logs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from curation.core.errors import BenchsmithError
from curation.jsonl import read_jsonl
from evaluation.agreement import icc, krippendorff_alpha
from evaluation.correlation import correlate_pair
from evaluation.text_tables import TextTable

AXES = ("factuality", "logic", "depth", "clarity")
AXIS_NAMES = {"logical_soundness": "logic"}  # the judge's name for the annotator's axis
Unit = tuple[str, str]  # (item id, model)


@dataclass
class ScoreSheet:
    """Per axis: unit → score, for each expert and for the judge (absent = missing)."""

    experts: dict[str, dict[Unit, dict[str, float]]] = field(default_factory=dict)
    judge: dict[Unit, dict[str, float]] = field(default_factory=dict)

    def units(self) -> list[Unit]:
        return sorted(set(self.judge).union(*(set(s) for s in self.experts.values())))


def _axis_value(scores: dict[str, float] | None, axis: str) -> float:
    if not scores:
        return math.nan
    if axis == "total":
        values = [scores.get(a) for a in AXES]
        return math.nan if any(v is None for v in values) else float(sum(values))  # type: ignore[arg-type]
    value = scores.get(axis)
    return math.nan if value is None else float(value)


@dataclass(frozen=True)
class ItemAgreement:
    axis: str
    against: str  # an expert's name, or "expert mean"
    alpha_interval: float
    icc_2_1: float
    units: int  # units with a judge score and this comparison's score


@dataclass(frozen=True)
class ModelAgreement:
    axis: str
    tau_b: float
    ci: tuple[float, float] | None
    models: int


@dataclass
class JudgeAgreement:
    items: list[ItemAgreement]
    models: list[ModelAgreement]
    units: int
    judge_missing: int  # units an expert scored that have no judge verdict


def _pair(judge: np.ndarray, other: np.ndarray, axis: str, against: str) -> ItemAgreement:
    both = ~np.isnan(judge) & ~np.isnan(other)
    matrix = np.vstack([judge, other])
    return ItemAgreement(axis, against, krippendorff_alpha(matrix, "interval"), icc(matrix, "2,1"), int(both.sum()))


def judge_agreement(sheet: ScoreSheet, axes: Iterable[str] = ("total", *AXES), *, seed: int = 0,
                    resamples: int = 1000) -> JudgeAgreement:
    units = sheet.units()
    experts = sorted(sheet.experts)
    items: list[ItemAgreement] = []
    models: list[ModelAgreement] = []
    for axis in axes:
        judge = np.array([_axis_value(sheet.judge.get(u), axis) for u in units])
        rows = np.array([[_axis_value(sheet.experts[e].get(u), axis) for u in units] for e in experts]).reshape(
            len(experts), len(units))
        for name, row in zip(experts, rows, strict=True):
            items.append(_pair(judge, row, axis, name))
        with np.errstate(all="ignore"):
            expert_mean = np.array([np.nan if np.isnan(c).all() else np.nanmean(c) for c in rows.T])
        items.append(_pair(judge, expert_mean, axis, "expert mean"))
        models.append(_model_level(units, judge, expert_mean, axis, seed, resamples))
    scored = {u for s in sheet.experts.values() for u in s}
    return JudgeAgreement(items, models, len(units), len(scored - set(sheet.judge)))


def _model_level(units: list[Unit], judge: np.ndarray, expert_mean: np.ndarray, axis: str, seed: int,
                 resamples: int) -> ModelAgreement:
    """Per model, the judge's and the experts' mean over the units both scored; τb across models."""
    both = ~np.isnan(judge) & ~np.isnan(expert_mean)
    by_model: dict[str, list[int]] = {}
    for index, (_, model) in enumerate(units):
        if both[index]:
            by_model.setdefault(model, []).append(index)
    names = sorted(by_model)
    judge_means = np.array([judge[by_model[m]].mean() for m in names])
    expert_means = np.array([expert_mean[by_model[m]].mean() for m in names])
    result = correlate_pair(judge_means, expert_means, seed=seed, resamples=resamples)
    return ModelAgreement(axis, result.tau_b, result.tau_ci, len(names))


def _scores(record: dict[str, Any]) -> dict[str, float]:
    values = {}
    for key, value in record.items():
        axis = AXIS_NAMES.get(key, key)
        if axis in AXES and isinstance(value, int | float) and not isinstance(value, bool):
            values[axis] = float(value)
    return values


def read_expert_scores(path: Path) -> dict[str, dict[Unit, dict[str, float]]]:
    """JSONL lines {"item_id", "model", "expert", "factuality", "logic", "depth", "clarity"}."""
    records, errors = read_jsonl(path, ("item_id", "model", "expert"))
    if errors:
        raise BenchsmithError(errors[0] + (f" (and {len(errors) - 1} more bad lines)" if len(errors) > 1 else ""))
    experts: dict[str, dict[Unit, dict[str, float]]] = {}
    for record in records:
        experts.setdefault(str(record["expert"]), {})[(str(record["item_id"]), str(record["model"]))] = _scores(record)
    return experts


def judge_scores_from_logs(runs: Iterable[Any], judge: str | None = None) -> dict[Unit, dict[str, float]]:
    """(item, model) → axis scores from the runs' judge logs; missing and stale verdicts stay absent."""
    from evaluation.metrics_table import current_scores

    scores: dict[Unit, dict[str, float]] = {}
    for run in runs:
        for path in sorted(run.run_dir.glob("judge-*.jsonl")):
            if judge is None or path.stem.removeprefix("judge-") == judge:
                scores |= {(item_id, run.model_name): _scores(verdict.model_dump())
                           for item_id, verdict in current_scores(run, path).items()}
    return scores


def _num(value: float) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.3f}"


def agreement_tables(result: JudgeAgreement) -> tuple[TextTable, TextTable]:
    """(item level, model level)."""
    items = TextTable(["axis", "judge vs", "α (interval)", "ICC(2,1)", "n units"],
                      [[r.axis, r.against, _num(r.alpha_interval), _num(r.icc_2_1), str(r.units)] for r in result.items],
                      f"Judge vs experts, item level: {result.units} rationales; {result.judge_missing} scored by "
                      "experts have no valid judge verdict (left out, never scored 0).")
    models = TextTable(["axis", "τb", "95% CI", "n models"],
                       [[m.axis, _num(m.tau_b), "—" if m.ci is None else f"[{m.ci[0]:+.2f}, {m.ci[1]:+.2f}]",
                         str(m.models)] for m in result.models],
                       "Judge vs experts, model level: Kendall τb between each model's judge mean and expert mean.")
    return items, models


def agreement_markdown(result: JudgeAgreement) -> str:
    return "\n".join(f"{table.caption}\n\n{table.markdown()}" for table in agreement_tables(result))
