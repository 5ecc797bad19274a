"""Per-model metrics (models × metrics) from this workspace's runs, on comparable denominators.

A row is a model; a column is a metric: accuracy per subset (`acc:overall`, `acc:multimodal`,
`acc:part:…`, prefixed by the prompt when runs used several) and the judge's reasoning score
per axis (`reasoning:total`, `reasoning:depth`, …). External tables (other benchmarks,
leaderboards) add columns of the same shape.

Same items for every model: a subset's accuracy is computed, for every model compared, on the
items of that subset that *every* model sent any of them answered, and answered decidedly (an
undecided answer waits for a judge or a person: `metrics`). An item a model could not be
sent (an image item for a text-only model) is excluded for all, and counted in the notes; a
model sent none of a subset's items has no value there (it is not compared on that subset).
With `same_items=False` each model keeps its own answered items and the notes say the figures
are on different sets. Reasoning scores use the items with a valid verdict for every model.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evaluation.metrics import JUDGE_AXES, RunData, subset_order
from evaluation.records import JudgeScores, JudgeVerdict, is_current, read_jsonl_records


@dataclass
class MetricTable:
    """metric → model → value; a missing value is absent (never 0)."""

    columns: dict[str, dict[str, float]] = field(default_factory=dict)
    items: dict[str, int] = field(default_factory=dict)  # metric → items behind each model's value
    sources: dict[str, str] = field(default_factory=dict)  # metric → where it came from
    notes: list[str] = field(default_factory=list)
    listed: set[str] = field(default_factory=set)  # models a source names even where it has no value

    @property
    def models(self) -> list[str]:
        return sorted(self.listed | {model for values in self.columns.values() for model in values})

    def column(self, metric: str) -> dict[str, float]:
        if metric not in self.columns:
            raise KeyError(metric)
        return self.columns[metric]

    def paired(self, a: str, b: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The models with both metrics, and their values."""
        left, right = self.column(a), self.column(b)
        models = sorted(set(left) & set(right))
        return models, np.array([left[m] for m in models], dtype=float), np.array([right[m] for m in models], dtype=float)


def configuration(run: RunData) -> str:
    """The prompt, and the variant when it is not the plain one (probes, explicit stems)."""
    variant = run.manifest.variant or "implicit"
    return run.manifest.prompt.name + ("" if variant == "implicit" else f"/{variant}")


def latest_per_model(runs: list[RunData]) -> tuple[dict[tuple[str, str], RunData], list[str]]:
    """(model, configuration) → its newest run (by `created_at`); notes name the runs left out."""
    chosen: dict[tuple[str, str], RunData] = {}
    notes = []
    for run in sorted(runs, key=lambda r: (r.manifest.created_at, r.run_id)):
        key = (run.model_name, configuration(run))
        if key in chosen:
            notes.append(f"{key[0]} ({key[1]}): run {chosen[key].run_id} left out for the newer {run.run_id}")
        chosen[key] = run
    return chosen, notes


def _item_subsets(run: RunData, item_id: str) -> list[str]:
    return run.facets.subsets(item_id, run.named_subsets)


@dataclass
class SubsetItems:
    """The items each compared model is scored on in one subset."""

    subset: str
    items: dict[str, set[str]]  # model → item ids (the same set for all when same_items)
    not_sent_to: list[str]  # models sent none of the subset's items: not compared here
    note: str | None = None


def comparable_items(runs: dict[str, RunData], same_items: bool = True) -> list[SubsetItems]:
    """Per subset (the hard one from the filtering record, as the run reads it), the items each
    model is scored on."""
    answered: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))  # subset → model → items
    unsent: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for model, run in runs.items():
        for item_id in run.decided_ids.to_pylist():
            for subset in _item_subsets(run, item_id):
                answered[subset][model].add(item_id)
        for item_id in run.skipped:
            for subset in _item_subsets(run, item_id):
                unsent[subset][model].add(item_id)
    result = []
    for subset in subset_order(set(answered) | set(unsent)):
        compared = sorted(answered[subset])  # models sent at least one item of the subset
        left_out = sorted(set(runs) - set(compared))
        note = None
        if not compared:
            result.append(SubsetItems(subset, {}, left_out, "not sent to any model"))
            continue
        if same_items:
            common = set.intersection(*(answered[subset][m] for m in compared))
            union = set.union(*(answered[subset][m] | unsent[subset][m] for m in compared))
            if union - common:
                not_sent = set.union(*(unsent[subset][m] for m in compared)) & (union - common)
                note = (f"{len(common)} items for every model; {len(union - common)} excluded for all "
                        f"({len(not_sent)} not sent to some model, {len(union - common - not_sent)} not answered, or "
                        "undecided, by some)")
            sets = {m: common for m in compared}
        else:
            sets = {m: answered[subset][m] for m in compared}
            if len({frozenset(s) for s in sets.values()}) > 1:
                note = (f"on different item sets per model (n from {min(map(len, sets.values()))} to "
                        f"{max(map(len, sets.values()))})")
        result.append(SubsetItems(subset, sets, left_out, note))
    return result


def _accuracy_columns(runs: dict[str, RunData], prefix: str, same_items: bool, table: MetricTable) -> None:
    for chosen in comparable_items(runs, same_items):
        metric = f"{prefix}{chosen.subset}"
        if chosen.note:
            table.notes.append(f"{metric}: {chosen.note}")
        if chosen.not_sent_to:
            table.notes.append(f"{metric}: not sent to {', '.join(chosen.not_sent_to)} (no value for them)")
        values = {m: float(np.mean([runs[m].outcome_of[i] == "correct" for i in items]))
                  for m, items in chosen.items.items() if items}
        if values:
            table.columns[metric] = values
            table.items[metric] = min(len(chosen.items[m]) for m in values)
            table.sources[metric] = "runs"


def reasoning_columns(runs: dict[str, RunData], prefix: str, table: MetricTable) -> None:
    verdicts: dict[str, dict[str, dict[str, JudgeScores]]] = defaultdict(dict)  # judge → model → item → scores
    for model, run in runs.items():
        for path in sorted(run.run_dir.glob("judge-*.jsonl")):
            verdicts[path.stem.removeprefix("judge-")][model] = current_scores(run, path)
    for judge, per_model in sorted(verdicts.items()):
        judge_prefix = prefix if len(verdicts) == 1 else f"{prefix}[{judge}]"
        common = set.intersection(*(set(v) for v in per_model.values())) if per_model else set()
        if not common:
            table.notes.append(f"reasoning ({judge}): no item has a valid verdict for every model")
            continue
        dropped = len(set.union(*(set(v) for v in per_model.values())) - common)
        if dropped:
            table.notes.append(f"reasoning ({judge}): {len(common)} items with a valid verdict for every model; "
                               f"{dropped} left out for all (a verdict missing for some model)")
        for axis in ("total", *JUDGE_AXES):
            metric = f"{judge_prefix}:{axis}"
            table.columns[metric] = {
                model: float(np.mean([v.total if axis == "total" else getattr(v, axis) for i, v in items.items()
                                      if i in common])) for model, items in per_model.items()}
            table.items[metric] = len(common)
            table.sources[metric] = f"judge {judge}"


def current_scores(run: RunData, path: Path) -> dict[str, JudgeScores]:
    """item → the judge's scores, for valid verdicts on the item's current content (missing and stale
    verdicts are left out, never scored)."""
    return {item_id: verdict.scores for item_id, verdict in read_jsonl_records(path, JudgeVerdict).items()
            if verdict.status == "ok" and verdict.scores is not None and is_current(verdict, run.hashes)
            and item_id in run.answered}


def metrics_from_runs(runs: list[RunData], *, same_items: bool = True) -> MetricTable:
    """Accuracy per subset (and reasoning per axis from judge logs) for each model."""
    table = MetricTable()
    chosen, table.notes = latest_per_model(runs)
    table.notes = [note for run in chosen.values() for note in run.notes] + table.notes  # stale records skipped
    configurations = sorted({config for _, config in chosen})
    for config in configurations:
        by_model = {model: run for (model, c), run in chosen.items() if c == config}
        tag = "" if len(configurations) == 1 else f"[{config}]"
        _accuracy_columns(by_model, f"acc{tag}:", same_items, table)
        reasoning_columns(by_model, f"reasoning{tag}", table)
    return table
