"""The demo's filtering stages: adversarial filtering of the sample with the option-only
baselines (then the packaged local model on the survivors, when its extra is installed), and
the distribution-shift report."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime

from benchsmith.demo_evaluate import DEMO_MODELS, LOCAL_MODEL, local_model_available
from curation.workspace import Workspace
from evaluation.models import resolve_model
from filtering.adversarial import FilterPlan, run_filter
from filtering.embeddings import EmbeddingCache, resolve_embedder
from filtering.record import FilterRecord, latest_record, now, save_record
from filtering.shift import analyze_shift


def filter_sample(workspace: Workspace) -> str:
    specs = [resolve_model(spec) for spec in DEMO_MODELS]
    if local_model_available():
        specs.append(resolve_model(LOCAL_MODEL))
    decision, matrix, labels, pool = run_filter(workspace, FilterPlan(specs, sequential=True, concurrency=4))
    record = FilterRecord("adversarial", now(), [{"label": label, **matrix.models[label]} for label in labels], 1,
                          True, pool, decision.removed, decision.survivors, decision.undetermined)
    path = save_record(record, workspace.root)
    return (f"{len(pool)} items, {len(labels)} models (sequential): {len(decision.removed)} solved and removed, "
            f"{len(decision.survivors)} missed by all (hard), {len(decision.undetermined)} undetermined; {path.name}")


def shift_report(workspace: Workspace) -> str:
    found = latest_record(workspace.root)
    name, embed = resolve_embedder("auto")
    cache = EmbeddingCache(workspace.root / "filtering" / "embeddings.db")
    out_dir = workspace.root / "filtering" / f"shift-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}"
    items = [stored.item for stored in workspace.store.iter_items()]
    report = analyze_shift(items, set(found[1].survivors) if found else None, name,
                           lambda texts: cache.embed(name, embed, texts), out_dir)
    cache.close()
    (out_dir / "shift.json").write_text(json.dumps(asdict(report), ensure_ascii=False, indent=2), encoding="utf-8")
    kl = ", ".join(f"KL({k}) {v:.3f}" for k, v in report.kl.items())
    notes = "".join(f" ({note})" for note in report.notes if note.startswith("plots skipped"))
    return f"{name} embeddings, {report.projection.split(' (')[0]}: {kl}; {out_dir / 'shift.json'}{notes}"
