"""An answer run's records, each defined once and used by its writer and its readers.

- `AnswerRecord`: one line of `runs/RUN/responses.jsonl` (runner → report, matrix, judge, curation steps).
- `JudgeVerdict`: one line of `runs/RUN/judge-JUDGE.jsonl` (judge → report, `annotate load-judge`).
- `HumanVerdict`: one line of `runs/RUN/verdicts.jsonl`, a person's settled verdict on a response
  (the review app's Verdicts queue → the run's scores, rescore, reruns, the report's error categories).
- `RunManifest`: `runs/RUN/manifest.json` of an answer run (runner → report, matrix, filter, judge …);
  `GenerationManifest` and `GenerationRecord`: a curation model step's log (`runs/gen-…`).

The records filtering writes for the layers below it are in `evaluation.filter_records`, a
release's in `evaluation.release_records`, item analysis's own in `filtering.irt.records`.
Every record that refers to an item carries the item's content hash (`curation.core.identity`);
`is_current` is the one test of staleness every consumer uses.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field

from scoring import Outcome, Score

JUDGE_AXES = ("factuality", "logical_soundness", "depth", "clarity")


class LenientRecord(BaseModel):
    """A record that reads files written by later versions: keys it does not know are ignored."""

    model_config = ConfigDict(extra="ignore")


class AnswerRecord(LenientRecord):
    """One finished request of an answer run (a later line for the same item supersedes an earlier one)."""

    item_id: str
    content_hash: str | None = None  # None only in logs written before content identity
    key: str | None = None  # the request (cache) key
    outcome: Outcome  # the score's outcome, kept at the top for the columnar readers
    score: Score | None = None  # None only in logs written before typed scores: see `typed_score`
    gold: Any = None
    answer: Any = None
    parse_method: str | None = None
    text: str | None = None
    thinking: str | None = None
    rationale: str | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    model_version: str | None = None
    error: dict[str, Any] | None = None
    attempts: int | None = None
    latency_s: float | None = None
    cached: bool | None = None
    resends: int | None = None
    ts: str | None = None
    # an imported run (`runs import`): what the other tool itself said of this response, kept beside
    # our score, never used as it: {"source": "kmmmu-judge", "row": 12, "is_correct": true, …}
    external: dict[str, Any] | None = None

    def typed_score(self) -> Score:
        """The record's Score; a record written before typed scores maps its outcome to one."""
        return self.score if self.score is not None else Score.from_legacy(self.outcome, self.answer, self.error)


def response_sha(text: str | None) -> str:
    """The identity of a response's text: a judgement or a person's verdict holds only for that text."""
    return hashlib.sha256((text or "").encode("utf-8")).hexdigest()[:32]


HumanVerdictValue = Literal["correct", "incorrect", "no_answer"]


class ReviewerVerdict(LenientRecord):
    """One reviewer's verdict on a response, as they gave it (kept with the settled verdict)."""

    user: str
    verdict: HumanVerdictValue
    extraction_ok: bool | None = None  # was the answer read from the response the one it gives?
    error_category: str | None = None  # why it is wrong (the workspace's taxonomy), for `incorrect`
    reason: str | None = None
    at: str


class HumanVerdict(LenientRecord):
    """A person's settled verdict on one response of a run (`runs/RUN/verdicts.jsonl`, a later line
    for the same response superseding an earlier one). It holds while the response (`response_sha`)
    and the item's content (`content_hash`) are the ones it was given on."""

    item_id: str
    content_hash: str | None = None
    response_sha: str
    verdict: HumanVerdictValue
    extraction_ok: bool | None = None
    error_category: str | None = None
    by: str  # who decided: the reviewer, the agreeing reviewers ("kim+lee") or the lead
    how: Literal["single", "agreed", "adjudicated"]
    reason: str | None = None  # why
    at: str  # when
    reviewers: list[ReviewerVerdict] = Field(default_factory=list)
    before: Score | None = None  # the score it overrides (a checker's or a judge's)
    answer_format: str | None = None
    external: dict[str, Any] | None = None  # what another tool said of the response (`AnswerRecord.external`)


class JudgeScores(BaseModel):
    model_config = ConfigDict(extra="forbid")
    factuality: int = Field(ge=1, le=5)
    logical_soundness: int = Field(ge=1, le=5)
    depth: int = Field(ge=1, le=5)
    clarity: int = Field(ge=1, le=5)

    @property
    def total(self) -> int:
        return self.factuality + self.logical_soundness + self.depth + self.clarity


class JudgeVerdict(LenientRecord):
    """A judge's verdict on one model rationale; `missing` when no valid verdict was had (never a 0)."""

    item_id: str
    content_hash: str | None = None  # of the item as the model answered it
    run_id: str  # the answer run whose rationale was judged
    model: str  # the answering model's name (what the experts' scoring tasks name)
    judge: str  # the judge model's name
    rubric_version: str
    key: str | None = None  # the judge request key: covers the item, the reference and the rationale
    status: Literal["ok", "missing"]
    scores: JudgeScores | None = None
    factual_errors: list[str] = Field(default_factory=list)
    text: str | None = None
    thinking: str | None = None
    error: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    ts: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total(self) -> int | None:
        return self.scores.total if self.scores else None


def is_current(record: AnswerRecord | JudgeVerdict, hashes: Mapping[str, str]) -> bool:
    """Whether a record was made from the item content that is current now."""
    return record.content_hash is not None and hashes.get(record.item_id) == record.content_hash


R = TypeVar("R", bound=BaseModel)


def read_jsonl_records(path: Path, kind: type[R], key: str = "item_id") -> dict[str, R]:
    """The last complete, valid record per key; a line torn by a kill or of another shape is skipped."""
    found: dict[str, R] = {}
    if not path.is_file():
        return found
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = kind.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError):
                continue
            found[getattr(record, key)] = record
    return found


# --- run manifests ---------------------------------------------------------------------------
# Written with `exclude_unset`: a manifest is written back with exactly the keys it was built
# (or read) with, so the bytes stay what earlier versions wrote, and fields added later read
# as their defaults in older files.

class DatasetRef(LenientRecord):
    """What a run answered (`Dataset.describe()`); the keys present depend on the kind."""

    kind: Literal["store", "release", "jsonl"]
    query: dict[str, Any] | None = None  # store: the ItemQuery's set fields
    limit: int | None = None
    name: str | None = None  # release: name, version, config and content hash
    version: str | None = None
    config: str | None = None
    content_hash: str | None = None
    path: str | None = None  # release folder or JSONL file
    sha256: str | None = None  # JSONL: the file's digest


class RunConfig(LenientRecord):
    """What makes two runs the same run (`runner.run_config`; its hash is in the run id)."""

    model: dict[str, Any]  # the model's identity: backend, model, revision, identity options
    capabilities: dict[str, Any] | None = None  # absent before content identity
    decoding: dict[str, Any]
    prompt_version: str
    variant: str
    dataset: DatasetRef | None = None  # the dataset's identity (absent before content identity)
    query: dict[str, Any] | None = None  # before content identity: the store query and limit
    limit: int | None = None


class PromptRef(LenientRecord):
    name: str
    version: str


class ModelRef(BaseModel):
    """The model spec as the run saw it (`ModelSpec.model_dump`), every key kept."""

    model_config = ConfigDict(extra="allow")
    name: str


class UnmatchedRow(LenientRecord):
    """A row of an imported file that became no record, and why."""

    row: int  # 1-based, in the file's order
    reason: str


class ImportedFrom(LenientRecord):
    """Where an imported run's responses came from (`runs import`): another tool's file."""

    format: Literal["kmmmu", "lm-eval", "inspect", "hret", "jsonl"]
    path: str
    sha256: str
    rows: int
    matched: int
    unmatched: list[UnmatchedRow] = Field(default_factory=list)


class RunManifest(LenientRecord):
    """`runs/RUN/manifest.json` of an answer run: its configuration, dataset and selection."""

    run_id: str
    kind: Literal["answers"] = "answers"
    created_at: str = ""
    config_hash: str | None = None
    model: ModelRef
    prompt: PromptRef
    variant: str = "implicit"
    config: RunConfig
    dataset: DatasetRef | None = None  # absent before content identity: the store query in `config`
    item_ids: list[str] = Field(default_factory=list)  # asked or to ask, in dataset order
    skipped: dict[str, str] = Field(default_factory=dict)  # item → why it was not sent
    workspace: str | None = None
    imported: ImportedFrom | None = None  # a run made from another tool's responses (`runs import`)

    def dataset_ref(self) -> DatasetRef:
        return self.dataset or DatasetRef(kind="store", query=self.config.query or {}, limit=self.config.limit)


class GenerationManifest(LenientRecord):
    """`runs/gen-PURPOSE-MODEL-DIGEST/manifest.json`: a curation model step's log (paraphrase, drafts …)."""

    run_id: str
    kind: Literal["generation"]
    purpose: str
    created_at: str = ""
    model: ModelRef


class GenerationRecord(LenientRecord):
    """One finished request of a curation model step (`job` = request key # attempt); `text`
    is None when there was no usable answer, and `error` says why."""

    job: str
    text: str | None = None
    error: str | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    attempts: int | None = None
    latency_s: float | None = None
    cached: bool | None = None
    key: str | None = None  # the request (cache) key
    resends: int | None = None
    ts: str | None = None


def manifest_from_json(data: Any) -> RunManifest | GenerationManifest:
    """A run manifest as written by this or an earlier version (`kind` absent: an answer run)."""
    if isinstance(data, dict) and data.get("kind") == "generation":
        return GenerationManifest.model_validate(data)
    return RunManifest.model_validate(data)


def manifest_json(manifest: RunManifest | GenerationManifest) -> str:
    return json.dumps(manifest.model_dump(mode="json", exclude_unset=True), ensure_ascii=False, indent=2)
