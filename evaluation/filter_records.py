"""What filtering writes that the layers below it read: a filter's decision (`FilterRecord`:
the report's and `evaluate`'s `hard` subset, the release build) and the suspect items of item
analysis (`SuspectsResult`: the review app's Suspects queue)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curation.core.errors import WorkspaceError

FILTER_RECORD_VERSION = 2
FILTER_FOLDER = "filtering"


class HardSubset(NamedTuple):
    """The hard subset as a filtering record decides it now: the current survivors, in record order."""

    ids: list[str]
    stale: int  # survivors whose item changed since filtering: left out

    def notes(self, record_name: str | None = None) -> list[str]:
        of = f" of {record_name}" if record_name else ""
        return ([f"hard: {self.stale} item(s){of} changed since filtering and are left out "
                 "(filter again to decide them)"] if self.stale else [])


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

    def hard_subset(self, hashes: Mapping[str, str]) -> HardSubset:
        """`hard`: the survivors among `hashes` (item → content hash now) whose content is still what
        was filtered; the ones changed since are counted as stale."""
        present = [i for i in self.survivors if i in hashes]
        current = [i for i in present if self.content_hashes.get(i) == hashes[i]]
        return HardSubset(current, len(present) - len(current))

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind, "models": [m["label"] for m in self.models], "attempts": self.attempts,
                "sequential": self.sequential, "pool": len(self.pool), "removed": len(self.removed),
                "survivors": len(self.survivors), "undetermined": len(self.undetermined),
                "stale_skipped": self.stale_skipped}


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


# --- suspect items -------------------------------------------------------------------------

ITEM_ANALYSIS_FOLDER = "filtering/item_analysis"


class Suspect(BaseModel):
    """An item whose key or wording the answers put in doubt, with the evidence."""

    model_config = ConfigDict(extra="forbid")
    item_id: str
    content_hash: str | None = None
    score: float  # 0–1, higher = more likely broken
    evidence: float  # −log(1 − score), unrounded order of the ranking (the score saturates near 1)
    reasons: list[str]
    key: int | None = None
    consensus_option: int | None = None
    key_wrong_posterior: float | None = None
    consensus_posterior: float | None = None
    discrimination: float | None = None
    discrimination_high: float | None = None
    share_correct: float | None = None
    options_strong: dict[str, float] = Field(default_factory=dict)
    n: int = 0
    option_counts: dict[str, int] = Field(default_factory=dict)  # option → models that chose it (all)
    option_counts_strong: dict[str, int] = Field(default_factory=dict)  # among the strongest third
    conflict_partners: list[str] = Field(default_factory=list)  # items dedup found with another key
    # an open item (numeric, text, set …): its answers by name, normalised by the key's format
    # (`scoring.answers`), the key's first; `key` and the option fields stay empty
    answer_format: str | None = None
    key_answer: str | None = None
    consensus_answer: str | None = None
    answer_counts: dict[str, int] = Field(default_factory=dict)  # answer → models that gave it (all)
    answer_counts_strong: dict[str, int] = Field(default_factory=dict)  # among the strongest third

    def key_shown(self) -> str:
        """The key as a table shows it: the option number, or an open item's answer."""
        return self.key_answer if self.key_answer is not None else str(self.key or "—")

    def consensus_shown(self) -> str | None:
        """What the consensus points to (an option number or an open answer); None: nothing."""
        return self.consensus_answer if self.consensus_answer is not None else (
            str(self.consensus_option) if self.consensus_option else None)


class SuspectsResult(BaseModel):
    """What `analyze suspects` writes (suspects.json) and the annotator's Suspects queue reads.
    `matrix_fingerprint` names the answers the suspects were found in: a reviewer's "keep"
    holds until the item's content or this fingerprint changes."""

    model_config = ConfigDict(extra="forbid")
    suspects: list[Suspect]
    items: int
    models: int
    stale_skipped: int = 0
    notes: list[str] = Field(default_factory=list)
    matrix_fingerprint: str | None = None
    created_at: str | None = None


SUSPECTS_FILE = "suspects.json"
