"""`benchsmith extract`: PDFs in, items (status extracted, stage extract) and image blobs out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from curation.errors import BenchsmithError
from curation.extract.document import ENGINES
from curation.extract.pipeline import ExtractOptions, extract_pdf, load_answer_key
from curation.extract.report import PdfReport


def extract_command(
    pdfs: Annotated[list[Path], typer.Argument(help="exam PDFs")],
    answer_key: Annotated[Path | None, typer.Option("--answer-key", help="key file: CSV, JSON or PDF (text or scanned)")] = None,
    exam: Annotated[str | None, typer.Option(help="exam name for the items (default: the PDF's file name)")] = None,
    session: Annotated[str | None, typer.Option(help="session, e.g. 2021-05-15 or 2021-2")] = None,
    engine: Annotated[str, typer.Option(help=f"one of {', '.join(ENGINES)}")] = "auto",
    mineru_output: Annotated[Path | None, typer.Option("--mineru-output",
                                                       help="read this MinerU output folder instead of running MinerU")] = None,
    force: Annotated[bool, typer.Option("--force", help="extract a PDF again and write new revisions")] = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", "-w", envvar="BENCHSMITH_WORKSPACE",
                                                   help="workspace folder", show_default=False)] = None,
    author: Annotated[str | None, typer.Option("--author", envvar="BENCHSMITH_USER", help="who runs it")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON for scripts")] = False,
) -> None:
    """Extract questions, options, figures and answers from exam PDFs into the store."""
    from curation.cli import console, current_author, out, print_json, workspace_from

    if engine not in ENGINES:
        raise BenchsmithError(f"--engine {engine!r}: choose one of {', '.join(ENGINES)}")
    ws = workspace_from(workspace)
    key = load_answer_key(answer_key)
    options = ExtractOptions(exam, session, engine, answer_key, force, current_author(author))
    reports: list[PdfReport] = []
    for pdf in pdfs:
        with console.status(f"extracting {pdf.name}…"):
            try:
                if engine == "mineru":
                    from curation.extract.mineru import extract_with_mineru

                    report = extract_with_mineru(pdf, ws, options, key, mineru_output)
                else:
                    report = extract_pdf(pdf, ws, options, key)
            except BenchsmithError as error:  # PdfError, MineruError, OcrError: this file only
                report = PdfReport(str(pdf), error=str(error))
        reports.append(report)
        if not as_json:
            for line in report.summary_lines():
                (console if report.error else out).print(line, highlight=False, markup=False, soft_wrap=True)
    if as_json:
        print_json([report.to_json() for report in reports])
    if any(report.error for report in reports):
        raise typer.Exit(1)
