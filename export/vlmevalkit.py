"""VLMEvalKit MCQ tables: text-only rows and image rows in separate files.

VLMEvalKit treats a TSV with an `image` column as an image dataset and drops (or fails on)
rows whose `image` cell is empty, so text-only rows go to `CONFIG.tsv` with no `image`
column and rows with any image to `CONFIG_image.tsv`, where `image` lists every image as
base64 (question images first, then option images in option order). VLMEvalKit sends them all
before the text, so the text numbers them (export/image_numbering.py): the question begins with
a note and ends with a `[그림 k]` mark per question image; an option's picture reads `[그림 k]`.
"""

from __future__ import annotations

import base64
import csv
import io
from pathlib import Path
from typing import Any

from export.image_numbering import image_mark, images_first_note
from export.rows import LETTERS

PICTURE = "(그림)"


def row_images(row: dict[str, Any]) -> list[bytes]:
    images = [image["bytes"] for image in row["question_images"]]
    return images + [option["image"]["bytes"] for option in row["options"] if option["image"]]


def _answer(row: dict[str, Any]) -> str:
    return ",".join(LETTERS[number - 1] for number in row["answers"])


def _numbered(row: dict[str, Any]) -> tuple[str, list[str]]:
    """The question and option cells of a row whose images VLMEvalKit sends first, numbered in `row_images` order."""
    numbers = iter(range(1, len(row_images(row)) + 1))
    marks = [image_mark(next(numbers)) for _ in row["question_images"]]
    question = "\n".join([images_first_note(len(row_images(row))), row["question"], *marks])
    options = [" ".join(filter(None, [option["text"], image_mark(next(numbers))])) if option["image"]
               else option["text"] or PICTURE for option in row["options"]]
    return question, options


def _table(rows: list[dict[str, Any]], with_image: bool) -> str:
    width = max((len(row["options"]) for row in rows), default=4)
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(["index", "id", "question", *LETTERS[:width], "answer", "category",
                     *(["image"] if with_image else [])])
    for index, row in enumerate(rows):
        question, options = _numbered(row) if with_image else (row["question"], [o["text"] or PICTURE for o in row["options"]])
        options += [""] * (width - len(row["options"]))
        cells = [index, row["id"], question, *options, _answer(row), row["subject"] or ""]
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
