"""KMMMU's CSV shape: `question, answer, question_type, image_link, subject_macro, visual_type,
is_korean_specific` (and an `id` column, or the unnamed index column pandas writes, which
becomes the item id).

- `question_type` says the format: 객관식(단일정답) and 객관식(복수정답) are choice items when the
  question carries its options (`선택지:` with (1)…, ①…, or numbered lines at its end: they are
  split into options) and the key is option numbers — so is a question of another type that
  carries its options and whose key is option numbers (a 주관식 row asking which of 1)…4)); ㄱㄴㄷ
  keys are set keys; 주관식(수치/계산형) numeric or expression keys; 주관식(텍스트) / 주관식(단답형
  텍스트) text keys, or judged keys when the answer is long prose no checker can decide
  (`scoring.portable.guess_key`).
- `image_link` lists URLs. With `--images DIR` each is resolved to a local file (DIR/_index.csv
  mapping `image_link` → `local_file`, else the URL's file name in DIR, NFC or NFD); a link not
  found locally is kept as a reference in `extra.image_links` and the item goes to review.
"""

from __future__ import annotations

import ast
import csv
import io
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from curation.core.item_ids import make_item_id, nfc
from scoring.keys import ChoiceKey
from scoring.portable import guess_key

if TYPE_CHECKING:
    from curation.importers import ImportContext, Row

KMMMU_COLUMNS = frozenset({"question", "answer", "question_type"})
QUESTION_FORMATS = {"객관식(단일정답)": "single_answer", "객관식(복수정답)": "multiple_answers",
                    "주관식(수치/계산형)": "numeric", "주관식(텍스트)": "open", "주관식(단답형 텍스트)": "open"}
VISUAL_TYPES = {"digital_plot": "chart", "hand_drawn_sketch": "diagram", "photo_real": "photo"}
CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"
_MARKERS = (
    re.compile(r"^\s*\((\d{1,2})\)\s*(.+)$"),  # (1) text
    re.compile(r"^\s*([①-⑩])\s*(.+)$"),  # ① text
    re.compile(r"^\s*(\d{1,2})[.)]\s+(.+)$"),  # 1. text / 1) text
)


def is_kmmmu(header: list[str]) -> bool:
    return KMMMU_COLUMNS <= {name.strip() for name in header}


def _number(marker: str) -> int:
    return CIRCLED.index(marker) + 1 if marker in CIRCLED else int(marker)


def split_options(question: str) -> tuple[str, list[str]]:
    """(stem, options) when the question ends with options numbered 1..n (n ≥ 2) in order under one
    marker style; else (question, [])."""
    lines = question.rstrip().split("\n")
    for pattern in _MARKERS:
        options: list[str] = []
        start = len(lines)
        for index in range(len(lines) - 1, -1, -1):
            match = pattern.match(lines[index])
            if match is None:
                if lines[index].strip() or options:
                    break
                continue
            options.insert(0, match.group(2).strip())
            start = index
            if _number(match.group(1)) == 1:
                break
        numbers_ok = len(options) >= 2 and all(
            (m := pattern.match(lines[start + i])) is not None and _number(m.group(1)) == i + 1
            for i in range(len(options)))
        if numbers_ok:
            stem = "\n".join(lines[:start]).rstrip()
            stem = re.sub(r"\n*\s*선택지\s*:?\s*$", "", stem).rstrip()
            if stem:
                return stem, options
    return question, []


def _choice_numbers(answer: str, n_options: int) -> list[int] | None:
    tokens = [token for token in re.split(r"[\s,/]+", answer.strip()) if token]
    numbers: list[int] = []
    for token in tokens:
        token = token.strip("().번")
        if token in CIRCLED:
            numbers.append(CIRCLED.index(token) + 1)
        elif token.isdigit():
            numbers.append(int(token))
        else:
            return None
    if not numbers or any(not 1 <= number <= n_options for number in numbers) or len(set(numbers)) != len(numbers):
        return None
    return numbers


def answer_key(answer: str, question_type: str, options: list[str]) -> dict[str, Any]:
    """The typed key of a KMMMU row (as a dict)."""
    if options:
        numbers = _choice_numbers(answer, len(options))
        if numbers is not None:
            return ChoiceKey(options=numbers, require_all=len(numbers) > 1).model_dump(mode="json")
    return guess_key(answer, question_type or None, n_options=len(options))


def _links(value: str) -> list[str]:
    value = value.strip()
    if not value:
        return []
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        parsed = [part for part in re.split(r"[\s,]+", value) if part]
    return [str(link) for link in (parsed if isinstance(parsed, list) else [parsed]) if str(link).strip()]


class ImageFinder:
    """Image links → local files under a folder (its `_index.csv`, else the URL's file name)."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.index: dict[str, Path] = {}
        listing = folder / "_index.csv" if folder else None
        if listing is not None and listing.is_file():
            for row in csv.DictReader(io.StringIO(listing.read_text(encoding="utf-8-sig"))):
                local = nfc(row.get("local_file"))
                if row.get("image_link") and local:
                    self.index[nfc(row["image_link"])] = folder / Path(local).name  # type: ignore[operator]

    def find(self, link: str) -> Path | None:
        if self.folder is None:
            return None
        found = self.index.get(nfc(link))
        if found is not None and found.is_file():
            return found
        name = Path(unquote(urlparse(link).path)).name
        for form in ("NFC", "NFD"):
            candidate = self.folder / unicodedata.normalize(form, name)  # type: ignore[arg-type]
            if name and candidate.is_file():
                return candidate
        return None


def kmmmu_record(row: dict[str, str], number: int, context: ImportContext, images: ImageFinder) -> dict[str, Any]:
    question = nfc(row.get("question"))
    question_type = nfc(row.get("question_type"))
    answer = nfc(row.get("answer"))
    stem, options = split_options(question)
    if not question_type.startswith("객관식") and _choice_numbers(answer, len(options)) is None:
        stem, options = question, []  # an open question: its numbered lines stay in it
    key = answer_key(answer, question_type, options) if answer else None
    row_id = nfc(row.get("id") or row.get(""))
    blobs = context.blobs
    refs, missing = [], []
    for link in _links(row.get("image_link") or ""):
        path = images.find(link)
        if path is None or blobs is None:
            missing.append(link)
            continue
        refs.append({"blob": blobs.put(path.read_bytes(), path.suffix.lstrip(".").lower() or "png"), "kind": "raster"})
    korea = nfc(row.get("is_korean_specific")).lower()
    visual = nfc(row.get("visual_type"))
    extra: dict[str, Any] = {name: value for name, value in row.items()
             if name and name not in {"id", "question", "answer", "question_type", "image_link", "subject_macro",
                                      "visual_type", "is_korean_specific"} and value not in (None, "")}
    extra["question_type"] = question_type
    if visual:
        extra["visual_type"] = visual
    review: list[str] = []
    if missing:
        extra["image_links"] = missing
        review.append(f"{len(missing)} image(s) not found locally (kept as links; pass --images DIR)")
    subject = nfc(row.get("subject_macro")) or None
    question_format = QUESTION_FORMATS.get(question_type)
    if options and key is not None and key.get("format") == "choice" and not question_type.startswith("객관식"):
        question_format = "multiple_answers" if len(key["options"]) > 1 else "single_answer"  # it asks to choose
    return {
        "id": make_item_id(row_id) if row_id else make_item_id(context.exam or "kmmmu", context.stem, f"{number:04d}"),
        "source": {"exam": context.exam or "KMMMU", "subject": subject, "number": number, "origin": context.origin},
        "stem": stem,
        "options": [{"text": text} for text in options],
        "answer": key,
        "images": refs,
        "flags": {"korea_specific": {"true": True, "false": False}.get(korea), "review_reasons": review},
        "taxonomy": {"subject": subject, "visual_type": VISUAL_TYPES.get(visual), "question_format": question_format},
        "status": "in_review" if review else "extracted",
        "extra": extra,
    }


def kmmmu_rows(path: Path, text: str, context: ImportContext) -> Iterator[Row]:
    images = ImageFinder(context.images_dir)
    reader = csv.DictReader(io.StringIO(text))
    for number, row in enumerate(reader, start=1):
        try:
            yield number, kmmmu_record(row, number, context, images)
        except (ValueError, TypeError, OSError) as error:
            yield number, ValueError(str(error))
