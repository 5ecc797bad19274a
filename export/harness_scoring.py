"""The scoring every harness export shares, copied at build time from the files benchsmith
itself imports, so that a harness scores exactly as `benchsmith report` does:

- `benchsmith_scoring/` is `scoring/portable` copied whole, byte for byte (standard library only):
  the checkers of every answer format, `score_response`, the verdict rules;
- `benchsmith_release.py` (export/harness_files/) is the thin part the harness tasks share: it
  gives `score_response` a row's typed key (the `key` column) and option texts, and reads the
  release's rows, prompts and decoding from wherever the release lies;
- `benchsmith_images.py` is `export/image_numbering.py` copied byte for byte (the numbered images
  of the harnesses that send every image before the text);
- `prompts/CONFIG.jsonl` holds, per row, the messages benchsmith's own `build_request` makes
  for that row (system text, then text and image references in order).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import scoring.portable
from curation.core.blobs import BlobStore
from curation.core.item import Item
from evaluation.backends.base import ImagePart
from evaluation.prompts import PROMPTS, ImageResolver, build_request
from evaluation.release_records import release_rows
from export import image_numbering

PORTABLE = Path(scoring.portable.__file__).parent
SCORING_PACKAGE = "benchsmith_scoring"  # the portable scorer's name in harness/
GLUE = "benchsmith_release.py"
IMAGES = "benchsmith_images.py"


def portable_files() -> list[Path]:
    """The portable scorer's files, relative to its folder, sorted (no bytecode)."""
    return sorted(path.relative_to(PORTABLE) for path in PORTABLE.rglob("*")
                  if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc")


def copy_portable(target: Path) -> list[Path]:
    """`scoring/portable` copied whole into `target` (byte for byte)."""
    written = []
    for relative in portable_files():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PORTABLE / relative, path)
        written.append(path)
    return written


def _positions(item: Item) -> dict[str, list[Any]]:
    """Image content hash → where the row keeps it: ["question", i] or ["option", j]."""
    where: dict[str, list[Any]] = {}
    for index, image in enumerate(item.images):
        where.setdefault(image.blob.partition(".")[0], ["question", index])
    for index, option in enumerate(item.options):
        if option.image is not None:
            where.setdefault(option.image.blob.partition(".")[0], ["option", index])
    return where


def released_item(row: dict[str, Any], blobs: BlobStore, source: Item | None = None) -> Item:
    """The item `evaluate --release` reads back from this row. Given the store item the row was
    made from, the same prompt comes from it with the released question as its stem (the row
    copies its options and images, content-addressed): no round trip through the row."""
    if source is not None and source.id == row["id"]:
        return source if source.stem == row["question"] else source.model_copy(update={"stem": row["question"]})
    return release_rows([row])[0].to_item(blobs.put)  # its images are in the blob store already


def prompt_record(row: dict[str, Any], blobs: BlobStore, prompt_name: str, source: Item | None = None
                  ) -> dict[str, Any]:
    """The messages benchsmith sends for this row (read back as `evaluate --release` reads it),
    images as positions in the row."""
    item = released_item(row, blobs, source)
    request = build_request(item, PROMPTS[prompt_name], ImageResolver(blobs))
    where = _positions(item)
    system, user = request.messages
    content = [{"image": where[part.sha256]} if isinstance(part, ImagePart) else {"text": part}
               for part in user.parts]
    return {"id": row["id"], "system": "\n".join(p for p in system.parts if isinstance(p, str)), "content": content}


PromptRecords = dict[str, dict[str, dict[str, Any]]]  # config → row id → prompt record


def write_scoring(folder: Path, rows_by_config: dict[str, list[dict[str, Any]]], blobs: BlobStore,
                  prompt_name: str, sources: dict[str, Item] | None = None,
                  keep: Callable[[dict[str, Any]], bool] = lambda row: True) -> PromptRecords:
    """The shared scoring files and each config's prompts; returns the prompt records written of
    the rows `keep` names (a 65,000-row release need not hold every record)."""
    folder.mkdir(parents=True, exist_ok=True)
    copy_portable(folder / SCORING_PACKAGE)
    with resources.as_file(resources.files("export.harness_files").joinpath(GLUE)) as glue:
        shutil.copyfile(glue, folder / GLUE)
    (folder / IMAGES).write_bytes(Path(image_numbering.__file__).read_bytes())
    # id(row) → (row, its record if kept, its line): a row shared by configs is made once
    lines: dict[int, tuple[dict[str, Any], dict[str, Any] | None, str]] = {}

    def line(row: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None, str]:
        if id(row) not in lines:
            record = prompt_record(row, blobs, prompt_name, (sources or {}).get(row["id"]))
            text = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
            lines[id(row)] = (row, record if keep(row) else None, text)
        return lines[id(row)]

    records: PromptRecords = {}
    for config, rows in rows_by_config.items():
        path = folder / "prompts" / f"{config}.jsonl"
        path.parent.mkdir(exist_ok=True)
        done = [line(row) for row in rows]
        path.write_text("".join(text for _, _, text in done), encoding="utf-8")
        records[config] = {row["id"]: record for row, record, _ in done if record is not None}
    return records
