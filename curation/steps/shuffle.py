"""Seeded option shuffling: a permutation per item derived from (seed, item id).

Shuffling always starts from the original order (kept in `original_option_order`), so the
same seed gives the same order however often it runs, and the answer and option images
move with their options.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

from curation.core.item import Item, Option
from scoring.keys import AnswerKey, ChoiceKey


def permutation(seed: int, item_id: str, n: int) -> list[int]:
    """0-based: new position k holds original option permutation[k]."""
    digest = hashlib.sha256(f"{seed}:{item_id}".encode()).digest()
    order = list(range(n))
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    return order


def original_order(item: Item) -> Item:
    """The item with its options back in the order of the source paper."""
    if item.original_option_order is None:
        return item
    options: list[Option | None] = [None] * len(item.options)
    for current, original in enumerate(item.original_option_order):
        options[original - 1] = item.options[current]
    order = item.original_option_order
    answer = _remap(item.answer, lambda n: order[n - 1])
    return item.model_copy(update={"options": options, "answer": answer, "original_option_order": None})


def shuffle_item(item: Item, seed: int) -> Item:
    base = original_order(item)
    if len(base.options) < 2:
        return base
    order = permutation(seed, item.id, len(base.options))
    options = [base.options[k] for k in order]
    new_position = {original + 1: position + 1 for position, original in enumerate(order)}
    answer = _remap(base.answer, new_position.__getitem__)
    return item.model_copy(update={"options": options, "answer": answer,
                                   "original_option_order": [k + 1 for k in order]})


def _remap(answer: AnswerKey | None, mapping: Callable[[int], int]) -> AnswerKey | None:
    """A choice key's option numbers moved with their options (sorted); other keys name no option."""
    if not isinstance(answer, ChoiceKey):
        return answer
    return answer.model_copy(update={"options": sorted(mapping(n) for n in answer.options)})
