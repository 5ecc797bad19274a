"""`benchsmith extract`: PDFs in, items (status extracted, stage extract) and image blobs out."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from curation.core.errors import BenchsmithError
from curation.execution.options import ExecutorOption, MaxAttemptsOption, RayAddressOption, WorkersOption

if TYPE_CHECKING:  # PyMuPDF and the pipeline load when a PDF is extracted, not for every command's help
    from curation.core.workspace import Workspace
    from curation.execution.dispatch import OnPlan, OnProgress
    from curation.execution.executors import ShardExecutor
    from curation.extract.key_sheet import KeyChoice
    from curation.extract.pipeline import ExtractOptions
    from curation.extract.report import PdfReport
    from curation.llm import TextModel

ENGINES = ("auto", "pymupdf", "ocr", "mineru", "vlm")  # as curation.extract.document.ENGINES (a test checks they agree)


def register(app: typer.Typer) -> None:
    """`extract` on its own: running it loads none of the other curation commands' modules."""
    app.command("extract")(extract_command)


def extract_command(
    ctx: typer.Context,
    pdfs: Annotated[list[Path], typer.Argument(help="exam PDFs")],
    answer_key: Annotated[Path | None, typer.Option("--answer-key", help="key file: CSV, JSON or PDF (text or scanned)")] = None,
    section: Annotated[str | None, typer.Option("--section", help=(
        "the section (elective) of the key file the papers answer, e.g. 미적분 (`benchsmith keys read` lists them)"))] = None,
    form: Annotated[str | None, typer.Option("--form", help="the form of the key file, e.g. 홀수 or 짝수 (default: its first)")] = None,
    exam: Annotated[str | None, typer.Option(help="exam name for the items (default: the PDF's file name)")] = None,
    session: Annotated[str | None, typer.Option(help="session, e.g. 2021-05-15 or 2021-2")] = None,
    engine: Annotated[str, typer.Option(help=f"one of {', '.join(ENGINES)}")] = "auto",
    mineru_output: Annotated[Path | None, typer.Option("--mineru-output",
                                                       help="read this MinerU output folder instead of running MinerU")] = None,
    vlm_model: Annotated[str | None, typer.Option("--vlm-model", "-m", help=(
        "a vision model (spec, models.yaml name): the vlm engine's, or with --engine auto the fallback for pages "
        "with broken fonts or many formulas (default: [extract] vlm_model in benchsmith.toml)"))] = None,
    force: Annotated[bool, typer.Option("--force", help="extract a PDF again and write new revisions")] = False,
    ask_again: Annotated[bool, typer.Option("--ask-again", help=(
        "ask the vision model again instead of reusing its cached answers: a rerun after a refusal or "
        "answers that were no use (a rerun by itself asks again only what failed at the backend)"))] = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", "-w", envvar="BENCHSMITH_WORKSPACE",
                                                   help="workspace folder", show_default=False)] = None,
    author: Annotated[str | None, typer.Option("--author", envvar="BENCHSMITH_USER", help="who runs it")] = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    workers: WorkersOption = None,
    max_attempts: MaxAttemptsOption = 3,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON for scripts")] = False,
) -> None:
    """Extract questions, options, figures and answers from exam PDFs into the store."""
    from curation.cli_kit import console, current_author, model_clients, print_json, workspace_from
    from curation.execution.dispatch import ExecutorChoice, dispatch
    from curation.extract.pipeline import ExtractOptions, load_answer_key, vision_model

    if engine not in ENGINES:
        raise BenchsmithError(f"--engine {engine!r}: choose one of {', '.join(ENGINES)}")
    ws = workspace_from(workspace)
    key = load_answer_key(answer_key, section, form)  # a bad key file, section or form fails before any PDF
    options = ExtractOptions(exam, session, engine, answer_key, force, current_author(author), vlm_model or ws.vlm_model,
                             ask_again, key_section=section, key_form=form)
    model = vision_model(options, ws, model_clients(ctx)) if options.reads_with_vlm() else None  # a bad spec fails before any PDF
    if (engine == "mineru" or model is not None) and executor != "local":
        used = "--engine mineru" if engine == "mineru" else "the vision model"
        raise BenchsmithError(f"{used} runs on this machine only: use --executor local")
    choice = ExecutorChoice(executor, ray_address, workers, max_attempts)

    def here() -> list[PdfReport]:
        return [_extract_here(pdf, ws, options, key, mineru_output, as_json, model) for pdf in pdfs]

    def sharded(shard_executor: ShardExecutor, on_plan: OnPlan, on_progress: OnProgress) -> list[PdfReport]:
        from curation.extract.parallel import extract_many

        on_plan(len(pdfs), 0)
        return extract_many(pdfs, ws, options, key, shard_executor, max_attempts=max_attempts, on_progress=on_progress)

    # MinerU and the vision model run here only; so does everything with one worker
    pinned = engine == "mineru" or workers == 1 or model is not None
    reports = dispatch(choice, len(pdfs), here, sharded, label=f"{len(pdfs)} PDFs", unit="PDFs", show=not as_json,
                       console=console, pinned=pinned)
    if not as_json and not choice.runs_here(len(pdfs), pinned=pinned):  # shown once the progress bar is gone
        for report in reports:
            _show(report)
    if as_json:
        print_json([report.to_json() for report in reports])
    if any(report.error or report.errors for report in reports):
        raise typer.Exit(1)


def _show(report: PdfReport) -> None:
    from curation.cli_kit import console, out

    for line in report.summary_lines():
        (console if report.error else out).print(line, highlight=False, markup=False, soft_wrap=True)


def _extract_here(pdf: Path, ws: Workspace, options: ExtractOptions, key: KeyChoice | None, mineru_output: Path | None,
                  as_json: bool, model: TextModel | None) -> PdfReport:
    from curation.cli_kit import console
    from curation.extract.pipeline import extract_pdf
    from curation.extract.report import PdfReport

    with console.status(f"extracting {pdf.name}…"):
        try:
            if options.engine == "mineru":
                from curation.extract.mineru import extract_with_mineru

                report = extract_with_mineru(pdf, ws, options, key, mineru_output)
            else:
                report = extract_pdf(pdf, ws, options, key, model)
        except BenchsmithError as error:  # PdfError, MineruError, OcrError: this file only
            report = PdfReport(str(pdf), error=str(error))
    if not as_json:
        _show(report)
    return report
