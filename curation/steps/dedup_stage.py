"""The dedup stage over a workspace: find near-duplicates, exclude all but one per cluster,
queue inverted-logic pairs for review, and keep a JSON report of what was merged and why."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from curation.item import Item
from curation.revise import StageReport, active_items, revise, with_review_reason
from curation.steps.antonyms import AntonymLexicon
from curation.steps.dedup import DedupConfig, DedupResult, dedup_items
from curation.store import Store


def run_dedup(
    store: Store,
    config: DedupConfig,
    *,
    author: str,
    antonyms: AntonymLexicon | None = None,
    dry_run: bool = False,
    report_dir: Path | None = None,
) -> tuple[DedupResult, StageReport, Path | None]:
    stored = active_items(store)
    result = dedup_items([s.item for s in stored], config, antonyms)
    inverted: dict[str, list[str]] = {}
    for pair in result.pairs:
        if pair.verdict == "inverted":
            swaps = ", ".join(f"{a}/{b}" for a, b in pair.swaps)
            for this, other in ((pair.first, pair.second), (pair.second, pair.first)):
                inverted.setdefault(this, []).append(
                    f"inverted-logic pair with {other} ({swaps}; ratio {pair.ratio:.2f}): check before removing")

    def change(item: Item) -> tuple[Item, str] | None:
        if item.id in result.excluded:
            kept, cluster, ratio = result.excluded[item.id]
            reason = f"near-duplicate of {kept} (cluster {cluster}, ratio {ratio:.3f}, {config.method} ≥ {config.threshold})"
            return item.model_copy(update={"status": "excluded"}), reason
        if item.id in inverted:
            for reason in inverted[item.id]:
                item = with_review_reason(item, reason)
            return item, "inverted-logic pair queued for review"
        return None

    stage_report = revise(store, stored, change, stage="dedup", author=author, dry_run=dry_run)
    report_path = None
    if report_dir is not None and not dry_run:
        report_dir.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        report_path = report_dir / f"dedup-{stamp}.json"
        report_path.write_text(json.dumps(dedup_report(result), ensure_ascii=False, indent=2), encoding="utf-8")
    return result, stage_report, report_path


def dedup_report(result: DedupResult) -> dict:
    return {
        "config": result.config.__dict__,
        "summary": result.summary(),
        "clusters": result.clusters,
        "pairs": [pair.__dict__ for pair in result.pairs],
    }


def example_pairs(result: DedupResult, store: Store, per_verdict: int = 3) -> list[dict]:
    examples = []
    for verdict in ("merged", "inverted", "stem_gate", "answer_differs"):
        for pair in [p for p in result.pairs if p.verdict == verdict][:per_verdict]:
            first, second = store.get(pair.first).item, store.get(pair.second).item
            examples.append({"verdict": verdict, "ratio": round(pair.ratio, 3), "stem_ratio": round(pair.stem_ratio, 3),
                             "swaps": pair.swaps, "first": f"{first.id}: {first.stem[:70]}",
                             "second": f"{second.id}: {second.stem[:70]}"})
    return examples
