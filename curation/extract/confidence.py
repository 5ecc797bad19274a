"""How far an extracted item can be trusted: the signals extraction saw, and one score from them.

Stored on the item under `extra["extraction_confidence"]` (no schema change: items written before
it, or by other importers, simply have none), validated by `ExtractionConfidence` on the way in
and on the way out. A reviewer's queue can sort by `score`, lowest first.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

EXTRA_KEY = "extraction_confidence"
CONFIDENCE_VERSION = 1
Signal = Literal["ocr", "option_count", "key_mismatch", "glyph_pictures", "latex_repaired", "vlm",
                 "option_crop", "formula_image", "no_stem"]
# what each signal costs: a likely wrong character costs less than a likely wrong question
PENALTY: dict[str, float] = {
    "ocr": 0.3, "option_count": 0.3, "key_mismatch": 0.3, "glyph_pictures": 0.15, "latex_repaired": 0.2,
    "vlm": 0.2, "option_crop": 0.2, "formula_image": 0.1, "no_stem": 0.4,
}


class ExtractionConfidence(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1  # CONFIDENCE_VERSION
    score: float = Field(ge=0.0, le=1.0, description="1 = nothing doubtful seen; lower = review first")
    signals: list[Signal] = Field(default_factory=list, description="what lowered the score, sorted")


def confidence(signals: set[str]) -> ExtractionConfidence:
    ordered = sorted(signals)
    score = max(0.0, 1.0 - sum(PENALTY[signal] for signal in ordered))
    return ExtractionConfidence(score=round(score, 2), signals=ordered)  # type: ignore[arg-type]


def confidence_record(signals: set[str]) -> dict[str, Any]:
    return confidence(signals).model_dump()


def read_confidence(extra: dict[str, Any]) -> ExtractionConfidence | None:
    """The stored confidence of an item's `extra`, or None when extraction did not record one."""
    value = extra.get(EXTRA_KEY)
    return None if value is None else ExtractionConfidence.model_validate(value)
