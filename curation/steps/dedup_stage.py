"""The dedup stage over a workspace: find exact and near duplicates, exclude all but one per
cluster, queue inverted-logic pairs and answer conflicts for review, and keep a JSON report of
what was merged and why."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from curation.core.item import Item
from curation.core.revise import StageReport, active_items, revise, with_review_reason
from curation.core.store import Store
from curation.progress import Advance, no_progress
from curation.steps.antonyms import AntonymLexicon
from curation.steps.dedup import BANDS, DedupConfig, DedupResult, dedup_items, merged_by_band
from curation.steps.dedup_report import DedupReport


def run_dedup(
    store: Store,
    config: DedupConfig,
    *,
    author: str,
    antonyms: AntonymLexicon | None = None,
    dry_run: bool = False,
    report_dir: Path | None = None,
    advance: Advance = no_progress,
) -> tuple[DedupResult, StageReport, Path | None]:
    stored = active_items(store)
    result = dedup_items([s.item for s in stored], config, antonyms, advance)
    queued = review_reasons(result)

    def change(item: Item) -> tuple[Item, str] | None:
        if item.id in result.excluded:
            kept, cluster, ratio = result.excluded[item.id]
            if item.id in result.exact_excluded:
                where = " in another scope" if result.exact_excluded[item.id] else ""
                reason = f"exact duplicate of {kept}{where} (cluster {cluster}, canonical text equal)"
            else:
                reason = f"near-duplicate of {kept} (cluster {cluster}, ratio {ratio:.3f}, {config.method} ≥ {config.threshold})"
            return item.model_copy(update={"status": "excluded"}), reason
        if item.id in queued:
            for reason in queued[item.id]:
                item = with_review_reason(item, reason)
            if any(reason.startswith("answer conflict") for reason in queued[item.id]) and item.status != "in_review":
                item = item.model_copy(update={"status": "in_review"})
            return item, "dedup pair queued for review"
        return None

    stage_report = revise(store, stored, change, stage="dedup", author=author, dry_run=dry_run)
    report_path = None
    if report_dir is not None and not dry_run:
        report_dir.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        report_path = report_dir / f"dedup-{stamp}.json"
        DedupReport.of(result).write(report_path)
    return result, stage_report, report_path


def review_reasons(result: DedupResult) -> dict[str, list[str]]:
    """Per item, why dedup asks a person: inverted-logic pairs and answer conflicts between the
    items left in play, naming the other item."""
    queued: dict[str, list[str]] = {}

    def queue(ends: tuple[str, str], text: str) -> None:
        for this, other in (ends, ends[::-1]):
            queued.setdefault(this, []).append(text.format(other=other))

    for pair in result.pairs:
        if pair.verdict == "inverted":
            swaps = ", ".join(f"{a}/{b}" for a, b in pair.swaps)
            queue((pair.first, pair.second),
                  "inverted-logic pair with {other} (" + swaps + f"; ratio {pair.ratio:.2f}): check before removing")
    for ends, behind in result.standing_conflicts().items():
        queue(ends, f"answer conflict with {{other}} (ratio {max(p.ratio for p in behind):.3f}): the same question "
                    "with another correct answer; fix the wrong key, then exclude one")
    return queued


def band_report(result: DedupResult, store: Store, per_band: int = 2) -> list[dict]:
    """Per ratio band: pairs that merge, how many share the correct answer, and examples."""
    rows = []
    bands = merged_by_band(result.pairs)
    for band in [b for b in bands if b not in BANDS] + list(BANDS):
        pairs = bands.get(band, [])
        examples = []
        for pair in pairs[:per_band]:
            first, second = store.get(pair.first).item, store.get(pair.second).item
            examples.append({"ratio": round(pair.ratio, 3), "same_answer": pair.same_answer,
                             "first": f"{first.id}: {first.stem[:60]} → {_answer_text(first)}",
                             "second": f"{second.id}: {second.stem[:60]} → {_answer_text(second)}"})
        rows.append({"band": band, "pairs": len(pairs), "same_answer": sum(bool(p.same_answer) for p in pairs),
                     "examples": examples})
    return rows


def _answer_text(item: Item) -> str:
    if item.answer is not None and item.choice_key() is None:
        return item.answer.text()[:60]
    return " / ".join(item.options[n - 1].text[:30] for n in item.answer_list()) or "(no key)"


def example_pairs(result: DedupResult, store: Store, per_verdict: int = 3) -> list[dict]:
    examples = []
    for verdict in ("merged", "inverted", "answer_conflict", "stem_gate", "answer_differs"):
        for pair in [p for p in result.pairs if p.verdict == verdict][:per_verdict]:
            first, second = store.get(pair.first).item, store.get(pair.second).item
            examples.append({"verdict": verdict, "ratio": round(pair.ratio, 3), "stem_ratio": round(pair.stem_ratio, 3),
                             "swaps": pair.swaps, "first": f"{first.id}: {first.stem[:70]}",
                             "second": f"{second.id}: {second.stem[:70]}"})
    return examples
