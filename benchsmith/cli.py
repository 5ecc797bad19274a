"""The `benchsmith` command: it only assembles the commands each package registers."""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.markup import escape

from curation.errors import BenchsmithError
from curation.item import ItemValidationError

app = typer.Typer(
    name="benchsmith",
    help="Turn exam papers into expert benchmarks.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _assemble() -> None:
    from benchsmith import demo
    from curation import cli as curation_cli

    curation_cli.register(app)
    demo.register(app)
    for module in ("evaluation.cli", "filtering.cli", "export.cli", "annotator.cli"):
        try:
            package_cli = __import__(module, fromlist=["register"])
        except ModuleNotFoundError as error:
            if error.name != module:
                raise
            continue
        package_cli.register(app)
    _wire_model_client()


def _wire_model_client() -> None:
    """Model-using curation steps get their model client from the evaluation runners."""
    from curation.llm import set_client_factory

    try:
        from evaluation.generation import client_factory
    except ModuleNotFoundError:
        return
    set_client_factory(client_factory)


_assemble()


def main() -> None:
    try:
        app()
    except ItemValidationError as error:
        Console(stderr=True, soft_wrap=True).print(f"[red]error[/]: invalid item: {escape(str(error))}", highlight=False)
        sys.exit(2)
    except BenchsmithError as error:
        Console(stderr=True, soft_wrap=True).print(f"[red]error[/]: {escape(str(error))}", highlight=False)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        Console(stderr=True, soft_wrap=True).print("interrupted: work saved so far is kept")
        sys.exit(130)


if __name__ == "__main__":
    main()
