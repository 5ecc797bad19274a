"""The records of item analysis (`benchsmith analyze`): the 2PL fit's per-item and per-model
figures (`analyze items`), a subset chosen to predict full-set accuracy (`analyze subset`, also
carried by a release's `tiny` config) and the accuracy estimated from it (`analyze estimate`).
Suspects, read by the review app too, are in `evaluation.records`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

ITEM_ANALYSIS_VERSION = 1


class ItemStats(BaseModel):
    """One item's figures over the models that answered it (`n`), with the content hash they answered."""

    model_config = ConfigDict(extra="forbid")
    item_id: str
    content_hash: str | None = None
    n: int  # models with a determined answer
    share_correct: float | None = None
    item_rest: float | None = None  # correlation, across models, of this item with their score on the rest
    difficulty: float
    difficulty_low: float | None = None
    difficulty_high: float | None = None
    discrimination: float
    discrimination_low: float | None = None
    discrimination_high: float | None = None
    key: int | None = None
    options: dict[str, float] = Field(default_factory=dict)  # option number → share of the models choosing it
    options_strong: dict[str, float] = Field(default_factory=dict)  # the same among the strongest third
    top_distractor: int | None = None
    top_distractor_share: float | None = None
    unparseable: int = 0  # cells with an unparseable or error outcome


class ModelAbility(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    n: int  # items with a determined answer
    share_correct: float | None = None
    ability: float | None = None
    ability_se: float | None = None


class ItemAnalysis(BaseModel):
    """A 2PL fit of the solve matrix and the per-item and per-model figures read from it."""

    model_config = ConfigDict(extra="forbid")
    created_at: str
    source: str  # "workspace" or the matrix file
    method: str
    unparseable_as_wrong: bool = False
    bootstrap: int  # model resamples behind the intervals
    level: float  # of the intervals
    converged: bool
    iterations: int
    stale_skipped: int = 0
    models: list[ModelAbility]
    items: list[ItemStats]
    notes: list[str] = Field(default_factory=list)
    record_version: int = ITEM_ANALYSIS_VERSION


class SubsetSpec(BaseModel):
    """k items chosen to predict full-set accuracy, with what estimation needs: every item's 2PL
    parameters (the unseen ones are predicted) and the chosen items' content hashes."""

    model_config = ConfigDict(extra="forbid")
    created_at: str
    method: str
    items: list[str]
    content_hashes: dict[str, str] = Field(default_factory=dict)
    all_items: list[str]
    discrimination: list[float]  # per item of all_items
    difficulty: list[float]
    training_models: list[str]
    source: str
    record_version: int = ITEM_ANALYSIS_VERSION
    # estimation parameters (absent in older files: a N(0, 1) ability prior, the full likelihood)
    training_abilities: list[float] = Field(default_factory=list)  # the ability prior's support
    likelihood_weight: float = 1.0


class AccuracyEstimate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    accuracy: float  # estimated full-set accuracy, a fraction
    low: float
    high: float
    answered: int  # subset items the estimate rests on
    ability: float | None = None
