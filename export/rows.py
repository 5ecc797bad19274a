"""Items as release rows (their columns are declared in export/features.py).

Inside benchsmith a choice key holds 1-based option numbers; a release carries them as they are
(`answer`, 1-based), with its letter, and `answers` for multi-answer items (`question_format`
multiple_answers when the key requires all of them). Keys of other formats have no columns yet. Images are
embedded bytes with a normalised path (their content hash), never a local path.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from curation.blobs import BlobStore
from curation.facets import release_facets
from curation.facets import values as facet_values
from curation.item import Item
from evaluation.records import ReleaseRow

LETTERS = "ABCDEFGHIJ"
RATIONALE_RELEASED = ("adopted", "minor_fix", "major_fix")


def _image(blobs: BlobStore, ref: str) -> dict[str, Any]:
    return {"bytes": blobs.get(ref), "path": ref}


def released_key(item: Item) -> bool:
    """Whether the release's columns carry the item's key: a choice key (or none) does; other formats
    have no release columns yet, and `build_release` leaves their items out, saying so."""
    return item.answer is None or item.choice_key() is not None


def item_row(item: Item, blobs: BlobStore, *, explicit: bool = False) -> dict[str, Any]:
    if not released_key(item):
        raise ValueError(f"{item.id}: a {item.answer_format} key has no release columns yet")
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


def canonical_row(row: dict[str, Any]) -> dict[str, Any]:
    """The row with image bytes replaced by their hash: what the content hash covers. Images sit
    only in `question_images` and the options (the `ReleaseRow` shape)."""
    return row | {"question_images": [_image_digest(image) for image in row["question_images"]],
                  "options": [option | {"image": _image_digest(option["image"])} for option in row["options"]]}


def row_hash(row: dict[str, Any]) -> str:
    text = json.dumps(canonical_row(row), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
