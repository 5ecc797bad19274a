"""Items as release rows (their columns are declared in export/features.py).

Every item's key is carried by the key columns (`answer_format`, `key` as JSON text, `answer_text`,
`points`; export/features.py). A choice key keeps its option-number columns too, as before those
columns: `answer` (1-based) with its letter, and `answers` for multi-answer items (`question_format`
multiple_answers when the key requires all of them); other formats leave them empty. Images are
embedded bytes with a normalised path (their content hash), never a local path.

The content hash of a row (`row_hash`) leaves the key columns out where they say nothing the
option-number columns do not (a choice key, or none, and no points), so a choice-only release
keeps the row hashes and content hash it had before the key columns existed.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any

from curation.core.blobs import BlobStore
from curation.core.facets import release_facets
from curation.core.facets import values as facet_values
from curation.core.item import Item
from evaluation.release_records import ReleaseRow
from export.features import KEY_COLUMNS
from scoring import AnswerKey, ChoiceKey

LETTERS = "ABCDEFGHIJ"
RATIONALE_RELEASED = ("adopted", "minor_fix", "major_fix")


def _image(blobs: BlobStore, ref: str) -> dict[str, Any]:
    return {"bytes": blobs.get(ref), "path": ref}


@lru_cache(maxsize=1024)
def _choice_columns(options: tuple[int, ...], require_all: bool) -> tuple[str, str]:
    return key_columns(ChoiceKey(options=list(options), require_all=require_all))


def key_columns(key: AnswerKey) -> tuple[str, str]:
    """(`key` as JSON text, `answer_text`) of a key: its checker's dict and its plain text."""
    data = key.as_dict()
    return json.dumps(data, ensure_ascii=False), key.text()


def _key_values(item: Item) -> dict[str, Any]:
    key = item.answer
    if key is None:
        return {"answer_format": None, "key": None, "answer_text": None, "points": item.points}
    if isinstance(key, ChoiceKey):  # a handful of distinct choice keys in any release: each written once
        text, plain = _choice_columns(tuple(key.options), key.require_all)
    else:
        text, plain = key_columns(key)
    return {"answer_format": key.format, "key": text, "answer_text": plain, "points": item.points}


def item_row(item: Item, blobs: BlobStore, *, explicit: bool = False) -> dict[str, Any]:
    answers = item.answer_list()
    single = answers[0] if len(answers) == 1 else None
    rationale = item.rationale if item.rationale and item.rationale.status in RATIONALE_RELEASED else None
    question = item.stem
    if item.paraphrase is not None and item.paraphrase.status == "accepted":
        question = item.paraphrase.text  # reviewed paraphrase: the original stays in question_original
    if explicit and item.explicit_variant:
        question = item.explicit_variant
    row = {
        "id": item.id,
        **facet_values(item, release_facets()),
        "question": question,
        "question_original": item.stem if question != item.stem else None,
        "question_images": [_image(blobs, image.blob) for image in item.images],
        "options": [{"text": option.text, "image": _image(blobs, option.image.blob) if option.image else None}
                    for option in item.options],
        "answer": single,
        "answer_letter": LETTERS[single - 1] if single else None,
        "answers": answers,
        **_key_values(item),
        "rationale": rationale.text if rationale else None,
        "rationale_status": rationale.status if rationale else None,
        "original_option_order": item.original_option_order,
    }
    key = item.choice_key()
    if key is not None and key.require_all != (row["question_format"] == "multiple_answers"):
        # a harness reads "all options required" from the row's question format: it follows the key
        row["question_format"] = "multiple_answers" if key.require_all else "single_answer"
    ReleaseRow.model_validate(row)  # the release contract; the row already has its exact shape
    return row


def _image_digest(image: dict[str, Any] | None) -> dict[str, str] | None:
    return None if image is None else {"sha256": hashlib.sha256(image["bytes"]).hexdigest()}


def says_more_than_options(row: dict[str, Any]) -> bool:
    """Whether a row's key columns hold anything its option-number columns do not: a key of another
    format than choice, or points."""
    return row.get("answer_format") not in (None, "choice") or row.get("points") is not None


def canonical_row(row: dict[str, Any]) -> dict[str, Any]:
    """The row with image bytes replaced by their hash: what the content hash covers. Images sit
    only in `question_images` and the options (the `ReleaseRow` shape). The key columns of a row
    whose option numbers say it all are left out (see the module docstring)."""
    canonical = row | {"question_images": [_image_digest(image) for image in row["question_images"]],
                       "options": [option | {"image": _image_digest(option["image"])} for option in row["options"]]}
    if not says_more_than_options(row):
        for name in KEY_COLUMNS:
            canonical.pop(name, None)
    return canonical


def row_hash(row: dict[str, Any]) -> str:
    text = json.dumps(canonical_row(row), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
