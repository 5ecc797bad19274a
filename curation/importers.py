"""Importing items from the shapes exam material comes in.

Formats: benchsmith JSONL; Q-Net CSV (`Test Name, Year, Session, Subject, Number, Question,
Question_image, Option 1..4, Answer`, other column names through a map); K-MetBench JSON
(`question{text,image}`, `choices[{text,image}]`, `answer`, `part`, `korean`, `multimodal`,
`rationale`); KMMLU JSON/CSV (`question, A..D, answer`); 한국사능력검정 JSON (`questions` with
circled-digit `choices`, keys in a sibling `answers_*.json`). Text files may be UTF-8, UTF-8
with a BOM, or CP949, and may sit inside a Markdown code fence; a Q-Net CSV may lack its
header row. A bad row is reported with file, row and reason; the rest import.

Q-Net files hold one exam each: every row gets the file's majority exam name (or `exam`),
and the variants are reported. A file that numbers a second section from 1 again gets ids
`…-s2` for that section's rows (stable across re-imports). Rows whose text looks garbled
(U+FFFD, mojibake) import with status `in_review` and the reason.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from curation.answers import CIRCLED, parse_answer_key
from curation.core.blobs import BlobStore
from curation.core.errors import BenchsmithError
from curation.core.item import Item, ItemValidationError, parse_item
from curation.core.item_ids import make_item_id, nfc
from curation.core.store import ItemQuery, Store
from curation.csv_shapes import headerless_qnet_columns, strip_code_fence
from curation.exam_names import UNKNOWN, majority_name
from curation.garbled import garbled_fields
from curation.kmmmu_import import is_kmmmu, kmmmu_rows
from curation.steps.korea_stage import differs_only_by_tagging, tag_new_items

KMMLU_LICENSE = "cc-by-nd-4.0"  # HAERAE-HUB/KMMLU's card
FORMATS = ("auto", "jsonl", "qnet", "kmetbench", "kmmlu", "korhist", "kmmmu")
QNET_COLUMNS = ("Test Name", "Year", "Session", "Subject", "Number", "Question", "Question_image",
                "Option 1", "Option 2", "Option 3", "Option 4", "Answer")
# Q-Net exports name the image column differently from file to file.
QNET_IMAGE_ALIASES = ("Question_image", "image", "Image", "question_image")


class ImportFormatError(BenchsmithError):
    """The file as a whole cannot be read (not the format, undecodable, unparseable)."""


@dataclass
class RowError:
    row: int
    reason: str


@dataclass
class FileReport:
    path: str
    format: str
    rows: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    garbled: int = 0
    korea_tagged: int = 0  # new or updated items the Korea lexicon marked as candidates (stage tag-korea)
    errors: list[RowError] = field(default_factory=list)
    fatal: str | None = None
    notes: list[str] = field(default_factory=list)  # how the file was read (no header, fenced …)
    exam_variants: dict[str, int] = field(default_factory=dict)  # Test Name -> rows, when not one name

    @property
    def ok(self) -> bool:
        return self.fatal is None and not self.errors


def read_text(path: Path) -> str:
    """Decode UTF-8 (BOM or not) or CP949, refusing anything else."""
    data = path.read_bytes()
    for encoding in ("utf-8-sig", "cp949"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise ImportFormatError(f"{path}: not UTF-8 or CP949 text")


# -- row readers: each yields (row number, item dict or exception) ----------------------------
Row = tuple[int, dict[str, Any] | Exception]


def _jsonl_rows(path: Path, text: str, context: ImportContext) -> Iterator[Row]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as error:
            yield number, ValueError(f"not JSON: {error.msg} at column {error.colno}")


def _csv_records(text: str, fieldnames: list[str] | None = None) -> tuple[list[str], Iterator[tuple[int, dict[str, str]]]]:
    reader = csv.DictReader(io.StringIO(text), fieldnames=fieldnames)
    header = [name.strip() for name in reader.fieldnames or []]
    reader.fieldnames = header
    return header, enumerate(reader, start=1)


def _qnet_rows(path: Path, text: str, context: ImportContext) -> Iterator[Row]:
    fieldnames = None if context.column_map else headerless_qnet_columns(text, QNET_COLUMNS)
    if fieldnames:
        context.notes.append(f"no header row: read as the Q-Net columns ({len(fieldnames)})")
    header, records = _csv_records(text, fieldnames)
    columns = {name: context.column_map.get(name, name) for name in QNET_COLUMNS}
    if columns["Question_image"] not in header:
        columns["Question_image"] = next((a for a in QNET_IMAGE_ALIASES if a in header), "")
    missing = [f"{ours} (as {theirs!r})" if ours != theirs else ours
               for ours, theirs in columns.items() if theirs and theirs not in header and ours != "Question_image"]
    if missing:
        raise ImportFormatError(f"{path}: missing columns {', '.join(missing)}; map them with --map OURS=THEIRS")
    rows = list(records)
    if not context.exam:
        names = Counter(nfc(row.get(columns["Test Name"])) for _, row in rows)
        context.file_exam = majority_name(names)
        if len(names) > 1:
            context.exam_variants = dict(names.most_common())
    seen: Counter[str] = Counter()
    for number, row in rows:
        try:
            item = _qnet_item(row, columns, context)
        except ValueError as error:
            yield number, error
            continue
        seen[item["id"]] += 1
        if seen[item["id"]] > 1:  # the numbering restarted: a later section of the paper
            item["id"] = f"{item['id']}-s{seen[item['id']]}"
            context.section_rows += 1
        yield number, item


def _qnet_item(row: dict[str, str], columns: dict[str, str], context: ImportContext) -> dict[str, Any]:
    def cell(name: str) -> str:
        column = columns[name]
        return nfc(row.get(column)) if column else ""

    exam = context.exam or context.file_exam or cell("Test Name")
    year, session, subject = cell("Year"), cell("Session"), cell("Subject")
    number_text = cell("Number")
    if not number_text.isdigit():
        raise ValueError(f"Number {number_text!r} is not a question number")
    options = [{"text": cell(f"Option {n}")} for n in range(1, 5) if cell(f"Option {n}")]
    image_note = cell("Question_image")
    flags: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    if image_note and image_note not in ("text_only", "X", "x", "-"):
        extra["question_image"] = image_note
        flags["review_reasons"] = ["source marks a question image that was not imported"]
    answer_text = cell("Answer")
    return {
        "id": make_item_id(exam, year, session, subject, f"{int(number_text):03d}"),
        "source": {
            "exam": exam or UNKNOWN,
            "session": "-".join(part for part in (year, session) if part) or None,
            "subject": subject or None,
            "number": int(number_text),
            "origin": context.origin,
        },
        "stem": cell("Question"),
        "options": options,
        "answer": parse_answer_key(answer_text, len(options)) if answer_text else None,
        "flags": flags,
        "taxonomy": {"subject": subject or None},
        "extra": extra,
    }


def _kmmlu_record(record: dict[str, Any], number: int, context: ImportContext) -> dict[str, Any]:
    options = [{"text": nfc(record[letter])} for letter in "ABCDE" if nfc(record.get(letter))]
    category = nfc(record.get("Category")) or None
    extra = {key: value for key, value in record.items() if key not in {"question", "answer", "Category", *"ABCDE"}}
    answer = record.get("answer")
    return {
        "id": make_item_id(context.exam or "kmmlu", category, context.stem, f"{number:04d}"),
        "source": {"exam": context.exam or "KMMLU", "subject": category, "number": number, "origin": context.origin,
                   "license": KMMLU_LICENSE},
        "stem": nfc(record.get("question")),
        "options": options,
        "answer": parse_answer_key(answer, len(options)) if answer not in (None, "") else None,
        "taxonomy": {"subject": category},
        "extra": extra,
    }


def _kmmlu_rows(path: Path, text: str, context: ImportContext) -> Iterator[Row]:
    if path.suffix.lower() == ".csv":
        _, rows = _csv_records(text)
        records: Iterator[tuple[int, dict[str, Any]]] = rows
    else:
        records = enumerate(_json_list(path, text), start=1)
    for number, record in records:
        try:
            yield number, _kmmlu_record(record, number, context)
        except (ValueError, TypeError, AttributeError) as error:
            yield number, ValueError(str(error))


def _json_list(path: Path, text: str) -> list[Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ImportFormatError(f"{path}: not JSON: {error.msg} at line {error.lineno}") from None
    if isinstance(data, dict):
        for key in ("items", "data", "questions"):
            if isinstance(data.get(key), list):
                return data[key]
    if not isinstance(data, list):
        raise ImportFormatError(f"{path}: expected a JSON list of items")
    return data


def _image_ref(value: Any, base: Path, blobs: BlobStore | None, kind: str = "raster") -> dict[str, Any] | None:
    """An image given as a path relative to the file: copied into the blob store."""
    if not value:
        return None
    if blobs is None:
        raise ValueError("the item has images but no workspace blob store was given")
    image_path = (base / unicodedata.normalize("NFC", str(value))).resolve()
    if not image_path.is_file():
        # Some archives store Hangul file names decomposed (NFD).
        alt = base / unicodedata.normalize("NFD", str(value))
        if not alt.is_file():
            raise ValueError(f"image {value!r} not found next to the file")
        image_path = alt
    ext = image_path.suffix.lstrip(".").lower() or "png"
    return {"blob": blobs.put(image_path.read_bytes(), ext), "kind": kind}


def _kmetbench_rows(path: Path, text: str, context: ImportContext) -> Iterator[Row]:
    for number, record in enumerate(_json_list(path, text), start=1):
        try:
            question = record["question"]
            if isinstance(question, str):
                question = {"text": question, "image": None}
            options = []
            for choice in record.get("choices") or record.get("options") or []:
                if isinstance(choice, str):
                    choice = {"text": choice, "image": None}
                options.append({"text": nfc(choice.get("text") or ""),
                                "image": _image_ref(choice.get("image"), path.parent, context.blobs)})
            answer = record.get("answer")
            if answer not in (None, "") and context.answer_base == 0:
                answer = int(answer) + 1
            image = _image_ref(question.get("image"), path.parent, context.blobs)
            rationale = record.get("rationale")
            part = record.get("part")
            korean = record.get("korean")
            yield number, {
                "id": str(record.get("id") or make_item_id(context.exam or "kmetbench", context.stem, f"{number:04d}")),
                "source": {"exam": context.exam or record.get("exam") or "K-MetBench",
                           "part": None if part is None else str(part), "number": record.get("number") or number,
                           "origin": context.origin},
                "stem": nfc(question.get("text") or ""),
                "options": options,
                "answer": parse_answer_key(answer, len(options)) if answer not in (None, "") else None,
                "images": [image] if image else [],
                "flags": {"korea_specific": None if korean is None else bool(korean)},
                "rationale": {"text": nfc(rationale), "status": "adopted"} if rationale else None,
                "taxonomy": {"part": None if part is None else str(part)},
            }
        except (KeyError, TypeError, AttributeError, ValueError) as error:
            reason = f"missing field {error}" if isinstance(error, KeyError) else str(error)
            yield number, ValueError(reason)


def _korhist_rows(path: Path, text: str, context: ImportContext) -> Iterator[Row]:
    answers: dict[int, str] = {}
    for key_file in sorted(path.parent.glob("answers*.json")):
        for entry in _json_list(key_file, read_text(key_file)):
            answers[int(entry["question_no"])] = str(entry["correct_answer"])
    for number, record in enumerate(_json_list(path, text), start=1):
        try:
            choices = record["choices"]
            keys = list(choices)
            if keys != list(CIRCLED[: len(keys)]):
                # A missing or merged marker would shift every later option under the key.
                raise ValueError(f"choices are marked {' '.join(keys)}: expected ① to {CIRCLED[len(keys) - 1]} in order")
            options = [{"text": nfc(choices[key])} for key in keys]
            material = nfc(record.get("source_material"))
            stem = nfc(record["question_text"]) + (f"\n\n{material}" if material else "")
            image = _image_ref(record.get("image_path"), path.parent, context.blobs) if record.get("has_image") else None
            question_no = int(record["question_no"])
            key = answers.get(question_no) or record.get("correct_answer")
            exam = context.exam or f"한국사능력검정시험 {record.get('level', '')}".strip()
            yield number, {
                "id": make_item_id("korhist", record.get("exam_no"), record.get("level"), f"{question_no:02d}"),
                "source": {"exam": exam, "session": str(record.get("exam_no") or "") or None, "number": question_no,
                           "origin": context.origin},
                "stem": stem,
                "options": options,
                "answer": parse_answer_key(key, len(options)) if key else None,
                "images": [image] if image else [],
                "extra": {key: record[key] for key in ("score", "keywords", "image_note") if record.get(key)},
            }
        except (KeyError, TypeError, ValueError) as error:
            yield number, ValueError(f"missing field {error}" if isinstance(error, KeyError) else str(error))


READERS: dict[str, Callable[[Path, str, ImportContext], Iterator[Row]]] = {
    "jsonl": _jsonl_rows,
    "qnet": _qnet_rows,
    "kmetbench": _kmetbench_rows,
    "kmmlu": _kmmlu_rows,
    "korhist": _korhist_rows,
    "kmmmu": kmmmu_rows,
}


@dataclass
class ImportContext:
    origin: str
    stem: str
    exam: str | None = None
    column_map: dict[str, str] = field(default_factory=dict)
    answer_base: int = 1
    blobs: BlobStore | None = None
    id_suffix: str | None = None
    file_exam: str | None = None  # the majority name of a Q-Net file
    exam_variants: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    section_rows: int = 0
    images_dir: Path | None = None  # KMMMU: where the files of its image links are


def detect_format(path: Path, text: str) -> str:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return "jsonl"
    if suffix == ".csv":
        if headerless_qnet_columns(text, QNET_COLUMNS):
            return "qnet"
        header = next(csv.reader(io.StringIO(text)), [])
        names = {name.strip() for name in header}
        if {"Option 1", "Question"} <= names:
            return "qnet"
        if is_kmmmu(header):
            return "kmmmu"
        if {"question", "A", "B"} <= names:
            return "kmmlu"
        return "qnet"  # a --map may still make it readable
    if suffix == ".json":
        stripped = text.lstrip()
        if stripped.startswith("{") and '"questions"' in stripped[:2000] and '"choices"' in stripped:
            return "korhist"
        if '"choices"' in stripped[:20000]:
            return "kmetbench"
        return "kmmlu"
    raise ImportFormatError(f"{path}: cannot tell the format from the name; pass --format ({', '.join(FORMATS[1:])})")


def import_file(
    path: Path,
    store: Store,
    *,
    fmt: str = "auto",
    exam: str | None = None,
    column_map: dict[str, str] | None = None,
    answer_base: int = 1,
    blobs: BlobStore | None = None,
    author: str = "import",
    force: bool = False,
    id_suffix: str | None = None,
    images_dir: Path | None = None,
) -> FileReport:
    """Import one file. Items already in the store are left as they are (later stages may
    have revised them) unless `force`, which writes the file's version as a new revision.
    `id_suffix` is appended to every id of the file (two files that number alike)."""
    path = Path(path)
    report = FileReport(str(path), fmt)
    context = ImportContext(path.name, path.stem, exam, column_map or {}, answer_base, blobs, id_suffix,
                            images_dir=images_dir)
    try:
        if not path.is_file():
            raise ImportFormatError(f"{path}: no such file")
        text, fenced = strip_code_fence(read_text(path))
        if fenced:
            report.notes.append("inside a Markdown code fence: read the text between the fence lines")
        report.format = fmt if fmt != "auto" else detect_format(path, text)
        items: list[tuple[int, Item]] = []
        for number, result in READERS[report.format](path, text, context):
            report.rows += 1
            if isinstance(result, Exception):
                report.errors.append(RowError(number, str(result)))
                continue
            report.garbled += _mark_garbled(result)
            if id_suffix:
                result["id"] = make_item_id(result.get("id"), id_suffix)
            try:
                items.append((number, parse_item(result)))
            except ItemValidationError as error:
                report.errors.append(RowError(number, str(error)))
    except ImportFormatError as error:
        report.fatal = str(error)
        return report
    finally:
        report.notes += context.notes
        report.exam_variants = context.exam_variants
    if context.exam_variants and context.file_exam:
        others = ", ".join(f"{name or '(empty)'!r} {count}" for name, count in context.exam_variants.items()
                           if name != context.file_exam)
        report.notes.append(f"exam names vary: all rows imported as {context.file_exam!r} "
                            f"({context.exam_variants[context.file_exam]} rows); others: {others}")
    if context.section_rows:
        report.notes.append(f"{context.section_rows} rows repeat an earlier question number: "
                            "imported as a later section (ids …-s2, …-s3)")
    if report.garbled:
        report.notes.append(f"{report.garbled} rows look garbled: imported with status in_review")
    first_row: dict[str, int] = {}
    unique: list[Item] = []
    for number, item in items:
        if item.id in first_row:
            report.errors.append(RowError(number, f"item id {item.id!r} already used by row {first_row[item.id]}"))
            continue
        first_row[item.id] = number
        unique.append(item)
    written = store.save_items(unique, author=author, stage="import", reason=f"import {path.name}",
                               on_existing="revise" if force else "skip")
    report.created, report.updated = len(written.created), len(written.updated)
    same = len(differs_only_by_tagging(store, unique, written.skipped)) if written.skipped else 0
    report.unchanged, report.skipped = len(written.unchanged) + same, len(written.skipped) - same
    report.korea_tagged = len(tag_new_items(store, unique, written.created + written.updated, author,
                                             created=written.created).changed)
    return report


def _mark_garbled(record: dict[str, Any]) -> bool:
    """Send a row whose text looks garbled to review (status and reason). True if it did."""
    options = record.get("options") or []
    texts = {"stem": str(record.get("stem") or "")}
    texts |= {f"option {k}": str(o.get("text") or "") for k, o in enumerate(options, start=1) if isinstance(o, dict)}
    found = garbled_fields(texts)
    if not found:
        return False
    flags = record.setdefault("flags", {}) if isinstance(record.get("flags", {}), dict) else {}
    reason = f"garbled text on import ({found}): compare with the source"
    reasons = flags.setdefault("review_reasons", [])
    if not any(r.startswith("garbled text on import") for r in reasons):
        reasons.append(reason)
    if record.get("status", "extracted") == "extracted":
        record["status"] = "in_review"
    return True


def export_jsonl(store: Store, out: TextIO, query: ItemQuery | None = None) -> int:
    count = 0
    for stored in store.iter_items(query):
        out.write(json.dumps(stored.item.to_record(), ensure_ascii=False) + "\n")
        count += 1
    return count
