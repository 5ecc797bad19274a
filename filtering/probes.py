"""Shortcut probes: can an item be answered without its question (options only), or without
its options (question only)? Items solvable from the options alone carry answer artifacts.

Only choice items are probed: an open item (numeric, text, set …) has no options to show alone
or to hide. The probe runs leave them out with the reason (their manifests' `skipped`), and the
result counts them per probe; the option baselines answer choice items only too."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from curation.core.store import ItemQuery
from curation.core.workspace import Workspace

if TYPE_CHECKING:
    from evaluation.prompts import Variant

BASELINES = ("longest", "shortest", "similar", "position-1", "last")


def run_probes(ws: Workspace, specs: list, query: ItemQuery, *, baselines: bool = True,
               concurrency: int = 16) -> dict[str, Any]:
    from evaluation.metrics import load_run
    from evaluation.models import parse_inline_spec
    from evaluation.runner import RunRequest, run_model, store_dataset
    from evaluation.sender import SenderSettings

    runs: list[tuple[str, Any, Variant]] = [(f"{spec.name} options-only", spec, "options_only") for spec in specs]
    runs += [(f"{spec.name} question-only", spec, "question_only") for spec in specs]
    if baselines:
        runs += [(f"baseline:{name}", parse_inline_spec(f"baseline:{name}"), "implicit") for name in BASELINES]
    accuracy: dict[str, dict[str, Any]] = {}
    stale = 0
    solvable: dict[str, list[str]] = {}
    for label, spec, variant in runs:
        settings = SenderSettings(concurrency=concurrency, timeout_s=spec.timeout_s, max_retries=spec.max_retries)
        summary = run_model(ws, RunRequest(spec, "standard", variant, store_dataset(ws, query), settings=settings))
        run = load_run(summary.run_dir, ws)
        stale += run.stale
        correct = sorted(item for item, outcome in run.outcome_of.items() if outcome == "correct")
        undecided = sum(outcome == "undecided" for outcome in run.outcome_of.values())
        accuracy[label] = {"n": len(run.item_ids) - undecided, "correct": len(correct), "undecided": undecided,
                           "run_id": summary.run_id, "skipped": dict(sorted(Counter(summary.skipped.values()).items()))}
        if variant != "question_only":
            for item in correct:
                solvable.setdefault(item, []).append(label)
    result: dict[str, Any] = {"accuracy": accuracy, "solvable_without_question": solvable, "stale_skipped": stale}
    folder = ws.root / "filtering"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"probes-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    return result | {"path": str(path)}
