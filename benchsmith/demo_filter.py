"""The demo's filtering stages: adversarial filtering of the sample with the option-only
baselines (then the packaged local model on the survivors, when its extra is installed), and
the distribution-shift report."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime

from benchsmith.demo_evaluate import DEMO_MODELS, LOCAL_MODEL, local_model_available
from curation.core.workspace import Workspace
from evaluation.filter_records import latest_filter_record
from evaluation.models import resolve_model
from filtering.adversarial import FilterPlan, filter_and_record
from filtering.embeddings import EmbeddingCache, resolve_embedder
from filtering.shift import analyze_shift


def filter_sample(workspace: Workspace) -> str:
    specs = [resolve_model(spec) for spec in DEMO_MODELS]
    if local_model_available():
        specs.append(resolve_model(LOCAL_MODEL))
    record, path = filter_and_record(workspace, FilterPlan(specs, sequential=True, concurrency=4), "adversarial")
    return (f"{len(record.pool)} items, {len(record.models)} models (sequential): {len(record.removed)} solved and "
            f"removed, {len(record.survivors)} missed by all (hard), {len(record.undetermined)} undetermined; {path.name}")


def shift_report(workspace: Workspace) -> str:
    found = latest_filter_record(workspace.root)
    name, embed = resolve_embedder("auto")
    cache = EmbeddingCache(workspace.root / "filtering" / "embeddings.db")
    out_dir = workspace.root / "filtering" / f"shift-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}"
    items = [stored.item for stored in workspace.store.iter_items()]
    hard = set(found[1].hard_subset(workspace.store.hashes()).ids) if found else None
    report = analyze_shift(items, hard, name,
                           lambda texts: cache.embed(name, embed, texts), out_dir)
    cache.close()
    (out_dir / "shift.json").write_text(json.dumps(asdict(report), ensure_ascii=False, indent=2), encoding="utf-8")
    kl = ", ".join(f"KL({k}) {v:.3f}" for k, v in report.kl.items())
    notes = "".join(f" ({note})" for note in report.notes if note.startswith("plots skipped"))
    return f"{name} embeddings, {report.projection.split(' (')[0]}: {kl}; {out_dir / 'shift.json'}{notes}"


def item_analysis(workspace: Workspace) -> str:
    """`analyze items` and `analyze suspects` over the demo's runs; suspects.json gives the
    annotator's Suspects queue its work."""
    from evaluation.filter_records import ITEM_ANALYSIS_FOLDER
    from filtering.irt.analysis import analyse, to_record
    from filtering.irt.paper import too_few_models
    from filtering.irt.report import write_item_analysis, write_suspects
    from filtering.irt.sources import from_workspace
    from filtering.irt.suspects import find_suspects

    folder = workspace.root / ITEM_ANALYSIS_FOLDER
    analysis = analyse(from_workspace(workspace))
    record = to_record(analysis)
    write_item_analysis(record, folder)
    suspects = find_suspects(analysis)
    write_suspects(suspects, analysis, folder)
    top = ", ".join(f"{s.item_id} ({s.score:.2f})" for s in suspects[:3]) or "none"
    caveat = too_few_models(len(record.models))
    return (f"{len(record.items)} items × {len(record.models)} models (2PL): {len(suspects)} suspects, top {top}; "
            f"{folder / 'suspects.json'}" + (f". {caveat}" if caveat else ""))
