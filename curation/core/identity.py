"""Content identity: one hash of what a model sees of an item and what it is scored against.

Every record that refers to an item (a request, a run-log line, a judge verdict, a
solve-matrix cell, a filtering record) carries this hash. A consumer counts a record only
while the hash still matches the item's current content; otherwise the record is *stale*.
The hash covers the stem as shown under the variant in use, the options (text and image
blob), the question images, the answer key and the multi-answer rule; it leaves out what
neither the model nor the scorer sees (status, flags, provenance, review notes).
"""

from __future__ import annotations

import hashlib
import json

from curation.core.item import Item

CONTENT_HASH_VERSION = 1


def shown_stem(item: Item, variant: str) -> str:
    """The stem a model is shown under a variant (the probes hide it in the prompt, not here)."""
    if variant == "explicit" and item.explicit_variant:
        return item.explicit_variant
    return item.stem


def content_hash(item: Item, variant: str = "implicit") -> str:
    material = {
        "v": CONTENT_HASH_VERSION,
        "variant": variant,
        "stem": shown_stem(item, variant),
        "options": [[option.text, option.image.blob if option.image else None] for option in item.options],
        "images": [image.blob for image in item.images],
        "answer": item.answer_list(),
        "requires_all": item.requires_all_answers(),
    }
    if item.answer is not None and item.choice_key() is None:
        # open formats hash their whole key; a choice key hashes as schema 1 did, so records made
        # before typed keys stay current
        material["key"] = item.answer.model_dump(mode="json")
    text = json.dumps(material, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
