"""VLMEvalKit tables: choice rows as MCQ tables (text-only and image rows apart), the other
formats' rows with images as an open-ended table, and the script that scores its predictions.

VLMEvalKit treats a TSV with an `image` column as an image dataset and drops (or fails on)
rows whose `image` cell is empty, so text-only choice rows go to `CONFIG.tsv` with no `image`
column and choice rows with any image to `CONFIG_image.tsv`, where `image` lists every image as
base64 (question images first, then option images in option order) and `image_path` names each
(VLMEvalKit writes a row's list of images to those names). VLMEvalKit sends them all before the
text, so the text numbers them (export/image_numbering.py): the question begins with a note and
ends with a `[그림 k]` mark per question image; an option's picture reads `[그림 k]`.

Rows of other formats (numeric, text, set …) with images go to `CONFIG_openended_image.tsv`,
which VLMEvalKit loads as a custom open-ended (VQA) dataset (a table without option columns; the
name says `openended`): its `question` is benchsmith's own user message for the row, images
numbered as lm-eval's, its `answer` the key's plain text and its `key` the typed key. VLMEvalKit
has no scorer for such a table, so `benchsmith_vlmevalkit.py` scores its prediction file (and an
MCQ one) with benchsmith's checkers. VLMEvalKit's custom open-ended dataset is an image dataset:
text-only rows of other formats have no table it can load, and `harness/README.md` says so.
"""

from __future__ import annotations

import base64
import csv
import io
from importlib import resources
from pathlib import Path
from typing import Any

from export.image_numbering import image_mark, images_first_note, numbered_text
from export.rows import LETTERS

PICTURE = "(그림)"
SCRIPT = "benchsmith_vlmevalkit.py"
OPEN_SUFFIX = "_openended_image"


def row_images(row: dict[str, Any]) -> list[bytes]:
    images = [image["bytes"] for image in row["question_images"]]
    return images + [option["image"]["bytes"] for option in row["options"] if option["image"]]


def is_choice(row: dict[str, Any]) -> bool:
    """A row VLMEvalKit's MCQ tables carry: a choice key (or none, as before the key columns)."""
    return row.get("answer_format") in (None, "choice")


def in_open_table(row: dict[str, Any]) -> bool:
    """A row of `CONFIG_openended_image.tsv`: another format than choice, with images."""
    return not is_choice(row) and bool(row["question_images"] or any(o["image"] for o in row["options"]))


def not_carried(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows no VLMEvalKit table holds: text-only rows of formats other than choice."""
    return [row for row in rows if not is_choice(row) and not row_images(row)]


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


def _image_cells(row: dict[str, Any], index: int) -> list[str]:
    """`image` (one base64 image, or a list of them) and `image_path` (the names VLMEvalKit writes them to)."""
    encoded = [base64.b64encode(data).decode() for data in row_images(row)]
    names = [f"{index}_{number}.png" for number in range(1, len(encoded) + 1)]
    if len(encoded) == 1:
        return [encoded[0], names[0]]
    return [str(encoded), str(names)]


def _writer(buffer: io.StringIO) -> Any:
    return csv.writer(buffer, delimiter="\t", lineterminator="\n")


def _mcq_table(rows: list[dict[str, Any]], with_image: bool) -> str:
    width = max((len(row["options"]) for row in rows), default=4)
    buffer = io.StringIO()
    writer = _writer(buffer)
    writer.writerow(["index", "id", "question", *LETTERS[:width], "answer", "category",
                     *(["image", "image_path"] if with_image else [])])
    for index, row in enumerate(rows):
        question, options = _numbered(row) if with_image else (row["question"], [o["text"] or PICTURE for o in row["options"]])
        options += [""] * (width - len(row["options"]))
        cells = [index, row["id"], question, *options, _answer(row), row["subject"] or ""]
        if with_image:
            cells += _image_cells(row, index)
        writer.writerow(cells)
    return buffer.getvalue()


def _open_table(rows: list[dict[str, Any]], prompts: dict[str, dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = _writer(buffer)
    writer.writerow(["index", "id", "question", "answer", "answer_format", "key", "category", "image", "image_path"])
    for index, row in enumerate(rows):
        question = numbered_text(prompts[row["id"]]["content"])
        writer.writerow([index, row["id"], question, row["answer_text"] or "", row["answer_format"], row["key"],
                         row["subject"] or "", *_image_cells(row, index)])
    return buffer.getvalue()


def write_vlmevalkit(folder: Path, config: str, rows: list[dict[str, Any]],
                     prompts: dict[str, dict[str, Any]]) -> list[Path]:
    """`CONFIG.tsv` (text-only choice rows), `CONFIG_image.tsv` (choice rows with images) and
    `CONFIG_openended_image.tsv` (other formats' rows with images), each only if non-empty;
    `prompts`: row id → the prompt record benchsmith sends (harness/prompts/CONFIG.jsonl) of each
    row `in_open_table`."""
    folder.mkdir(parents=True, exist_ok=True)
    choice = [row for row in rows if is_choice(row)]
    tables = (("", _mcq_table, [row for row in choice if not row_images(row)], False),
              ("_image", _mcq_table, [row for row in choice if row_images(row)], True))
    written = []
    for suffix, table, part, image in tables:
        if part:
            path = folder / f"{config}{suffix}.tsv"
            path.write_text(table(part, image), encoding="utf-8")
            written.append(path)
    open_rows = [row for row in rows if in_open_table(row)]
    if open_rows:
        path = folder / f"{config}{OPEN_SUFFIX}.tsv"
        path.write_text(_open_table(open_rows, prompts), encoding="utf-8")
        written.append(path)
    return written


def write_script(folder: Path) -> Path:
    """The scorer of VLMEvalKit's prediction files (harness_files/benchsmith_vlmevalkit.py, copied as it is)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SCRIPT
    path.write_bytes(resources.files("export.harness_files").joinpath(SCRIPT).read_bytes())
    return path
