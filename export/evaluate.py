"""Evaluating a built release with the same runners: its rows become items of the workspace
(ids prefixed with the release and config, images into the blob store, status accepted), then
`benchsmith run`'s machinery answers them with the same cache, logs and report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curation.errors import BenchsmithError
from curation.item import Item, parse_item
from curation.workspace import Workspace
from export.changelog import MANIFEST


def split_release_arg(text: str) -> tuple[Path, str]:
    path, sep, config = text.rpartition(":")
    if sep and path and "/" not in config and Path(path).is_dir():
        return Path(path), config
    return Path(text), "full"


def _image(workspace: Workspace, value: dict[str, Any] | None) -> dict[str, Any] | None:
    if not value or not value.get("bytes"):
        return None
    ext = (value.get("path") or "x.png").rsplit(".", 1)[-1].lower()
    return {"blob": workspace.blobs.put(value["bytes"], ext)}


def row_item(row: dict[str, Any], prefix: str, workspace: Workspace) -> Item:
    answers = list(row.get("answers") or ([row["answer"]] if row.get("answer") else []))
    return parse_item({
        "id": f"{prefix}:{row['id']}",
        "source": {"exam": row.get("exam") or "release", "session": row.get("session"), "subject": row.get("subject"),
                   "part": row.get("part"), "number": row.get("number"), "origin": prefix},
        "stem": row["question"],
        "options": [{"text": o.get("text") or "", "image": _image(workspace, o.get("image"))} for o in row["options"]],
        "answer": answers[0] if len(answers) == 1 else (answers or None),
        "images": [image for image in (_image(workspace, v) for v in row.get("question_images") or []) if image],
        "flags": {"korea_specific": row.get("korea_specific")},
        "taxonomy": {"part": row.get("part"), "subject": row.get("subject"), "visual_type": row.get("visual_type"),
                     "question_format": row.get("question_format")},
        "rationale": {"text": row["rationale"], "status": row.get("rationale_status") or "adopted"}
        if row.get("rationale") else None,
        "status": "accepted",
    })


def load_release_items(workspace: Workspace, release: Path, config: str) -> list[str]:
    """Put a release config's rows into the workspace (idempotent); returns their item ids."""
    import pyarrow.parquet as pq

    manifest_path = release / MANIFEST
    if not manifest_path.is_file():
        raise BenchsmithError(f"{release} is not a benchsmith release (no {MANIFEST})")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if config not in manifest["configs"]:
        raise BenchsmithError(f"{release}: no config {config!r} (configs: {', '.join(manifest['configs'])})")
    prefix = f"{manifest['name']}-v{manifest['version']}-{config}"
    rows = []
    for name in manifest["configs"][config]["files"]:
        rows += pq.read_table(release / name).to_pylist()
    items = [row_item(row, prefix, workspace) for row in rows]
    workspace.store.save_items(items, author="release", stage="release-import", reason=f"evaluate {prefix}",
                               on_existing="skip")
    return [item.id for item in items]
