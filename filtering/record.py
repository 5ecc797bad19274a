"""Filtering records: what a filter decided, with everything needed to reproduce it.

Saved as versioned JSON under `filtering/` in the workspace; `release build` reads the newest
one for its `hard` config and its card.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from curation.errors import WorkspaceError

RECORD_VERSION = 1
FOLDER = "filtering"


@dataclass
class FilterRecord:
    kind: str  # adversarial | hard
    created_at: str
    models: list[dict[str, Any]]  # label, name, identity (with revision), prompt + version, variant, decoding, run ids
    attempts: int
    sequential: bool
    pool: list[str]
    removed: dict[str, list[str]]
    survivors: list[str]
    undetermined: dict[str, list[str]]
    record_version: int = RECORD_VERSION
    notes: list[str] = field(default_factory=list)

    @property
    def hard_item_ids(self) -> list[str]:
        return self.survivors

    def summary(self) -> dict[str, Any]:
        return {"kind": self.kind, "models": [m["label"] for m in self.models], "attempts": self.attempts,
                "sequential": self.sequential, "pool": len(self.pool), "removed": len(self.removed),
                "survivors": len(self.survivors), "undetermined": len(self.undetermined)}


def save_record(record: FilterRecord, root: Path) -> Path:
    folder = root / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    stamp = record.created_at.replace(":", "").replace("-", "").replace(".", "")[:18]
    path = folder / f"{record.kind}-{stamp}.json"
    data = asdict(record) | {"hard_item_ids": record.hard_item_ids}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    tmp.replace(path)
    return path


def load_record(path: Path) -> FilterRecord:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise WorkspaceError(f"{path}: cannot read filtering record: {error}") from None
    if data.get("record_version") != RECORD_VERSION:
        raise WorkspaceError(f"{path}: filtering record version {data.get('record_version')} is not {RECORD_VERSION}")
    data.pop("hard_item_ids", None)
    return FilterRecord(**data)


def latest_record(root: Path, kinds: tuple[str, ...] = ("hard", "adversarial")) -> tuple[Path, FilterRecord] | None:
    """The newest record, preferring a `hard` record over an adversarial one."""
    folder = root / FOLDER
    for kind in kinds:
        paths = sorted(folder.glob(f"{kind}-*.json")) if folder.is_dir() else []
        if paths:
            return paths[-1], load_record(paths[-1])
    return None


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
