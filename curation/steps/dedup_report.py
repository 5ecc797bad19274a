"""The dedup stage's JSON report (`runs/dedup-TIME.json`): what was compared, merged and queued,
written by `dedup_stage.run_dedup` and read by the release card. Reports written by earlier
versions load too: fields added since read as their defaults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_serializer
from pydantic.functional_serializers import SerializerFunctionWrapHandler

from curation.core.errors import WorkspaceError
from curation.steps.dedup import DedupConfig, DedupResult, Pair

REPORT_GLOB = "dedup-*.json"


class _Report(BaseModel):
    model_config = ConfigDict(extra="ignore")


class BandCount(_Report):
    pairs: int
    same_answer: int


class DedupSummary(_Report):
    """`DedupResult.summary()`; a verdict's pair count is present only when some pair has it."""

    pool: int
    candidate_pairs: int
    pairs_over_threshold: int
    pairs_answer_conflict: int | None = None
    pairs_answer_differs: int | None = None
    pairs_inverted: int | None = None
    pairs_merged: int | None = None
    pairs_stem_gate: int | None = None
    clusters: int
    excluded: int
    exact_duplicates_excluded: int = 0  # the next four: absent in reports before exact duplicates pool-wide
    cross_scope_exact_excluded: int = 0
    answer_conflict_items: int = 0
    conflict_copies_excluded: int = 0
    largest_cluster: int
    merged_same_answer_by_ratio: dict[str, BandCount] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _without_absent_verdicts(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {key: value for key, value in handler(self).items() if value is not None}


class AnswerConflict(_Report):
    items: list[str]  # the two items left in play, sorted
    ratio: float  # the highest ratio of the pairs behind it
    pairs: list[list[str]]


class DedupReport(_Report):
    config: DedupConfig
    summary: DedupSummary
    clusters: list[list[str]]  # kept item first
    pairs: list[Pair]
    answer_conflicts: list[AnswerConflict] = Field(default_factory=list)  # absent before answer conflicts

    @classmethod
    def of(cls, result: DedupResult) -> DedupReport:
        return cls(
            config=result.config, summary=DedupSummary.model_validate(result.summary()), clusters=result.clusters,
            pairs=result.pairs,
            answer_conflicts=[AnswerConflict(items=list(ends), ratio=max(p.ratio for p in behind),
                                             pairs=[[p.first, p.second] for p in behind])
                              for ends, behind in result.standing_conflicts().items()],
        )

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.model_dump(mode="json"), ensure_ascii=False, indent=2), encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> DedupReport:
        try:
            return cls.model_validate_json(path.read_bytes())
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise WorkspaceError(f"{path}: malformed dedup report: {where}: {first['msg']}") from None


def latest_dedup_report(runs_dir: Path) -> DedupReport | None:
    reports = sorted(runs_dir.glob(REPORT_GLOB))
    return DedupReport.read(reports[-1]) if reports else None
