"""Sections that packages evaluation may not import add to `report --paper` (the item analysis
in filtering/irt/paper.py): the root command (benchsmith/cli.py) puts them in `SECTION_MAKERS`.
Light on purpose: loading the evaluation commands imports it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from curation.core.workspace import Workspace
    from evaluation.metrics import RunData


@dataclass
class PaperSection:
    markdown: str  # appended to report.md; links relative to the report folder
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class PaperSectionMaker(Protocol):
    def __call__(self, ws: Workspace, runs: list[RunData], out_dir: Path, *, seed: int = 0,
                 charts: bool = True) -> PaperSection: ...


SECTION_MAKERS: list[PaperSectionMaker] = []
