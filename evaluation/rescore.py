"""`benchsmith rescore RUN`: every record's score recomputed from its logged text, nothing re-sent.

After a checker changes (its version is recorded in each Score, not in the run id), the run's
current records are scored again with today's checkers; a record whose score changes gets a new
line appended to the log (the log stays append-only, a later line supersedes an earlier one),
so the report, matrix and filters read the new scores. A verdict a person gave stays, and comes
back to a record a later line scored again on the same response and content (the run's
`verdicts.jsonl`, evaluation/human_verdicts.py); a judge's verdict stays unless a checker can now
decide the response itself. Stale records (their item changed since it was answered) are left
alone and counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.core.identity import content_hash
from curation.core.workspace import Workspace
from evaluation.datasets import dataset_from_manifest
from evaluation.human_verdicts import VerdictBook
from evaluation.records import AnswerRecord, read_jsonl_records
from evaluation.runlog import RESPONSES, RunLog, now_iso, read_answer_manifest
from scoring import Score, score_key


@dataclass
class RescoreSummary:
    run_id: str
    records: int = 0
    rescored: int = 0  # records whose score changed (a line appended for each)
    unchanged: int = 0
    kept_verdicts: int = 0  # a person's or a judge's verdict kept
    restored_verdicts: int = 0  # a person's verdict given back to its unchanged response
    stale: int = 0
    no_text: int = 0  # API errors: nothing to score again
    changes: Counter[str] = field(default_factory=Counter)  # "wrong→correct" …

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "records": self.records, "rescored": self.rescored,
                "unchanged": self.unchanged, "kept_verdicts": self.kept_verdicts,
                "restored_verdicts": self.restored_verdicts, "stale": self.stale,
                "no_text": self.no_text, "changes": dict(sorted(self.changes.items()))}


def _same(old: Score, new: Score) -> bool:
    return (old.outcome, old.value, old.extracted, old.checker, old.checker_version) == (
        new.outcome, new.value, new.extracted, new.checker, new.checker_version)


def rescore_record(record: AnswerRecord, key: Any, options: list[str]) -> Score | None:
    """The record's new Score, or None when it keeps the one it has."""
    old = record.typed_score()
    if record.text is None and record.outcome == "error":
        return None
    if old.decided_by == "human":
        return None
    new = score_key(key, record.text, options, record.finish_reason)
    if old.decided_by == "judge" and new.outcome not in ("correct", "wrong"):
        return None
    return None if _same(old, new) else new


def rescore_run(ws: Workspace, run_dir: Path, dry_run: bool = False) -> RescoreSummary:
    manifest = read_answer_manifest(run_dir)
    summary = RescoreSummary(manifest.run_id)
    records = read_jsonl_records(run_dir / RESPONSES, AnswerRecord)
    dataset = dataset_from_manifest(manifest, ws.store, ws.blobs, ws.root)
    items = dataset.lookup(list(records))
    book = VerdictBook.read(run_dir)
    appended: list[dict[str, Any]] = []
    for item_id, record in records.items():
        summary.records += 1
        item = items.get(item_id)
        if item is None or item.answer is None or content_hash(item, manifest.variant) != record.content_hash:
            summary.stale += 1
            continue
        if record.text is None and record.outcome == "error":
            summary.no_text += 1
            continue
        old = record.typed_score()
        restored = book.restore(record) if book else None
        if restored is not None:  # the person's verdict on this very response, which a later line lost
            summary.restored_verdicts += 1
            summary.changes[f"{old.outcome}→{restored.outcome}"] += 1
            line = record.model_dump(mode="json", exclude_none=True)
            line.update(outcome=restored.outcome, score=restored.model_dump(mode="json"), error=None, rescored=now_iso())
            appended.append(line)
            continue
        new = rescore_record(record, item.answer, [option.text for option in item.options])
        if new is None:
            if old.decided_by != "checker":
                summary.kept_verdicts += 1
            else:
                summary.unchanged += 1
            continue
        summary.rescored += 1
        summary.changes[f"{old.outcome}→{new.outcome}"] += 1
        line = record.model_dump(mode="json", exclude_none=True)
        line.update(outcome=new.outcome, answer=new.extracted, score=new.model_dump(mode="json"),
                    rescored=now_iso(), error=({"kind": new.error_kind, "message": new.explanation}
                                               if new.outcome == "error" else None))
        appended.append(line)
    if appended and not dry_run:
        log = RunLog(run_dir / RESPONSES)
        try:
            log.append_many(appended)
        finally:
            log.close()
    return summary
