"""The scoring module every harness export imports, generated at build time from benchsmith's
own code so that a harness scores exactly as `benchsmith report` does:

- `benchsmith_parsing.py` is `scoring/portable/choice_parsing.py` copied byte for byte;
- `benchsmith_images.py` is `export/image_numbering.py` copied byte for byte (the numbered images
  of the harnesses that send every image before the text);
- `benchsmith_scoring.py` carries the multi-answer rule as the source of the choice checker's
  `listed` and `accepts` (`scoring/portable/formats/choice.py`, what `Item.accepts` calls), the
  runner's treatment of a response whose thinking never closed (an error, never correct), and the
  loaders the harness tasks share;
- `prompts/CONFIG.jsonl` holds, per row, the messages benchsmith's own `build_request` makes
  for that row (system text, then text and image references in order).
"""

from __future__ import annotations

import inspect
import json
from importlib import resources
from pathlib import Path
from typing import Any

from curation.blobs import BlobStore
from curation.item import Item
from evaluation.backends.base import ImagePart
from evaluation.prompts import PROMPTS, ImageResolver, build_request
from evaluation.records import release_rows
from export import image_numbering
from scoring.portable import choice_parsing as parsing
from scoring.portable.formats import choice

TEMPLATE = "benchsmith_scoring.py.tmpl"
CHOICE_RULE = (choice.listed, choice.accepts)  # copied as source: the one multi-answer rule


def scoring_source(prompt_name: str) -> str:
    prompt = PROMPTS[prompt_name]
    template = resources.files("export.harness_files").joinpath(TEMPLATE).read_text(encoding="utf-8")
    rule = "\n\n\n".join(inspect.getsource(function).rstrip() for function in CHOICE_RULE)
    return (template.replace("__PROMPT_NAME__", repr(prompt.name)).replace("__PROMPT_VERSION__", repr(prompt.version))
            .replace("__CHOICE_RULE__", rule + "\n"))


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


def write_scoring(folder: Path, rows_by_config: dict[str, list[dict[str, Any]]], blobs: BlobStore,
                  prompt_name: str, sources: dict[str, Item] | None = None) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    parsing_path = folder / "benchsmith_parsing.py"
    parsing_path.write_bytes(Path(parsing.__file__).read_bytes())
    images_path = folder / "benchsmith_images.py"
    images_path.write_bytes(Path(image_numbering.__file__).read_bytes())
    scoring_path = folder / "benchsmith_scoring.py"
    scoring_path.write_text(scoring_source(prompt_name), encoding="utf-8")
    written = [parsing_path, images_path, scoring_path]
    lines: dict[int, tuple[dict[str, Any], str]] = {}  # id(row) → (row, its line): a row shared by configs once

    def line(row: dict[str, Any]) -> str:
        if id(row) not in lines:
            record = prompt_record(row, blobs, prompt_name, (sources or {}).get(row["id"]))
            lines[id(row)] = (row, json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        return lines[id(row)][1]

    for config, rows in rows_by_config.items():
        path = folder / "prompts" / f"{config}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_text("".join(line(row) for row in rows), encoding="utf-8")
        written.append(path)
    return written
