"""The `benchsmith` command: it only assembles the commands each package registers.

A package's commands are imported when one of them runs (or its help is asked for), so
`benchsmith --help` lists every command from the table below without importing PyMuPDF,
SQLAlchemy, the runners or Gradio. `tests/test_cli.py` checks the table against what each
package really registers.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand, TyperGroup

from curation.llm import ModelClients

if TYPE_CHECKING:
    from typer._click import Command, Context  # the click that typer vendors: what TyperGroup takes

# command name → (module whose `register(app)` adds it, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("benchsmith.demo", "Run every stage on the built-in sample exam, offline, and print where the results are."),
    "init": ("curation.cli", "Create a workspace: benchsmith.toml, the store, blobs/, cache.db, runs/, releases/."),
    "schema": ("curation.cli", "Print the item JSON Schema."),
    "sample-exam": ("curation.cli", "Write the project's own sample exam PDF and its ground truth (OUT.truth.jsonl)."),
    "extract": ("curation.extract.cli_command", "Extract questions, options, figures and answers from exam PDFs into the store."),
    "keys": ("curation.keys_command", "Read answer-key files (PDF, CSV, JSON): forms, sections, answers, points."),
    "items": ("curation.cli", "Import, export, inspect and edit items."),
    "dedup": ("curation.cli", "Remove exact (whole pool) and near-duplicates: one kept per cluster; inversions and answer conflicts queued."),
    "shuffle": ("curation.cli", "Shuffle options per item (deterministic); answers remapped, the original order kept."),
    "tag": ("curation.cli", "Tag items: Korea-specific candidates, taxonomy."),
    "explicit": ("curation.cli", "Propose explicit variants (우리나라 → 한국 …) for Korea-specific items and candidates."),
    "paraphrase": ("curation.cli", "Paraphrase stems (term-preserving, original kept); results go to review."),
    "rationale": ("curation.cli", "Draft rationales for expert review."),
    "run": ("evaluation.cli", "Ask models every selected item; responses are cached and logged; a rerun resumes."),
    "judge": ("evaluation.cli", "Score each rationale of a reasoning run on four axes (1–5) against the reference rationale."),
    "report": ("evaluation.cli", "Accuracy per subset with bootstrap CIs, reasoning scores, error rates: Markdown, CSV, PNG."),
    "rescore": ("evaluation.cli", "Score every record of a run again from its logged text with today's checkers (nothing is re-sent): after a checker changes."),
    "runs": ("evaluation.cli", "Answer runs: import another tool's responses as a run, list runs, show a run's records, judge answers."),
    "probe": ("filtering.cli", "Shortcut probes: options-only and question-only runs; items solvable without the question."),
    "matrix": ("filtering.cli", "The solve matrix: items × models × attempts from the run logs."),
    "filter": ("filtering.cli", "Adversarial filtering and hard subsets."),
    "analyze": ("filtering.cli", "Distribution shift and model comparisons."),
    "evaluate": ("export.cli", "Evaluate models on a release with the runners (same cache, logs and report as `run`)."),
    "release": ("export.cli", "Build and publish versioned releases."),
    "annotate": ("annotator.cli", "The review app in a browser: queues, editors, expert scoring, agreement."),
    "users": ("annotator.cli", "Users of the review app and their roles."),
    "verdicts": ("annotator.cli", "People's verdicts on model responses: agreement of checkers and judges with them; applying them to runs."),
}


def load_package_commands(module_name: str) -> TyperGroup:
    """The click group holding every command one package registers."""
    module = importlib.import_module(module_name)
    holder = typer.Typer(pretty_exceptions_enable=False)
    module.register(holder)
    if module_name == "evaluation.cli":
        _wire_paper_sections()
        _wire_adaptive_plans()
    return typer.main.get_group(holder)


def _wire_paper_sections() -> None:
    """`report --paper` gets filtering's item analysis (imported when a report asks for it)."""
    from evaluation.paper_sections import SECTION_MAKERS

    def item_analysis(ws: Any, runs: Any, out_dir: Any, *, seed: int = 0, charts: bool = True) -> Any:
        from filtering.irt.paper import item_analysis_section

        return item_analysis_section(ws, runs, out_dir, seed=seed, charts=charts)

    if not SECTION_MAKERS:
        SECTION_MAKERS.append(item_analysis)


def _wire_adaptive_plans() -> None:
    """`run --adaptive` gets filtering's item bank (imported when an adaptive run asks for it)."""
    from evaluation.adaptive_run import PLAN_MAKERS

    def open_plan(bank: Any, current: Any) -> Any:
        from filtering.irt.adaptive_plan import open_plan

        return open_plan(bank, current)

    if not PLAN_MAKERS:
        PLAN_MAKERS.append(open_plan)


def runner_clients() -> ModelClients:
    """Model-using curation commands (extract's vision model, paraphrase, rationale drafts, tag and
    explicit with -m) get their clients from the evaluation runners, imported when a step asks for a
    model, not when the curation commands load."""

    def build(spec: str, workspace: Any, fresh: bool) -> Any:
        from evaluation.generation import client_factory

        return client_factory(spec, workspace, fresh)

    return ModelClients(build)


class LazyCommands(TyperGroup):
    """Lists commands from COMMANDS; imports a package only to run (or show help of) its command."""

    def list_commands(self, ctx: Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        """A placeholder carrying the help line: enough for the root's command list."""
        if cmd_name not in COMMANDS:
            return None
        help_line = COMMANDS[cmd_name][1]
        return TyperCommand(cmd_name, help=help_line, short_help=help_line)

    def resolve_command(self, ctx: Context, args: list[str]) -> tuple[str | None, Command | None, list[str]]:
        """The real command, imported from its package, for running it or showing its help."""
        name = args[0] if args else None
        if name in COMMANDS:
            command = load_package_commands(COMMANDS[name][0]).commands.get(name)
            if command is not None:
                return name, command, args[1:]
        return super().resolve_command(ctx, args)


app = typer.Typer(
    name="benchsmith",
    cls=LazyCommands,
    help="Turn exam papers into expert benchmarks.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def root(ctx: typer.Context) -> None:
    """Turn exam papers into expert benchmarks."""
    ctx.obj = runner_clients()  # every subcommand's context sees it (curation.cli_kit.model_clients)


def main() -> None:
    from rich.console import Console
    from rich.markup import escape

    from curation.core.errors import BenchsmithError
    from curation.pool_gc import use_pool_thresholds

    use_pool_thresholds()  # a pool command holds ~10^5 parsed items at once
    try:
        app()
    except BenchsmithError as error:
        Console(stderr=True, soft_wrap=True).print(f"[red]error[/]: {escape(str(error))}", highlight=False)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        Console(stderr=True, soft_wrap=True).print("interrupted: work saved so far is kept")
        sys.exit(130)
    except Exception as error:
        from curation.core.item import ItemValidationError

        if not isinstance(error, ItemValidationError):
            raise
        Console(stderr=True, soft_wrap=True).print(f"[red]error[/]: invalid item: {escape(str(error))}", highlight=False)
        sys.exit(2)


if __name__ == "__main__":
    main()
