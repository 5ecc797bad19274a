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


def stage_extract(ctx: DemoContext) -> str:
    """Extract the sample PDF (the main path) and score the result against its ground truth."""
    import json

    from curation.extract.pipeline import ExtractOptions, extract_pdf
    from curation.item import parse_item
    from curation.store import ItemQuery

    options = ExtractOptions(exam="기상기사", session="sample-0", author="demo", force=True)
    report = extract_pdf(ctx.sample_pdf, ctx.workspace, options)
    if report.error:
        raise BenchsmithError(f"demo: extracting the sample exam failed: {report.error}")
    truth = [parse_item(json.loads(line)) for line in ctx.truth_path.read_text(encoding="utf-8").splitlines()]
    got = {stored.item.source.number: stored.item for stored in ctx.workspace.store.iter_items(ItemQuery(exam="기상기사"))
           if stored.item.source.pdf_sha256 == report.sha256}
    found = [item for item in truth if item.source.number in got]
    options_total = sum(len(item.options) for item in truth)
    options_same = sum(1 for item in found for mine, theirs in zip(got[item.source.number].options, item.options, strict=False)
                       if mine.text == theirs.text and (mine.image and mine.image.blob) == (theirs.image and theirs.image.blob))
    answers_same = sum(1 for item in found if got[item.source.number].answer == item.answer)
    stems_same = sum(1 for item in found if got[item.source.number].stem == item.stem)
    return (f"extracted {report.questions} questions ({report.created} new, {report.updated} updated): "
            f"{len(found)}/{len(truth)} found, stems {stems_same}/{len(truth)}, options {options_same}/{options_total}, "
            f"answers {answers_same}/{len(truth)} match the ground truth; {report.images_attached} images")


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
    ("extract", stage_extract),
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


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
