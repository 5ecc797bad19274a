"""`benchsmith items import`: many files, one progress bar, one summary line (per-file lines
and notes with --verbose; row errors always)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from curation import cli_kit
from curation.core.errors import BenchsmithError
from curation.importers import FORMATS, FileReport, import_file
from curation.progress import progress_bar


def parse_map(pairs: list[str]) -> dict[str, str]:
    mapping = {}
    for pair in pairs:
        for part in pair.split(","):
            ours, sep, theirs = part.partition("=")
            if not sep or not ours.strip() or not theirs.strip():
                raise BenchsmithError(f"--map {part!r}: expected OURS=THEIRS, e.g. 'Question=문제'")
            mapping[ours.strip()] = theirs.strip()
    return mapping


def file_line(report: FileReport) -> str:
    return (f"{report.path} ({report.format}): {report.rows} rows, {report.created} new, {report.updated} updated, "
            f"{report.unchanged} unchanged, {report.skipped} kept, {report.garbled} garbled, "
            f"{len(report.errors)} failed; {report.korea_tagged} tagged as Korea-specific candidates")


def summary_line(reports: list[FileReport]) -> str:
    read = [r for r in reports if not r.fatal]
    formats = ", ".join(sorted({r.format for r in read}))

    def total(name: str) -> int:
        return sum(getattr(r, name) for r in read)

    shapes = [(sum(any(mark in n for n in r.notes) for r in read), label) for mark, label in
              (("no header row", "without a header row"), ("inside a Markdown", "in a code fence"),
               ("exam names vary", "with exam-name variants"), ("repeat an earlier", "with a repeated numbering"))]
    shape_text = "; ".join(f"{count} {label}" for count, label in shapes if count)
    skipped = total("skipped")
    return (f"imported {len(read)} of {len(reports)} files ({formats or 'none'}"
            + (f"; {shape_text}" if shape_text else "") + f"): {total('rows')} rows, {total('created')} new, "
            f"{total('updated')} updated, {total('unchanged')} unchanged, "
            + (f"{skipped} already in the store with other content (kept; --force overwrites), " if skipped else "")
            + f"{total('garbled')} garbled (sent to review), {sum(len(r.errors) for r in read)} rows failed, "
            f"{total('korea_tagged')} tagged as Korea-specific candidates"
            + (f", {len(reports) - len(read)} files refused" if len(read) < len(reports) else ""))


def import_command(
    files: Annotated[list[Path], typer.Argument(help="JSONL, Q-Net CSV, K-MetBench JSON, KMMLU JSON/CSV, KMMMU CSV files")],
    workspace: cli_kit.WorkspaceOption = None,
    fmt: Annotated[str, typer.Option("--format", help=f"one of {', '.join(FORMATS)}")] = "auto",
    exam: Annotated[str | None, typer.Option(help="exam name for every imported item (else one per file: its majority)")] = None,
    column_map: Annotated[list[str], typer.Option("--map", help="CSV column names: OURS=THEIRS[,…]")] = [],  # noqa: B006
    answer_base: Annotated[int, typer.Option(help="0 when the file's answers are 0-based")] = 1,
    id_suffix: Annotated[str | None, typer.Option("--id-suffix", help="append to every id (files that number alike)")] = None,
    images: Annotated[Path | None, typer.Option("--images", help="KMMMU: folder holding the files of the image links "
                                                "(its _index.csv, else the links' file names); links not found "
                                                "are kept and the item goes to review")] = None,
    force: Annotated[bool, typer.Option("--force", help="overwrite items already in the store with the file's version (new revisions)")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="a line per file, with how it was read")] = False,
    author: cli_kit.AuthorOption = None,
    as_json: cli_kit.JsonOption = False,
) -> None:
    """Import items; bad rows are reported and skipped, and the exit code is 1 if any failed."""
    if fmt not in FORMATS:
        raise BenchsmithError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if images is not None and not images.is_dir():
        raise BenchsmithError(f"--images {images}: not a folder")
    if answer_base not in (0, 1):
        raise BenchsmithError("--answer-base must be 0 or 1")
    ws = cli_kit.workspace_from(workspace)
    mapping = parse_map(column_map)
    reports = []
    with progress_bar(cli_kit.console, "importing", len(files), unit="files") as advance:
        for path in files:
            reports.append(import_file(path, ws.store, fmt=fmt, exam=exam, column_map=mapping, answer_base=answer_base,
                                       blobs=ws.blobs, author=cli_kit.current_author(author), force=force, id_suffix=id_suffix,
                                       images_dir=images))
            advance(1)
    if as_json:
        cli_kit.print_json([report.__dict__ | {"errors": [e.__dict__ for e in report.errors]} for report in reports])
    else:
        for report in reports:
            if report.fatal:
                cli_kit.console.print(f"[red]error[/]: {escape(report.fatal)}", highlight=False)
                continue
            if verbose:
                cli_kit.out.print(file_line(report), highlight=False, markup=False)
                for note in report.notes:
                    cli_kit.out.print(f"  {note}", highlight=False, markup=False)
            for error in report.errors:
                cli_kit.console.print(f"  {report.path}: row {error.row}: {error.reason}", highlight=False, markup=False)
        cli_kit.out.print(summary_line(reports), highlight=False, markup=False)
    if any(not report.ok for report in reports):
        raise typer.Exit(1)
