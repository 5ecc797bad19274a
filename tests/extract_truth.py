"""Comparing extracted items with the sample exam's ground truth, field by field."""

from __future__ import annotations

import json
from pathlib import Path

from curation.core.item import Item, parse_item


def load_truth(path: Path) -> list[Item]:
    return [parse_item(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()]


def _option_view(item: Item) -> list[tuple[str, str | None]]:
    return [(option.text, option.image.blob if option.image else None) for option in item.options]


def differences(truth: Item, got: Item, *, bbox_tolerance: float = 1.0) -> list[str]:
    """Everything in `got` that does not match `truth` (empty when they agree)."""
    problems = []
    number = truth.source.number
    for name, expected, actual in (
        ("stem", truth.stem, got.stem),
        ("options", _option_view(truth), _option_view(got)),
        ("answer", truth.answer, got.answer),
        ("points", truth.points, got.points),
        ("images", [(i.blob, i.kind, i.latex) for i in truth.images], [(i.blob, i.kind, i.latex) for i in got.images]),
        ("subject", truth.source.subject, got.source.subject),
        ("part", truth.source.part, got.source.part),
        ("page", truth.source.page, got.source.page),
        # the Korea tagging stage that follows extraction adds its own reason; the truth is extraction's
        ("review", truth.flags.review_reasons, [r for r in got.flags.review_reasons if r != "korea-specific candidate"]),
        ("passage group", truth.extra.get("passage_group"), got.extra.get("passage_group")),
    ):
        if expected != actual:
            problems.append(f"question {number} {name}: expected {expected!r}, got {actual!r}")
    if max(abs(a - b) for a, b in zip(truth.source.bbox, got.source.bbox, strict=True)) > bbox_tolerance:
        problems.append(f"question {number} bbox: expected {truth.source.bbox}, got {got.source.bbox}")
    truth_images = [i.provenance.bbox for i in truth.images] + [o.image.provenance.bbox for o in truth.options if o.image]
    got_images = [i.provenance.bbox for i in got.images] + [o.image.provenance.bbox for o in got.options if o.image]
    for expected, actual in zip(truth_images, got_images, strict=False):
        if max(abs(a - b) for a, b in zip(expected, actual, strict=True)) > bbox_tolerance:
            problems.append(f"question {number} image bbox: expected {expected}, got {actual}")
    return problems
