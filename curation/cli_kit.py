"""The CLI kit every package's `cli.py` shares: the consoles, the common options and the
workspace lookup. It imports nothing heavy, so `benchsmith --help` stays fast."""

from __future__ import annotations

import getpass
import json
import sys
from pathlib import Path
from typing import Annotated, Any, TypeGuard, TypeVar

import typer
from rich.console import Console

from curation.core.errors import BenchsmithError
from curation.core.workspace import Workspace, open_workspace
from curation.llm import ModelClients

console = Console(stderr=True, soft_wrap=True)
out = Console(soft_wrap=True)

WorkspaceOption = Annotated[
    Path | None,
    typer.Option("--workspace", "-w", envvar="BENCHSMITH_WORKSPACE", help="workspace folder", show_default=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="print JSON for scripts")]
AuthorOption = Annotated[
    str | None, typer.Option("--author", envvar="BENCHSMITH_USER", help="who makes the change (default: login name)")
]


Choice = TypeVar("Choice", bound=str)


def is_one_of(value: str, choices: tuple[Choice, ...]) -> TypeGuard[Choice]:
    """An option's text is one of a Literal's values (narrows it to that Literal for the type checker)."""
    return value in choices


def current_author(author: str | None) -> str:
    return author or getpass.getuser() or "unknown"


def workspace_from(path: Path | None) -> Workspace:
    return open_workspace(path)


def model_clients(ctx: typer.Context) -> ModelClients:
    """What builds model clients for this command line: put on its context by the root command."""
    clients = ctx.find_object(ModelClients)
    if clients is None:
        raise BenchsmithError("model-using curation steps need the evaluation runners: run them as `benchsmith` commands")
    return clients


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
