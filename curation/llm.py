"""The seam between curation steps that use a model and the evaluation runners.

`curation` never imports the runners: a model-using step receives a client object that
satisfies `TextModel` (duck-typed), and a model-using command receives `ModelClients`, which
builds one from a model spec. The root command (`benchsmith.cli`) makes that over the
evaluation runners (so every call is cached, logged append-only and resumable) and hands it to
the commands as the command line's context object (`curation.cli_kit.model_clients`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from curation.core.item import Item


@dataclass(frozen=True)
class TextRequest:
    key: str  # unique within a step, e.g. "ITEM_ID"
    system: str
    user: str
    attempt: int = 0  # a retry of the same request gets a fresh response (not the cached one)
    json_schema: dict[str, Any] | None = None
    images: tuple[bytes, ...] = ()  # PNG pictures shown before the user text (a vision model is needed)


@dataclass(frozen=True)
class TextResult:
    key: str
    text: str | None  # None when there is no usable answer: then `error` says why (refused, cut off …)
    error: str | None = None


@dataclass(frozen=True)
class SolvedItem:
    item_id: str
    answer: Any  # the answer read from the response (a choice's option number or numbers, …)
    rationale: str | None
    outcome: str  # correct | wrong | unparseable | error | undecided


class TextModel(Protocol):
    name: str

    def generate(self, requests: list[TextRequest], purpose: str) -> dict[str, TextResult]: ...

    def solve_with_rationale(self, items: list[Item], attempt: int) -> dict[str, SolvedItem]: ...


ClientFactory = Callable[[str, Any, bool], TextModel]  # (model spec, workspace, fresh: ignore earlier answers) -> client


@dataclass(frozen=True)
class ModelClients:
    """Builds the model client a command asks for by spec (`-m SPEC`)."""

    build: ClientFactory

    def __call__(self, spec: str, workspace: Any, fresh: bool = False) -> TextModel:
        return self.build(spec, workspace, fresh)
