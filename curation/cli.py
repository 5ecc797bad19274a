"""CLI commands of the curation package: init, schema, sample-exam, items …"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from curation.cli_kit import (
    AuthorOption,
    JsonOption,
    WorkspaceOption,
    console,
    current_author,
    is_one_of,
    model_clients,
    out,
    print_json,
    workspace_from,
)
from curation.core.credentials import mask_url
from curation.core.diff import field_changes
from curation.core.errors import BenchsmithError
from curation.core.item import choice_answer, item_json_schema
from curation.core.query import in_play
from curation.core.store import ItemQuery, get_path
from curation.core.workspace import Workspace, init_workspace
from curation.import_command import import_command
from curation.importers import export_jsonl

items_app = typer.Typer(help="Import, export, inspect and edit items.", no_args_is_help=True)
items_app.command("import")(import_command)


def register(app: typer.Typer) -> None:
    app.command("init")(init_command)
    app.command("schema")(schema_command)
    app.command("sample-exam")(sample_exam_command)
    app.add_typer(items_app, name="items")
    register_stages(app)


def init_command(
    directory: Annotated[Path, typer.Argument(help="folder to create the workspace in")],
    db: Annotated[str | None, typer.Option("--db", help="store URL, e.g. postgresql+psycopg://user@127.0.0.1/db")] = None,
) -> None:
    """Create a workspace: benchsmith.toml, the store, blobs/, cache.db, runs/, releases/."""
    workspace = init_workspace(directory, db)
    out.print(f"workspace ready: {workspace.root} (store: {mask_url(workspace.db_url)})", highlight=False)


def schema_command() -> None:
    """Print the item JSON Schema."""
    print_json(item_json_schema())


def sample_exam_command(
    out_pdf: Annotated[Path, typer.Argument(help="where to write the sample exam PDF")],
    seed: Annotated[int, typer.Option(help="variation seed; 0 is the canonical sample")] = 0,
    variant: Annotated[str | None, typer.Option(help="a layout variant: glyphs, numbering-mun, numbering-beon, "
                                                     "numbering-bracket, passage, table, three-column, broken-font")] = None,
) -> None:
    """Write the project's own sample exam PDF and its ground truth (OUT.truth.jsonl)."""
    from curation.sample_exam import write_sample_exam

    try:
        pdf_path, truth_path = write_sample_exam(out_pdf, seed=seed, variant=variant)
    except ValueError as error:
        raise BenchsmithError(str(error)) from None
    out.print(f"sample exam: {pdf_path}\nground truth: {truth_path}")


@items_app.command("export")
def export_command(
    workspace: WorkspaceOption = None,
    fmt: Annotated[str, typer.Option("--format", help="jsonl")] = "jsonl",
    out_file: Annotated[Path | None, typer.Option("--out", help="file to write (default: stdout)")] = None,
    status: Annotated[list[str], typer.Option(help="only items with this status (repeatable)")] = [],  # noqa: B006
) -> None:
    """Export items as JSONL (importing the export gives identical items)."""
    if fmt != "jsonl":
        raise BenchsmithError(f"--format {fmt!r}: items export writes jsonl (releases: `benchsmith release build`)")
    ws = workspace_from(workspace)
    query = ItemQuery(status=status or None)
    if out_file is None:
        export_jsonl(ws.store, sys.stdout, query)
        return
    tmp = out_file.with_suffix(out_file.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        count = export_jsonl(ws.store, handle, query)
    os.replace(tmp, out_file)
    console.print(f"{count} items written to {out_file}")


@items_app.command("show")
def show_command(
    item_id: Annotated[str, typer.Argument(help="item id")],
    workspace: WorkspaceOption = None,
    history: Annotated[bool, typer.Option("--history", help="list every revision with its field diff")] = False,
    as_json: JsonOption = False,
) -> None:
    """Show an item (and its revisions)."""
    ws = workspace_from(workspace)
    stored = ws.store.get(item_id)
    revisions = ws.store.history(item_id) if history else []
    if as_json:
        data: dict[str, Any] = {"rev": stored.rev, "item": stored.item.to_record()}
        if history:
            data["history"] = [revision.__dict__ for revision in revisions]
        print_json(data)
        return
    out.print(f"[bold]{escape(item_id)}[/] rev {stored.rev} · {stored.item.status} · last by {stored.updated_by} at {stored.updated_at}")
    out.print(json.dumps(stored.item.to_record(), ensure_ascii=False, indent=2), highlight=False, markup=False)
    previous: dict[str, Any] = {}
    for revision in revisions:
        out.print(f"\n[bold]rev {revision.rev}[/] {revision.created_at} by {escape(revision.author)} ({revision.stage})"
                  + (f" — {escape(revision.reason)}" if revision.reason else ""), highlight=False)
        if revision.rev == 1:
            out.print("  created", highlight=False)
        for path, before, after in field_changes(previous, revision.snapshot) if revision.rev > 1 else []:
            out.print(f"  {path}: {json.dumps(before, ensure_ascii=False)} → {json.dumps(after, ensure_ascii=False)}",
                      highlight=False, markup=False)
        previous = revision.snapshot


@items_app.command("stats")
def stats_command(workspace: WorkspaceOption = None, as_json: JsonOption = False) -> None:
    """Counts by status, exam, subject/part and flags; exam names that are likely one exam."""
    from curation.exam_names import similar_names

    stats = workspace_from(workspace).store.stats()
    stats["similar_exam_names"] = [{"name": head, "likely_same": others}
                                   for head, others in similar_names(stats["by_exam"])]
    if as_json:
        print_json(stats)
        return
    out.print(f"{stats['items']} items, {stats['revisions']} revisions")
    groups = [(name, stats[key]) for name, key in
              (("status", "by_status"), ("exam", "by_exam"), ("subject", "by_subject"), ("part", "by_part"))]
    groups += [(f"flag {name}", counts) for name, counts in stats["flags"].items()]
    for title, counts in groups:
        table = Table(title=title, show_header=False, title_justify="left")
        for key, count in counts.items():
            table.add_row(escape(key), str(count))
        out.print(table)
    for group in stats["similar_exam_names"]:
        head, by_exam = group["name"], stats["by_exam"]
        others = ", ".join(f"{name!r} ({by_exam[name]})" for name in group["likely_same"])
        out.print(f"likely the same exam as {head!r} ({by_exam[head]}): {others} — merge with "
                  f"`benchsmith items rename-exam OLD {head!r}`", highlight=False, markup=False)


@items_app.command("rename-exam")
def rename_exam_command(
    old: Annotated[str, typer.Argument(help="the exam name items carry now")],
    new: Annotated[str, typer.Argument(help="the name to give them")],
    workspace: WorkspaceOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="count; write nothing")] = False,
    author: AuthorOption = None,
) -> None:
    """Rename an exam on every item that carries it (a revision per item, CAS; ids stay)."""
    from curation.core.revise import revise

    if not new.strip():
        raise BenchsmithError("the new exam name is empty")
    ws = workspace_from(workspace)
    stored = list(ws.store.iter_items(ItemQuery(exam=old)))
    if not stored:
        raise BenchsmithError(f"no item has exam {old!r} (see `benchsmith items stats`)")
    report = revise(ws.store, stored,
                    lambda item: (item.model_copy(update={"source": item.source.model_copy(update={"exam": new})}),
                                  f"exam {old!r} renamed {new!r}"),
                    stage="rename-exam", author=current_author(author), dry_run=dry_run)
    out.print(("[dry run] " if dry_run else "") + report.line(), highlight=False, markup=False)


def _coerce(raw: str, current: Any) -> Any:
    """A --set value: kept as text where the field holds text, else read as JSON when it parses."""
    if isinstance(current, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _option_numbers(value: Any) -> bool:
    numbers = value if isinstance(value, list) else [value]
    return bool(numbers) and all(isinstance(n, int) and not isinstance(n, bool) for n in numbers)


@items_app.command("edit")
def edit_command(
    item_id: Annotated[str, typer.Argument(help="item id")],
    assignments: Annotated[list[str], typer.Option("--set", help="FIELD=VALUE; FIELD is a dotted path (options.2.text)")],
    expect_rev: Annotated[int, typer.Option("--expect-rev", help="the revision your edit is based on")],
    reason: Annotated[str | None, typer.Option(help="why (kept in the revision)")] = None,
    workspace: WorkspaceOption = None,
    author: AuthorOption = None,
) -> None:
    """Edit fields with a compare-and-swap: exit code 3 when --expect-rev is stale."""
    ws = workspace_from(workspace)
    record = ws.store.get(item_id).item.to_record()
    changes = {}
    for assignment in assignments:
        path, sep, raw = assignment.partition("=")
        if not sep or not path:
            raise BenchsmithError(f"--set {assignment!r}: expected FIELD=VALUE")
        value = _coerce(raw, get_path(record, path))
        if path == "answer" and _option_numbers(value):  # `answer=3`, `answer=[1,3]`: a choice key
            value = choice_answer(value, record)
        changes[path] = value
    new_rev = ws.store.update_fields(item_id, changes, expect_rev=expect_rev, author=current_author(author),
                                     stage="edit", reason=reason)
    out.print(f"{item_id}: revision {new_rev}")


# -- curation stages --------------------------------------------------------------------------
tag_app = typer.Typer(help="Tag items: Korea-specific candidates, taxonomy.", no_args_is_help=True)
rationale_app = typer.Typer(help="Draft rationales for expert review.", no_args_is_help=True)
ModelsOption = Annotated[list[str], typer.Option("--model", "-m", help="model spec (repeatable), as for `benchsmith run`")]
ItemsOption = Annotated[str | None, typer.Option("--items", help="only these item ids, comma-separated")]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="report what would change; write nothing")]


@items_app.command("set-status")
def set_status_command(
    status: Annotated[str, typer.Argument(help="extracted | in_review | accepted | rejected | excluded")],
    where: Annotated[str, typer.Option("--where", help="which items: FIELD=VALUE,… as for `run --items` "
                                                      "(status=in_review|extracted,exam=…,subject=…,ids=a|b)")],
    reason: Annotated[str, typer.Option("--reason", help="why (kept in every revision)")],
    dry_run: DryRunOption = False,
    workspace: WorkspaceOption = None,
    author: AuthorOption = None,
    as_json: JsonOption = False,
) -> None:
    """Set the status of every item the query matches: one revision each, compare-and-swap per item
    (an item edited meanwhile is skipped and reported). Run with --dry-run first."""
    from curation.core.query import parse_item_query
    from curation.core.status import set_status

    ws = workspace_from(workspace)
    report = set_status(ws.store, parse_item_query(where, "--where"), status, reason=reason,
                        author=current_author(author), dry_run=dry_run)
    if as_json:
        print_json({"matched": report.seen, "changed": report.changed, "previous": report.previous,
                    "conflicts": report.conflicts, "dry_run": dry_run, "status": status})
        return
    verb = "would change" if dry_run else "changed"
    if dry_run:  # what would change, item by item, before the summary
        for item_id, before in report.previous.items():
            out.print(f"{item_id}: {before} → {status}", highlight=False, markup=False)
    out.print(f"{report.seen} items matched; {verb} {len(report.changed)} to {status}"
              + (f"; {len(report.conflicts)} skipped (edited meanwhile: {', '.join(report.conflicts[:5])})"
                 if report.conflicts else "")
              + (" — nothing written (--dry-run)" if dry_run else ""), highlight=False, markup=False)
    if report.conflicts:
        raise typer.Exit(3)


def register_stages(app: typer.Typer) -> None:
    app.command("dedup")(dedup_command)
    app.command("shuffle")(shuffle_command)
    app.command("explicit")(explicit_command)
    app.command("paraphrase")(paraphrase_command)
    app.add_typer(tag_app, name="tag")
    app.add_typer(rationale_app, name="rationale")


def dedup_command(
    workspace: WorkspaceOption = None,
    preset: Annotated[str, typer.Option(help="kmetbench (difflib ≥ 0.6, the seeds' rule) | precise "
                                        "(≥ 0.95, or ≥ 0.8 with the same answer)")] = "kmetbench",
    threshold: Annotated[float | None, typer.Option(help="difflib ratio at or above which two items are duplicates "
                                                    "[preset: 0.6 / 0.8]")] = None,
    method: Annotated[str, typer.Option(help="difflib (exact, rapidfuzz-prefiltered) | fuzz | lsh")] = "difflib",
    scope: Annotated[str, typer.Option(help="near-duplicates within: exam | subject | all "
                                       "(exact duplicates: always the whole pool)")] = "exam",
    stem_gate: Annotated[float, typer.Option(help="stems must also reach this ratio (0 = the bare rule)")] = 0.6,
    require_same_answer: Annotated[bool, typer.Option(help="merge only when the correct options' texts agree")] = False,
    antonyms: Annotated[Path | None, typer.Option(help="extra antonym pairs, one 높은/낮은 per line")] = None,
    workers: Annotated[int, typer.Option(help="processes for the prefilter and verification")] = 2,
    dry_run: DryRunOption = False,
    author: AuthorOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove exact (whole pool) and near-duplicates: one kept per cluster; inversions and answer conflicts queued."""
    from curation.progress import progress_bar
    from curation.steps.antonyms import AntonymLexicon
    from curation.steps.dedup import METHODS, PRESETS, SCOPES, DedupConfig
    from curation.steps.dedup_stage import band_report, example_pairs, run_dedup

    if not is_one_of(method, METHODS) or not is_one_of(scope, SCOPES):
        raise BenchsmithError("--method is difflib|fuzz|lsh and --scope is exam|subject|all")
    if preset not in PRESETS:
        raise BenchsmithError(f"--preset {preset!r}: choose one of {', '.join(PRESETS)}")
    settings = dict(PRESETS[preset])
    if threshold is not None:
        settings["threshold"] = threshold
    if not 0 < float(settings.get("threshold", 0.6)) <= 1 or not 0 <= stem_gate <= 1:  # type: ignore[arg-type]
        raise BenchsmithError("--threshold must be in (0, 1] and --stem-gate in [0, 1]")
    ws = workspace_from(workspace)
    lexicon = AntonymLexicon.from_file(antonyms) if antonyms else AntonymLexicon()
    config = DedupConfig(method=method, scope=scope, stem_gate=stem_gate,  # type: ignore[arg-type]
                         require_same_answer=require_same_answer, workers=workers, **settings)  # type: ignore[arg-type]
    total = ws.store.count(in_play(None))
    with progress_bar(console, "comparing", total) as advance:
        result, report, path = run_dedup(ws.store, config, author=current_author(author), antonyms=lexicon,
                                         dry_run=dry_run, report_dir=ws.runs_dir, advance=advance)
    summary = result.summary() | {"revised": len(report.changed), "conflicts": report.conflicts,
                                  "report": str(path) if path else None}
    bands = band_report(result, ws.store) if dry_run else []
    if as_json:
        print_json(summary | {"examples": example_pairs(result, ws.store), "bands": bands})
        return
    out.print(("[dry run] " if dry_run else "") + ", ".join(
        f"{key.replace('_', ' ')} {value}" for key, value in summary.items()
        if not isinstance(value, dict | list) and value is not None), highlight=False)
    if dry_run:
        out.print("would merge, per ratio band (same answer = correct options' canonical text agrees):", highlight=False)
        for band in bands:
            share = f"{band['same_answer'] / band['pairs']:.0%}" if band["pairs"] else "-"
            out.print(f"  {band['band']:<9} {band['pairs']:>7} pairs, {band['same_answer']:>7} same answer ({share})",
                      highlight=False)
            for example in band["examples"]:
                out.print(f"      {example['ratio']:.3f} {example['first']}  ⇄  {example['second']}",
                          highlight=False, markup=False)
        for example in example_pairs(result, ws.store):
            if example["verdict"] != "merged":
                out.print(f"  {example['verdict']:<15} ratio {example['ratio']:.3f} stem {example['stem_ratio']:.3f}"
                          f"  {example['first']}  ⇄  {example['second']}", highlight=False, markup=False)


def shuffle_command(
    seed: Annotated[int, typer.Option(help="the seed; each item's permutation comes from (seed, item id)")],
    workspace: WorkspaceOption = None,
    dry_run: DryRunOption = False,
    author: AuthorOption = None,
) -> None:
    """Shuffle options per item (deterministic); answers remapped, the original order kept."""
    from curation.core.revise import active_items, revise
    from curation.steps.shuffle import shuffle_item

    ws = workspace_from(workspace)
    report = revise(ws.store, active_items(ws.store), lambda item: (shuffle_item(item, seed), f"shuffle seed {seed}"),
                    stage="shuffle", author=current_author(author), dry_run=dry_run)
    out.print(report.line(), highlight=False)


def _korea_lexicon(terms: Path | None, rules: Path | None):  # noqa: ANN202
    from curation.steps.korea import KoreaLexicon

    return KoreaLexicon().extended(terms, rules)


@tag_app.command("korea")
def tag_korea_command(
    ctx: typer.Context,
    workspace: WorkspaceOption = None,
    terms: Annotated[Path | None, typer.Option(help="extra Korea-context terms, one per line")] = None,
    models: Annotated[list[str], typer.Option("--model", "-m", help="LLM detector (repeatable); its 'yes' "
                                              "needs a reason, united with the lexicon")] = [],  # noqa: B006
    dry_run: DryRunOption = False,
    author: AuthorOption = None,
) -> None:
    """Find Korea-specific candidates (lexicon, plus LLM detectors); reasons stored, candidates queued for review."""
    from curation.core.revise import active_items
    from curation.steps.korea import tag_korea

    ws = workspace_from(workspace)
    lexicon = _korea_lexicon(terms, None)
    stored = active_items(ws.store)
    if not models:
        from curation.core.revise import revise

        report = revise(ws.store, stored, lambda item: (tag_korea(item, lexicon), "korea lexicon"),
                        stage="tag-korea", author=current_author(author), dry_run=dry_run)
        out.print(report.line() + " (new Korea-specific candidates)", highlight=False)
        return
    from curation.steps.model_steps import detect_korea

    clients = [model_clients(ctx)(spec, ws) for spec in models]
    result = detect_korea([s.item for s in stored], clients, lexicon)
    _apply_step(ws, stored, result, "tag-korea", f"korea lexicon + {', '.join(c.name for c in clients)}",
                author, dry_run)


@tag_app.command("taxonomy")
def tag_taxonomy_command(workspace: WorkspaceOption = None, dry_run: DryRunOption = False,
                         author: AuthorOption = None) -> None:
    """Fill part/subject, visual type and question format by rules (never overwriting a value)."""
    from curation.core.revise import active_items, revise
    from curation.steps.taxonomy import tag_taxonomy

    ws = workspace_from(workspace)
    report = revise(ws.store, active_items(ws.store), lambda item: (tag_taxonomy(item), "taxonomy rules"),
                    stage="tag-taxonomy", author=current_author(author), dry_run=dry_run)
    out.print(report.line(), highlight=False)


def explicit_command(
    ctx: typer.Context,
    workspace: WorkspaceOption = None,
    rules: Annotated[Path | None, typer.Option(help="extra rewrite rules, 'implicit => explicit' per line")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="a model proposes the rewrite instead of the rules")] = None,
    dry_run: DryRunOption = False,
    author: AuthorOption = None,
) -> None:
    """Propose explicit variants (우리나라 → 한국 …) for Korea-specific items and candidates."""
    from curation.core.revise import active_items, revise
    from curation.steps.korea import with_explicit_variant

    ws = workspace_from(workspace)
    lexicon = _korea_lexicon(None, rules)
    candidates = [s for s in active_items(ws.store) if s.item.flags.korea_specific or s.item.flags.korea_reasons]
    if model:
        from curation.steps.model_steps import explicit_rewrites

        client = model_clients(ctx)(model, ws)
        result = explicit_rewrites([s.item for s in candidates], client)
        _apply_step(ws, candidates, result, "explicit", f"explicit rewrite by {client.name}", author, dry_run)
        return
    report = revise(ws.store, candidates, lambda item: (with_explicit_variant(item, lexicon), "explicit rules"),
                    stage="explicit", author=current_author(author), dry_run=dry_run)
    out.print(report.line(), highlight=False)


def _apply_step(ws: Workspace, stored: list, result, stage: str, reason: str, author: str | None,  # noqa: ANN001
                dry_run: bool) -> None:
    from curation.core.revise import revise

    report = revise(ws.store, stored, lambda item: (result.changed[item.id], reason) if item.id in result.changed else None,
                    stage=stage, author=current_author(author), dry_run=dry_run)
    out.print(report.line() + (f"; {len(result.failures)} failures (e.g. {next(iter(result.failures.items()))})"
                               if result.failures else ""), highlight=False, markup=False)


def _selected(ws: Workspace, items: str | None) -> list:
    from curation.core.revise import active_items

    stored = active_items(ws.store)
    if items:
        wanted = {part.strip() for part in items.split(",") if part.strip()}
        stored = [s for s in stored if s.item.id in wanted]
        missing = wanted - {s.item.id for s in stored}
        if missing:
            raise BenchsmithError(f"--items: no active item {sorted(missing)[0]!r}")
    return stored


def _one_client(ctx: typer.Context, models: list[str], ws: Workspace, step: str):  # noqa: ANN202
    if len(models) != 1:
        raise BenchsmithError(f"{step} takes one --model")
    return model_clients(ctx)(models[0], ws)


def paraphrase_command(
    ctx: typer.Context,
    models: ModelsOption,
    workspace: WorkspaceOption = None,
    items: ItemsOption = None,
    max_tries: Annotated[int, typer.Option(min=1, help="retries when a paraphrase loses a protected term")] = 3,
    terms: Annotated[Path | None, typer.Option(help="extra domain terms that must survive, one per line")] = None,
    dry_run: DryRunOption = False,
    author: AuthorOption = None,
) -> None:
    """Paraphrase stems (term-preserving, original kept); results go to review."""
    from curation.steps.model_steps import paraphrase_items
    from curation.steps.terms import load_terms

    ws = workspace_from(workspace)
    stored = _selected(ws, items)
    client = _one_client(ctx, models, ws, "paraphrase")
    result = paraphrase_items([s.item for s in stored], client, max_tries=max_tries, domain_terms=load_terms(terms))
    _apply_step(ws, stored, result, "paraphrase", f"paraphrase by {client.name}", author, dry_run)


@rationale_app.command("draft")
def rationale_draft_command(
    ctx: typer.Context,
    models: ModelsOption,
    workspace: WorkspaceOption = None,
    items: ItemsOption = None,
    max_tries: Annotated[int, typer.Option(min=1, help="regenerate until the drafted answer is the gold one")] = 5,
    dry_run: DryRunOption = False,
    author: AuthorOption = None,
) -> None:
    """Draft a rationale per item with the reasoning prompt, regenerated until it reaches the gold answer."""
    from curation.steps.model_steps import draft_rationales

    ws = workspace_from(workspace)
    stored = [s for s in _selected(ws, items) if s.item.rationale is None]
    client = _one_client(ctx, models, ws, "rationale draft")
    result = draft_rationales([s.item for s in stored], client, max_tries=max_tries)
    _apply_step(ws, stored, result, "rationale-draft", f"rationale drafted by {client.name}", author, dry_run)
    if result.tries:
        from collections import Counter

        tries = Counter(result.tries.values())
        out.print("tries needed: " + ", ".join(f"{n} try: {count}" for n, count in sorted(tries.items())),
                  highlight=False)
