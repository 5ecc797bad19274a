"""Model families: the models that must be held out together when a subset or an item bank is
judged on models it was not fitted on.

A model's name is read as CONFIGURATION[-SEED][_CHECKPOINT]: `roberta-base-10M-2_25` is epoch 25
of seed 2 of `roberta-base-10M`. Checkpoints of one run and the seeds of one configuration learn
the same things, so they are one family: `roberta-base-10M-1_50`, `-2_best` and `-3_1` are all
`roberta-base-10M`. (Taking the name up to its last `_` alone made each seed a family of its own,
and a held-out model's sibling seeds stayed among the training models.)

A backend prefix (`openai-compatible:`) is not part of the family. A trailing `-N` (one or two digits, or `-seedN`) is read as a seed only where the rest of the name
still has a `-` in it and another model of the list shares that rest: `gpt-4` stays `gpt-4`, and a
lone `model-x-2` stays itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SEED = re.compile(r"^(?P<stem>[^-].*-[^-]+)-(?:seed)?(?P<seed>\d{1,2})$")


_BACKEND = re.compile(r"^[a-z][a-z0-9-]*:")  # `openai-compatible:`, `hf:` … as a workspace's runs name their models


def _checkpoint_run(name: str) -> str:
    name = _BACKEND.sub("", name, count=1)
    return name.rsplit("_", 1)[0] if "_" in name else name


def model_families(models: Sequence[str]) -> list[str]:
    """Each model's family name, in the order given."""
    runs = [_checkpoint_run(m) for m in models]
    stems = [(match.group("stem") if (match := _SEED.match(run)) else None) for run in runs]
    seeds: dict[str, set[str]] = {}
    for stem, run in zip(stems, runs, strict=True):
        if stem is not None:
            seeds.setdefault(stem, set()).add(run)
    return [stem if stem is not None and len(seeds[stem]) > 1 else run for stem, run in zip(stems, runs, strict=True)]


def family_folds(models: Sequence[str]) -> list[list[int]]:
    """Row indices of each family's models (families in order of first appearance): the folds of
    leave-one-family-out cross-validation."""
    folds: dict[str, list[int]] = {}
    for row, family in enumerate(model_families(models)):
        folds.setdefault(family, []).append(row)
    return list(folds.values())
