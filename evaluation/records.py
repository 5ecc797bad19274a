"""The records that cross a stage boundary, each defined once and used by its writer and its readers.

- `AnswerRecord`: one line of `runs/RUN/responses.jsonl` (runner → report, matrix, judge, curation steps).
- `JudgeVerdict`: one line of `runs/RUN/judge-JUDGE.jsonl` (judge → report, `annotate load-judge`).
- `FilterRecord`: `filtering/KIND-TIME.json` (filter → report's `hard` subset, release build, shift).
- `ReleaseRow`: one row of a release's parquet (release build → `evaluate --release`, `run --from`).

Every record that refers to an item carries the item's content hash (`curation.identity`);
`is_current` is the one test of staleness every consumer uses.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field

from curation.errors import WorkspaceError
from curation.item import Item, parse_item

Outcome = Literal["correct", "wrong", "unparseable", "error"]
JUDGE_AXES = ("factuality", "logical_soundness", "depth", "clarity")


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")


class AnswerRecord(_Record):
    """One finished request of an answer run (a later line for the same item supersedes an earlier one)."""

    item_id: str
    content_hash: str | None = None  # None only in logs written before content identity
    key: str | None = None  # the request (cache) key
    outcome: Outcome
    gold: int | list[int] | None = None
    answer: int | list[int] | None = None
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


class JudgeScores(BaseModel):
    model_config = ConfigDict(extra="forbid")
    factuality: int = Field(ge=1, le=5)
    logical_soundness: int = Field(ge=1, le=5)
    depth: int = Field(ge=1, le=5)
    clarity: int = Field(ge=1, le=5)

    @property
    def total(self) -> int:
        return self.factuality + self.logical_soundness + self.depth + self.clarity


class JudgeVerdict(_Record):
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


R = TypeVar("R", bound=_Record)


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


# --- filtering ---------------------------------------------------------------------------

FILTER_RECORD_VERSION = 2
FILTER_FOLDER = "filtering"


class FilterRecord(BaseModel):
    """What a filter decided, with everything needed to reproduce it and to tell when it went stale."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["adversarial", "hard"]
    created_at: str
    models: list[dict[str, Any]]  # label, name, identity (with revision), prompt + version, variant, decoding, run ids
    attempts: int
    sequential: bool
    pool: list[str]
    removed: dict[str, list[str]]
    survivors: list[str]
    undetermined: dict[str, list[str]]
    content_hashes: dict[str, str] = Field(default_factory=dict)  # pool item → content hash it was filtered on
    stale_skipped: int = 0  # run-log records left out because their item had changed
    record_version: int = FILTER_RECORD_VERSION
    notes: list[str] = Field(default_factory=list)

    def current_survivors(self, hashes: Mapping[str, str]) -> tuple[list[str], int]:
        """Of the survivors among `hashes` (item → content hash now), those whose content is still what
        was filtered, and how many of them changed since (stale)."""
        present = [i for i in self.survivors if i in hashes]
        current = [i for i in present if self.content_hashes.get(i) == hashes[i]]
        return current, len(present) - len(current)

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind, "models": [m["label"] for m in self.models], "attempts": self.attempts,
                "sequential": self.sequential, "pool": len(self.pool), "removed": len(self.removed),
                "survivors": len(self.survivors), "undetermined": len(self.undetermined),
                "stale_skipped": self.stale_skipped}


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def save_filter_record(record: FilterRecord, root: Path) -> Path:
    folder = root / FILTER_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    stamp = record.created_at.replace(":", "").replace("-", "").replace(".", "")[:18]
    path = folder / f"{record.kind}-{stamp}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(record.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(path)
    return path


def load_filter_record(path: Path) -> FilterRecord:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise WorkspaceError(f"{path}: cannot read filtering record: {error}") from None
    version = data.get("record_version")
    if version == 1:  # before content identity: no hashes, so every survivor reads as stale
        data = {k: v for k, v in data.items() if k != "hard_item_ids"} | {"record_version": FILTER_RECORD_VERSION}
    elif version != FILTER_RECORD_VERSION:
        raise WorkspaceError(f"{path}: filtering record version {version} is not {FILTER_RECORD_VERSION}")
    try:
        return FilterRecord.model_validate(data)
    except ValidationError as error:
        raise WorkspaceError(f"{path}: malformed filtering record: {error.errors()[0]['msg']}") from None


def latest_filter_record(root: Path, kinds: tuple[str, ...] = ("hard", "adversarial")) -> tuple[Path, FilterRecord] | None:
    """The newest record, preferring a `hard` record over an adversarial one."""
    folder = root / FILTER_FOLDER
    for kind in kinds:
        paths = sorted(folder.glob(f"{kind}-*.json")) if folder.is_dir() else []
        if paths:
            return paths[-1], load_filter_record(paths[-1])
    return None


# --- releases ------------------------------------------------------------------------------

class ReleaseImage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    bytes: bytes
    path: str


class ReleaseOption(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    image: ReleaseImage | None = None


class ReleaseRow(BaseModel):
    """One row of a release config. `answer` is 1-based (None for a multi-answer item), `answers` lists all."""

    model_config = ConfigDict(extra="ignore")
    id: str
    exam: str | None = None
    session: str | None = None
    subject: str | None = None
    part: str | None = None
    number: int | None = None
    question: str
    question_original: str | None = None
    question_images: list[ReleaseImage] = Field(default_factory=list)
    options: list[ReleaseOption]
    answer: int | None = None
    answer_letter: str | None = None
    answers: list[int] = Field(default_factory=list)
    korea_specific: bool | None = None
    multimodal: bool = False
    visual_type: str | None = None
    question_format: str | None = None
    rationale: str | None = None
    rationale_status: str | None = None
    original_option_order: list[int] | None = None

    def to_item(self, put_image: Any) -> Item:
        """The item a model is asked: the released question and options; `put_image(bytes, ext) → blob`."""
        def image(value: ReleaseImage | None) -> dict[str, str] | None:
            if value is None or not value.bytes:
                return None
            return {"blob": put_image(value.bytes, value.path.rsplit(".", 1)[-1].lower() if "." in value.path else "png")}

        answers = self.answers or ([self.answer] if self.answer else [])
        return parse_item({
            "id": self.id,
            "source": {"exam": self.exam or "release", "session": self.session, "subject": self.subject,
                       "part": self.part, "number": self.number},
            "stem": self.question,
            "options": [{"text": option.text, "image": image(option.image)} for option in self.options],
            "answer": answers[0] if len(answers) == 1 else (answers or None),
            "images": [ref for ref in (image(value) for value in self.question_images) if ref],
            "flags": {"korea_specific": self.korea_specific},
            "taxonomy": {"part": self.part, "subject": self.subject, "visual_type": self.visual_type,
                         "question_format": self.question_format},
            "rationale": {"text": self.rationale, "status": self.rationale_status or "adopted"} if self.rationale else None,
            "status": "accepted",
        })


def release_rows(rows: Iterable[Mapping[str, Any]]) -> list[ReleaseRow]:
    return [ReleaseRow.model_validate(row) for row in rows]
