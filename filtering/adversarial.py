"""Adversarial filtering and hard subsets over a solve matrix, and the runs that fill it.

KMMMU's rule: drop every item any baseline model answers correctly; the hard subset is the
items every stronger model misses. Both are the same decision over a set of models:

- removed: some model solved it (any of its attempts correct);
- survivor: every model that could be asked missed it (all attempts wrong);
- undetermined: otherwise — an unparseable, error or undecided outcome (the last waits for a
  judge or a person: `run --judge` or `runs judge` decides it), or a missing attempt, is never
  taken as a miss, so such items are listed instead of silently kept or removed.

`--sequential` asks each next model only about the items still in play (survivors and
undetermined), which is cheaper and, because responses are cached by request, gives the
same result as asking every model about everything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from curation.core.query import in_play
from curation.core.store import ItemQuery
from curation.core.workspace import Workspace
from evaluation.datasets import current_hashes
from evaluation.filter_records import FilterRecord, save_filter_record
from evaluation.item_facets import FacetReader
from evaluation.runlog import now_iso
from filtering.matrix import SolveMatrix, answer_runs, build_matrix

if TYPE_CHECKING:
    from evaluation.prompts import Variant

FilterKind = Literal["adversarial", "hard"]  # FilterRecord.kind


@dataclass
class FilterDecision:
    removed: dict[str, list[str]] = field(default_factory=dict)  # item -> models that solved it
    survivors: list[str] = field(default_factory=list)
    undetermined: dict[str, list[str]] = field(default_factory=dict)  # item -> why


def decide(matrix: SolveMatrix, models: list[str], item_ids: list[str], attempts: int = 1) -> FilterDecision:
    items = sorted(item_ids)
    table = matrix.verdicts(models, items, attempts)
    solved = table.solved & table.asked
    undetermined = table.asked & ~table.solved & ~table.missed
    removed_rows = np.asarray(solved.any(axis=1))
    unasked_rows = ~np.asarray(table.asked.any(axis=1))
    undetermined_rows = ~removed_rows & ~unasked_rows & np.asarray(undetermined.any(axis=1))
    decision = FilterDecision()
    outcomes = matrix.outcomes() if undetermined_rows.any() else {}
    for row, item_id in enumerate(items):
        if removed_rows[row]:
            decision.removed[item_id] = [models[col] for col in np.flatnonzero(solved[row])]
        elif unasked_rows[row]:
            decision.undetermined[item_id] = ["no listed model could be asked this item"]
        elif undetermined_rows[row]:
            decision.undetermined[item_id] = [_undetermined_reason(models[col], outcomes.get((item_id, models[col]), []),
                                                                   attempts)
                                              for col in np.flatnonzero(undetermined[row])]
        else:
            decision.survivors.append(item_id)
    return decision


def _undetermined_reason(model: str, seen: list[str], attempts: int) -> str:
    detail = ", ".join(seen) if seen else "not answered"
    return f"{model}: {detail} ({len(seen)}/{attempts} attempts)"


@dataclass
class FilterPlan:
    specs: list  # evaluation.models.ModelSpec, one per model
    prompt: str = "standard"
    variant: Variant = "implicit"
    attempts: int = 1
    sequential: bool = False
    query: ItemQuery = field(default_factory=ItemQuery)
    concurrency: int = 16
    runs: list[Path] = field(default_factory=list)  # runs taken as they are (e.g. imported): their models are not asked


def run_filter(ws: Workspace, plan: FilterPlan, on_model: Callable[[str, int], None] | None = None
               ) -> tuple[FilterDecision, SolveMatrix, list[str], list[str]]:
    """Ask the models (attempt k uses seed + k), then decide, with the plan's existing runs (read
    first: a sequential filter asks the models only about what those runs left). Returns the
    decision, the matrix of these runs, the model labels in order, and the pool's item ids."""
    from evaluation.runner import RunRequest, run_model, store_dataset
    from evaluation.sender import SenderSettings

    pool = ws.store.ids(in_play(plan.query))
    reader = FacetReader()
    whole_pool = store_dataset(ws, plan.query)  # one dataset for every model: the pool is read once
    remaining = list(pool)
    run_dirs: list[Path] = list(plan.runs)
    labels: list[str] = []
    if plan.runs:
        given = build_matrix(run_dirs, ws, reader)
        labels += list(given.models)
        if plan.sequential:
            decided = decide(given, labels, remaining, plan.attempts)
            remaining = [item for item in remaining if item not in decided.removed]
    for spec in plan.specs:
        if on_model is not None:
            on_model(spec.name, len(remaining))
        model_runs = []
        for attempt in range(plan.attempts):
            seeded = spec
            if attempt and spec.decoding.seed is not None:
                seeded = spec.model_copy(update={"decoding": spec.decoding.model_copy(
                    update={"seed": spec.decoding.seed + attempt})})
            dataset = store_dataset(ws, ItemQuery(ids=remaining)) if plan.sequential else whole_pool
            request = RunRequest(seeded, plan.prompt, plan.variant, dataset,
                                 retry_errors=True,
                                 settings=SenderSettings(concurrency=plan.concurrency, timeout_s=spec.timeout_s,
                                                           max_retries=spec.max_retries))
            if not remaining:
                break
            summary = run_model(ws, request)
            if summary.counts.get("error"):
                summary = run_model(ws, request)  # errors are asked once more before anything is decided
            model_runs.append(summary.run_dir)
        run_dirs += model_runs
        matrix = build_matrix(model_runs, ws, reader) if model_runs else SolveMatrix()
        labels += [label for label in matrix.models if label not in labels]
        if plan.sequential and model_runs:
            decided = decide(matrix, list(matrix.models), remaining, plan.attempts)
            remaining = [item for item in remaining if item not in decided.removed]
    matrix = build_matrix(run_dirs, ws, reader)
    return decide(matrix, labels, pool, plan.attempts), matrix, labels, pool


def matrix_from_workspace(ws: Workspace, run_ids: list[str] | None = None) -> SolveMatrix:
    return build_matrix(answer_runs(ws.runs_dir, run_ids), ws)


def filter_and_record(ws: Workspace, plan: FilterPlan, kind: FilterKind,
                      on_model: Callable[[str, int], None] | None = None) -> tuple[FilterRecord, Path]:
    """Run the filter and save its record, with the content hash each pool item was decided on."""
    decision, matrix, labels, pool = run_filter(ws, plan, on_model)
    record = FilterRecord(kind=kind, created_at=now_iso(), models=[{"label": label, **matrix.models[label]}
                                                                   for label in labels],
                          attempts=plan.attempts, sequential=plan.sequential, pool=pool, removed=decision.removed,
                          survivors=decision.survivors, undetermined=decision.undetermined,
                          content_hashes=pool_hashes(ws, pool, plan.variant), stale_skipped=matrix.stale_skipped)
    return record, save_filter_record(record, ws.root)


def pool_hashes(ws: Workspace, pool: list[str], variant: str) -> dict[str, str]:
    """The content hash of every pool item now: what the filter's decision is about."""
    if variant == "implicit":
        return ws.store.hashes(ItemQuery(ids=pool))
    return current_hashes((stored.item for stored in ws.store.get_many(pool).values()), variant)
