"""People's verdicts on responses, applied to a run: what the review app's Verdicts queue settles.

A settled verdict (`records.HumanVerdict`: the verdict, whether the answer was read right, an error
category, who, when, why, every reviewer's own verdict and the score it overrides) is a line of
`runs/RUN/verdicts.jsonl`; applying it appends the record again with a human-decided Score
(`decided_by: human`, the verdict in `details.human`) to `responses.jsonl`, like a rescore. A verdict
holds while the response text (its sha) and the item's content (its hash) are the ones it was given
on, whatever else happens to the run:

- `rescore` keeps a human-decided record, and gives its verdict back to a record a later line
  scored again on the same response (`VerdictBook.restore`);
- a rerun that re-sends an unchanged response (after an edit undone, `--retry-errors`, a lost log
  line) and a repeated `runs import` write the person's verdict, not the checker's
  (`VerdictBook.apply`, called where the runner and the importer make a record);
- a different response, or the item's question or key changed, takes its checker's score again:
  the verdict was given on something else.

The workspace's `[verdicts]` table in benchsmith.toml sets the audit sample size of the queue
(`audit`, 20 by default) and the error taxonomy reviewers tag wrong answers with
(`error_categories`, KMMMU's error analysis by default).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from curation.core.errors import BenchsmithError
from evaluation.records import AnswerRecord, HumanVerdict, HumanVerdictValue, response_sha
from evaluation.runlog import RESPONSES, RunLog, now_iso
from scoring import Score

VERDICTS_FILE = "verdicts.jsonl"
VERDICTS: tuple[HumanVerdictValue, ...] = ("correct", "incorrect", "no_answer")
# a person's "no answer" is what `unparseable` means: the response states no final answer
OUTCOME_OF: dict[str, str] = {"correct": "correct", "incorrect": "wrong", "no_answer": "unparseable"}
VERDICT_LABELS: dict[str, str] = {"correct": "정답 · correct", "incorrect": "오답 · incorrect",
                                  "no_answer": "답 없음 · no answer"}
DEFAULT_AUDIT = 20


@dataclass(frozen=True)
class ErrorCategory:
    name: str
    label: str


# KMMMU's error analysis (its five sources of error on Korean multimodal exam items)
DEFAULT_ERROR_CATEGORIES: tuple[ErrorCategory, ...] = (
    ErrorCategory("convention_to_label", "관례-표기 대응 · Convention-to-label mapping"),
    ErrorCategory("symbol_induction", "적은 예시로 기호 유추 · Symbol induction from few examples"),
    ErrorCategory("local_knowledge", "지역 지식 회상 · Local knowledge recall"),
    ErrorCategory("domain_standards", "분야별 표준 · Domain-specific standards"),
    ErrorCategory("reasoning_depth", "추론 깊이 · Reasoning depth"),
)


@dataclass(frozen=True)
class VerdictSettings:
    audit: int = DEFAULT_AUDIT  # checker-decided responses sampled into the queue per run
    error_categories: tuple[ErrorCategory, ...] = DEFAULT_ERROR_CATEGORIES

    @property
    def category_names(self) -> tuple[str, ...]:
        return tuple(category.name for category in self.error_categories)

    def label(self, name: str | None) -> str:
        return next((c.label for c in self.error_categories if c.name == name), name or "")


def verdict_settings(root: Path) -> VerdictSettings:
    """The `[verdicts]` table of the workspace's benchsmith.toml:

        [verdicts]
        audit = 20                                   # checker-decided responses sampled per run
        error_categories = ["units", "misread_figure"]   # names; or a table name = "label"
    """
    config = Path(root) / "benchsmith.toml"
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
    except tomllib.TOMLDecodeError as error:
        raise BenchsmithError(f"{config}: malformed config: {error}") from None
    section = data.get("verdicts", {})
    if not isinstance(section, dict):
        raise BenchsmithError(f"{config}: [verdicts] must be a table")
    audit = section.get("audit", DEFAULT_AUDIT)
    if isinstance(audit, bool) or not isinstance(audit, int) or audit < 0:
        raise BenchsmithError(f"{config}: verdicts.audit must be a whole number ≥ 0, not {audit!r}")
    raw = section.get("error_categories")
    if raw is None:
        return VerdictSettings(audit)
    pairs = list(raw.items()) if isinstance(raw, dict) else [(name, name) for name in raw] if isinstance(raw, list) else None
    if not pairs or not all(isinstance(n, str) and n.strip() and len(n) <= 64 and isinstance(label, str)
                            for n, label in pairs):
        raise BenchsmithError(f"{config}: verdicts.error_categories must be a non-empty list of names (≤ 64 "
                              "characters) or a table of name = \"label\"")
    names = [name.strip() for name, _ in pairs]
    if len(set(names)) != len(names):
        raise BenchsmithError(f"{config}: verdicts.error_categories names a category twice")
    return VerdictSettings(audit, tuple(ErrorCategory(name, label.strip() or name) for name, (_, label) in
                                        zip(names, pairs, strict=True)))


# -- the Score a verdict gives -------------------------------------------------------------------

def human_score(verdict: HumanVerdict, before: Score | None = None) -> Score:
    """The record's Score once a person decided it: the verdict's outcome, the checker's extraction
    and name kept, who / when / why and each reviewer's verdict in `details.human`, and what it
    overrides in `details.before` (the judge's verdict beside it, if any, kept)."""
    base = before if before is not None and before.decided_by != "human" else verdict.before
    base = base or Score(outcome="undecided")
    outcome = OUTCOME_OF[verdict.verdict]
    why = f": {verdict.reason}" if verdict.reason else ""
    details: dict[str, Any] = {
        "human": {"verdict": verdict.verdict, "extraction_ok": verdict.extraction_ok,
                  "error_category": verdict.error_category, "by": verdict.by, "how": verdict.how, "at": verdict.at,
                  "reason": verdict.reason, "reviewers": [r.user for r in verdict.reviewers],
                  "response_sha": verdict.response_sha},
        "before": {"outcome": base.outcome, "decided_by": base.decided_by, "judge_model": base.judge_model},
    }
    if "judge" in base.details:
        details["judge"] = base.details["judge"]
    return Score(value=1.0 if outcome == "correct" else 0.0, outcome=outcome,  # type: ignore[arg-type]
                 extracted=base.extracted, checker=base.checker, checker_version=base.checker_version,
                 explanation=f"{verdict.verdict} by {verdict.by} ({verdict.how}){why}", decided_by="human",
                 details=details)


def _with_score(line: dict[str, Any], score: Score) -> dict[str, Any]:
    line.update(outcome=score.outcome, score=score.model_dump(mode="json"), error=None)
    return line


# -- reading a run's verdicts ----------------------------------------------------------------------

Key = tuple[str, str, str | None]  # item, response sha, content hash


def verdict_key(verdict: HumanVerdict) -> Key:
    return verdict.item_id, verdict.response_sha, verdict.content_hash


def read_verdicts(run_dir: Path) -> dict[Key, HumanVerdict]:
    """The latest verdict per (item, response, content) of a run; torn or foreign lines skipped."""
    found: dict[Key, HumanVerdict] = {}
    path = Path(run_dir) / VERDICTS_FILE
    if not path.is_file():
        return found
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                verdict = HumanVerdict.model_validate_json(line)
            except (ValidationError, ValueError):
                continue
            found[verdict_key(verdict)] = verdict
    return found


class VerdictBook:
    """A run's settled verdicts, to give each response its person's verdict while it holds."""

    def __init__(self, verdicts: dict[Key, HumanVerdict]):
        self.verdicts = verdicts

    @classmethod
    def read(cls, run_dir: Path) -> VerdictBook:
        return cls(read_verdicts(run_dir))

    def __bool__(self) -> bool:
        return bool(self.verdicts)

    def find(self, item_id: str, text: str | None, content_hash: str | None) -> HumanVerdict | None:
        if not self.verdicts or text is None:
            return None
        return self.verdicts.get((item_id, response_sha(text), content_hash))

    def apply(self, record: dict[str, Any]) -> dict[str, Any]:
        """A record just made (the runner's or the importer's fields) with the person's verdict when
        one holds for its response and content."""
        verdict = self.find(record["item_id"], record.get("text"), record.get("content_hash"))
        if verdict is None:
            return record
        made = record.get("score")
        before = Score.model_validate(made) if isinstance(made, dict) else made if isinstance(made, Score) else None
        return _with_score(record, human_score(verdict, before))

    def restore(self, record: AnswerRecord) -> Score | None:
        """The human Score a logged record should carry and does not (a later line scored its
        unchanged response again), else None."""
        verdict = self.find(record.item_id, record.text, record.content_hash)
        if verdict is None:
            return None
        score = human_score(verdict, record.typed_score())
        return None if record.score == score else score


def records_of(run_dir: Path, item_ids: set[str]) -> dict[str, AnswerRecord]:
    """The last valid record of each of `item_ids` in the run log. Lines are written with the item id
    first, so the others are passed over without being parsed."""
    path = Path(run_dir) / RESPONSES
    found: dict[str, AnswerRecord] = {}
    if not path.is_file() or not item_ids:
        return found
    simple = all('"' not in i and "\\" not in i for i in item_ids)
    prefix = b'{"item_id":"'
    with path.open("rb") as handle:
        for line in handle:
            if simple and line.startswith(prefix):
                end = line.find(b'"', len(prefix))
                if line[len(prefix):end].decode("utf-8", errors="replace") not in item_ids:
                    continue
            try:
                record = AnswerRecord.model_validate_json(line.decode("utf-8", errors="replace"))
            except (ValidationError, ValueError):
                continue
            if record.item_id in item_ids:
                found[record.item_id] = record
    return found


# -- applying ----------------------------------------------------------------------------------------

APPLIED, ALREADY, CHANGED, NO_RECORD = "applied", "already", "changed", "no record"


def _append(path: Path, lines: list[dict[str, Any]]) -> None:
    log = RunLog(path)
    try:
        log.append_many(lines)
    finally:
        log.close()


def apply_verdict(run_dir: Path, verdict: HumanVerdict) -> str:
    """Log the verdict beside the run and give the response's record its Score: `applied`, `already`
    (the record has it), `changed` (the run's response or item is no longer the one judged: the
    verdict is kept for it, the record keeps its score) or `no record`."""
    if read_verdicts(run_dir).get(verdict_key(verdict)) != verdict:  # applied again: logged once
        _append(Path(run_dir) / VERDICTS_FILE, [verdict.model_dump(mode="json", exclude_none=True)])
    record = records_of(run_dir, {verdict.item_id}).get(verdict.item_id)
    if record is None:
        return NO_RECORD
    if response_sha(record.text) != verdict.response_sha or record.content_hash != verdict.content_hash:
        return CHANGED
    score = human_score(verdict, record.typed_score())
    if record.score == score:
        return ALREADY
    line = _with_score(record.model_dump(mode="json", exclude_none=True), score)
    line["verdict"] = now_iso()
    _append(Path(run_dir) / RESPONSES, [line])
    return APPLIED
