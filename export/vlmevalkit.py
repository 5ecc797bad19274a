"""VLMEvalKit MCQ tables: text-only rows and image rows in separate files.

VLMEvalKit treats a TSV with an `image` column as an image dataset and drops (or fails on)
rows whose `image` cell is empty, so text-only rows go to `CONFIG.tsv` with no `image`
column and rows with any image to `CONFIG_image.tsv`, where `image` lists every image as
base64 (question images first, then option images in option order).
"""

from __future__ import annotations

import base64
import csv
import io
from pathlib import Path
from typing import Any

from export.rows import LETTERS

PICTURE = "(그림)"


def row_images(row: dict[str, Any]) -> list[bytes]:
    images = [image["bytes"] for image in row["question_images"]]
    return images + [option["image"]["bytes"] for option in row["options"] if option["image"]]


def _answer(row: dict[str, Any]) -> str:
    return ",".join(LETTERS[number - 1] for number in row["answers"])


def _table(rows: list[dict[str, Any]], with_image: bool) -> str:
    width = max((len(row["options"]) for row in rows), default=4)
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(["index", "id", "question", *LETTERS[:width], "answer", "category",
                     *(["image"] if with_image else [])])
    for index, row in enumerate(rows):
        options = [option["text"] or PICTURE for option in row["options"]] + [""] * (width - len(row["options"]))
        cells = [index, row["id"], row["question"], *options, _answer(row), row["subject"] or ""]
        if with_image:
            encoded = [base64.b64encode(data).decode() for data in row_images(row)]
            cells.append(str(encoded) if len(encoded) > 1 else encoded[0])
        writer.writerow(cells)
    return buffer.getvalue()


def write_vlmevalkit(folder: Path, config: str, rows: list[dict[str, Any]]) -> list[Path]:
    """`CONFIG.tsv` (text-only rows) and `CONFIG_image.tsv` (rows with images), each only if non-empty."""
    folder.mkdir(parents=True, exist_ok=True)
    with_images = [row for row in rows if row_images(row)]
    text_only = [row for row in rows if not row_images(row)]
    written = []
    for suffix, part, image in (("", text_only, False), ("_image", with_images, True)):
        if part:
            path = folder / f"{config}{suffix}.tsv"
            path.write_text(_table(part, image), encoding="utf-8")
            written.append(path)
    return written
