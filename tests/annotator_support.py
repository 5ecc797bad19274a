"""Shared set-up for the annotator tests: a real workspace filled with the sample content."""

from __future__ import annotations

from dataclasses import dataclass

from annotator.actions import Reviewer
from annotator.render import PdfRenderer
from annotator.sample import load_sample
from curation.workspace import Workspace


@dataclass
class Desk:
    workspace: Workspace
    reviewer: Reviewer
    ids: list[str]


def sample_desk(workspace: Workspace) -> Desk:
    ids = load_sample(workspace)
    return Desk(workspace, Reviewer(workspace.store, PdfRenderer(workspace.blobs)), ids)


def fresh_reviewer(desk: Desk) -> Reviewer:
    """A new app instance on the same workspace: what a restarted server or a refreshed page sees."""
    return Reviewer(desk.workspace.store, PdfRenderer(desk.workspace.blobs))
