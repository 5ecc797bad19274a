"""`benchsmith demo`: the main job on the embedded default, end to end, with no network.

Each stage is a small function that takes the demo context and returns a line for the
summary; a stage whose optional extra is missing says so and the demo goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from curation.errors import BenchsmithError
from curation.workspace import CONFIG_NAME, Workspace, init_workspace, open_workspace

console = Console()


@dataclass
class DemoContext:
    workspace: Workspace
    sample_pdf: Path
    truth_path: Path
    results: dict[str, str] = field(default_factory=dict)


def stage_sample_exam(ctx: DemoContext) -> str:
    from curation.sample_exam import write_sample_exam

    write_sample_exam(ctx.sample_pdf)
    return f"sample exam written: {ctx.sample_pdf} (truth: {ctx.truth_path.name})"


def stage_import_truth(ctx: DemoContext) -> str:
    from curation.importers import import_file

    report = import_file(ctx.truth_path, ctx.workspace.store, fmt="jsonl", blobs=ctx.workspace.blobs, author="demo")
    if not report.ok:
        raise BenchsmithError(f"demo: importing the sample's ground truth failed: {report.fatal or report.errors[:3]}")
    return f"items imported from ground truth: {report.created} new, {report.unchanged} unchanged"


def stage_stats(ctx: DemoContext) -> str:
    stats = ctx.workspace.store.stats()
    statuses = ", ".join(f"{k} {v}" for k, v in stats["by_status"].items())
    multimodal = stats["flags"]["multimodal"].get("True", 0)
    return f"store: {stats['items']} items ({statuses}), {multimodal} multimodal, {stats['revisions']} revisions"


def stage_export(ctx: DemoContext) -> str:
    from curation.importers import export_jsonl

    out = ctx.workspace.root / "items.jsonl"
    with out.open("w", encoding="utf-8") as handle:
        count = export_jsonl(ctx.workspace.store, handle)
    return f"exported {count} items: {out}"


STAGES: list[tuple[str, Callable[[DemoContext], str]]] = [
    ("sample exam", stage_sample_exam),
    ("import", stage_import_truth),
    ("stats", stage_stats),
    ("export", stage_export),
]


def run_demo(directory: Path) -> DemoContext:
    directory = Path(directory).resolve()
    workspace = open_workspace(directory) if (directory / CONFIG_NAME).exists() else init_workspace(directory)
    sample_pdf = directory / "sample-exam.pdf"
    ctx = DemoContext(workspace, sample_pdf, sample_pdf.with_suffix(".truth.jsonl"))
    for name, stage in STAGES:
        started = time.perf_counter()
        with console.status(f"{name}…"):
            line = stage(ctx)
        ctx.results[name] = line
        console.print(f"[green]✓[/] {name:<12} {line}  [dim]({time.perf_counter() - started:.1f} s)[/]", highlight=False)
    return ctx


def demo_command(
    workspace: Annotated[Path, typer.Option("--workspace", "-w", envvar="BENCHSMITH_WORKSPACE",
                                            help="workspace folder (created if missing)")] = Path("demo-workspace"),
) -> None:
    """Run every stage on the built-in sample exam, offline, and print where the results are."""
    ctx = run_demo(workspace)
    console.print(f"\nworkspace: {ctx.workspace.root}")
    console.print(annotator_command(ctx.workspace.root), highlight=False, soft_wrap=True)


def annotator_command(root: Path) -> str:
    """The last line of the demo: how to review its items in a browser."""
    import shlex

    return ("review the items in a browser (pip install 'benchsmith[annotator]'):\n"
            f"  benchsmith annotate -w {shlex.quote(str(root))}")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
