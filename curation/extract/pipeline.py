"""Extracting one PDF into the store: read, segment, attach figures, merge answers, write once.

Everything is computed in memory first; blobs and items are written only when the whole PDF
succeeded, and the items in one store transaction, so a failure leaves nothing half-written.
Item ids come from the PDF's sha256 and the question number, so extracting the same file again
finds the items it made: without `force` it reports them and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curation.core.errors import BenchsmithError
from curation.core.item import Item, parse_item
from curation.core.workspace import Workspace
from curation.extract.answer_keys import find_key_start, parse_key_entries
from curation.extract.confidence import EXTRA_KEY as CONFIDENCE_KEY
from curation.extract.confidence import confidence_record
from curation.extract.document import ReadDocument, read_document
from curation.extract.figures import render_crop
from curation.extract.formulas import FORMULA_IMAGE_REASON
from curation.extract.key_sheet import AnswerKeyError, KeyChoice, KeyEntry, KeyInput, KeySheet
from curation.extract.latex_check import repair as repair_latex
from curation.extract.lines import Figure, Line
from curation.extract.passages import EXTRA_KEY as PASSAGE_KEY
from curation.extract.passages import passage_group
from curation.extract.pdf_open import OpenedPdf, load_page, open_pdf
from curation.extract.report import PdfReport
from curation.extract.segment import ExtractedQuestion, segment
from curation.llm import ModelClients, TextModel
from curation.pymupdf_light import pymupdf
from curation.steps.korea_stage import tag_new_items

STAGE = "extract"
Transcribe = Callable[[list[ExtractedQuestion], PdfReport], list[ExtractedQuestion]]
EMPTY_OPTION_REASON = "an option had no readable text: kept as a picture of its area"
LATEX_REPAIRED_REASON = "a formula did not parse: kept as plain text, check it"
NO_VISION_MODEL = ("--engine vlm needs a vision model: -m SPEC (e.g. 'openai-compatible:MODEL@http://HOST:PORT/v1"
                   "?vision=true'), or vlm_model under [extract] in benchsmith.toml")


@dataclass
class ExtractOptions:
    exam: str | None = None
    session: str | None = None
    engine: str = "auto"
    answer_key: Path | None = None
    force: bool = False
    author: str = "extract"
    vlm_model: str | None = None  # a vision model: the vlm engine's, or the auto engine's fallback
    ask_again: bool = False  # the vision model answers afresh: no cached or logged answer is reused
    key_section: str | None = None  # the elective (section) of the key file the papers answer
    key_form: str | None = None  # the form (홀수, 짝수 …) of the key file; default its first

    def reads_with_vlm(self) -> bool:
        return self.engine == "vlm" or (self.engine == "auto" and self.vlm_model is not None)


@dataclass
class Extraction:
    """What a PDF yields before anything is written."""

    items: list[Item]
    blobs: dict[str, bytes]  # blob ref -> bytes
    report: PdfReport
    resumable: bool = False  # questions that failed before may be written now beside the ones already stored


def item_id(sha256: str, question: ExtractedQuestion, runs: int) -> str:
    run = f"-r{question.run + 1}" if runs > 1 else ""
    return f"pdf-{sha256[:12]}{run}-q{question.number:03d}"


def extract_items(path: Path, options: ExtractOptions, key: KeyInput | None = None,
                  model: TextModel | None = None) -> Extraction:
    """Read and segment a PDF into validated items (nothing written). Raises PdfError. With a
    vision `model` (the vlm engine or the auto engine's fallback) pages without a usable text
    layer go to the model instead of OCR, and so do the questions it is asked to read."""
    if options.engine == "vlm" and model is None:
        raise BenchsmithError(NO_VISION_MODEL)
    opened = open_pdf(path)
    if model is None or not options.reads_with_vlm():
        document = read_document(opened, options.engine)
        return extract_items_from_entries(opened, document.entries, options, key, engine=options.engine,
                                          document=document)
    from curation.extract.vlm import VisionTranscriber

    document = read_document(opened, "pymupdf")
    transcriber = VisionTranscriber(opened, document, model, everything=options.engine == "vlm")
    engine = "vlm" if options.engine == "vlm" else "auto+vlm"
    extraction = extract_items_from_entries(opened, document.entries, options, key, engine=engine, document=document,
                                            transcribe=transcriber)
    extraction.resumable = True
    return extraction


def extract_items_from_entries(opened: OpenedPdf, entries: list[Line | Figure], options: ExtractOptions,
                               key: KeyInput | None, *, engine: str, document: ReadDocument | None = None,
                               transcribe: Transcribe | None = None) -> Extraction:
    """Segment a stream of lines and figures (from any engine) into items for one PDF; `transcribe`
    may replace questions (the vision engine) before the items are built."""
    report = PdfReport(str(opened.path), opened.sha256, opened.doc.page_count, engine)
    if document is not None:
        report.pages_without_text = document.pages_without_text
        report.ocr_pages = document.ocr_pages
        report.warnings += document.warnings
    lines = [e for e in entries if isinstance(e, Line)]
    key_start = find_key_start(lines)
    own_key: dict[int, KeyEntry] = {}
    if key_start is not None:
        cut = entries.index(lines[key_start])
        own_key = parse_key_entries([e for e in entries[cut:] if isinstance(e, Line)])
        entries = entries[:cut]
    chosen = as_key_choice(key, options)
    if chosen is not None:
        chosen = chosen.for_paper_form(paper_form(opened))
    short_numbers = {number for number, entry in own_key.items() if entry.format != "choice"}
    if chosen is not None:
        short_numbers |= chosen.short_answer_numbers()
    questions, stats = segment(entries, frozenset(short_numbers))
    if stats.dropped_runs:
        report.warnings += [f"numbered lines {span} have no options: taken for instructions, not questions"
                            for span in stats.dropped_runs]
    if stats.orphan_lines:
        report.warnings.append(f"{stats.orphan_lines} lines after the options of a question were not attached")
    if stats.figure_label_questions:
        report.warnings.append("options only as labels inside a figure: questions "
                               + ", ".join(map(str, stats.figure_label_questions)))
    report.warnings += [f"question {n}: {count} options (the paper has {stats.expected_options})"
                        for n, count in stats.odd_option_counts]
    report.short_answer = list(stats.short_answer)
    answer_key = dict(own_key)
    if chosen is not None:
        try:
            answer_key.update(chosen.keys_for(q.number for q in questions))
        except AnswerKeyError as error:
            raise AnswerKeyError(f"{opened.path}: {error}") from None
        report.warnings += chosen.notes()
    crop_empty_options(opened, questions)
    if transcribe is not None:
        questions = transcribe(questions, report)
    ocr_pages = document.ocr_pages if document is not None else []
    problems = document.page_problems if document is not None else {}
    return _build_items(opened.sha256, opened.path, questions, answer_key, options, report, stats.gaps,
                        ocr_pages, problems, machine_read=engine == "mineru")


def crop_empty_options(opened: OpenedPdf, questions: list[ExtractedQuestion]) -> None:
    """An option with neither text nor a figure keeps a picture of its area, for a person to read."""
    for question in questions:
        for option in question.options:
            if option.text.strip() or option.figure is not None or option.area is None:
                continue
            page_number, box = option.area
            page = load_page(opened, page_number - 1)
            rect = pymupdf.Rect(box) & page.rect
            option.figure = Figure(page_number, 0, tuple(rect), render_crop(page, rect), "other")
            if EMPTY_OPTION_REASON not in question.review:
                question.review.append(EMPTY_OPTION_REASON)


def as_key_choice(key: KeyInput | None, options: ExtractOptions) -> KeyChoice | None:
    """The key a paper is scored with: a KeyChoice as given, or {number: answer} as one section."""
    if key is None or isinstance(key, KeyChoice):
        return key
    return KeyChoice(KeySheet.from_mapping(str(options.answer_key or "the answer key"), key))


def paper_form(opened: OpenedPdf) -> str | None:
    """홀수 or 짝수 where the paper's first page says `홀수형` / `짝수형` in its text layer."""
    import re

    try:
        text = re.sub(r"\s+", "", load_page(opened, 0).get_text())
    except BenchsmithError:
        return None
    forms = [form for form in ("홀수", "짝수") if f"{form}형" in text]
    return forms[0] if len(forms) == 1 else None


def merge_key(entry: KeyEntry, options: int) -> tuple[dict[str, Any] | None, str | None]:
    """The typed key (as a dict) for a question with `options` options, or the reason it does
    not fit. A question with no options takes a number or a word; a plain digit read as an option
    number (a key table without circled digits) is that number."""
    if options == 0:
        if entry.format == "choice" and not entry.explicit and not isinstance(entry.answer, list):
            entry = entry.as_numeric()
        if entry.format in ("numeric", "text"):
            return entry.typed().as_dict(), None
        return None, f"key answer {entry.answer_text()} is not one of its 0 options; left empty"
    if entry.format != "choice":
        kind = "a number" if entry.format == "numeric" else "a word"
        return None, f"key answer {entry.answer} is {kind} but the question has {options} options; left empty"
    values = entry.answer if isinstance(entry.answer, list) else [entry.answer]
    if not all(isinstance(value, int) and 1 <= value <= options for value in values):
        return None, f"key answer {entry.answer_text()} is not one of its {options} options; left empty"
    return entry.typed().as_dict(), None


def _build_items(sha: str, path: Path, questions: list[ExtractedQuestion], key: dict[int, KeyEntry], options: ExtractOptions,
                 report: PdfReport, gaps: list[int], ocr_pages: list[int], problems: dict[int, str],
                 machine_read: bool = False) -> Extraction:
    blobs: dict[str, bytes] = {}
    runs = len({q.run for q in questions})
    items: list[Item] = []
    numbers = [q.number for q in questions]
    for question in questions:
        review = list(question.review)
        signals = set(question.signals)
        if question.page in ocr_pages:
            review.append(f"read by OCR ({problems.get(question.page, 'no text layer')}): check text and options")
            signals.add("ocr")
        if machine_read:
            review.append("read from MinerU output: check text, options and crops")
        images = [_image_ref(figure, sha, blobs) for figure in question.figures]
        if any(figure.kind == "formula" for figure in question.figures):
            review.append(FORMULA_IMAGE_REASON)
            signals.add("formula_image")
        stem, stem_repaired = repair_latex(question.stem)
        option_texts = [repair_latex(option.text) for option in question.options]
        if stem_repaired or any(repaired for _, repaired in option_texts):
            review.append(LATEX_REPAIRED_REASON)
            signals.add("latex_repaired")
        option_records = [{"text": text, "image": _image_ref(option.figure, sha, blobs) if option.figure else None}
                          for (text, _), option in zip(option_texts, question.options, strict=True)]
        entry = key.get(question.number) if runs == 1 else None
        answer: dict[str, Any] | None = None
        if entry is not None:
            answer, problem = merge_key(entry, len(option_records))
            if problem is not None:
                report.warnings.append(f"question {question.number}: {problem}")
                signals.add("key_mismatch")
        if EMPTY_OPTION_REASON in review:
            signals.add("option_crop")
        if "no stem text found" in review:
            signals.add("no_stem")
        record: dict[str, Any] = {
            "id": item_id(sha, question, runs),
            "source": {"exam": options.exam or path.stem, "session": options.session, "subject": question.subject,
                       "part": question.part, "number": question.number, "pdf_sha256": sha, "page": question.page,
                       "bbox": [round(v, 2) for v in question.bbox], "origin": path.name},
            "stem": stem,
            "options": [{k: v for k, v in option.items() if v is not None} for option in option_records],
            "answer": answer,
            "points": entry.points if entry is not None else None,
            "images": images,
            "flags": {"review_reasons": review},
            "taxonomy": {"subject": question.subject, "part": question.part},
            "status": "in_review" if "vlm" in signals else "extracted",  # a model's reading is never taken as read
            "extra": {CONFIDENCE_KEY: confidence_record(signals)},
        }
        if question.passage is not None:
            record["extra"][PASSAGE_KEY] = passage_group(sha, *question.passage)
        items.append(parse_item(record))
    report.questions = len(items)
    report.numbers = numbers
    report.numbering_gaps = sorted(set(gaps))
    report.count_options([len(item.options) for item in items])
    report.images_attached = sum(len(item.blob_refs()) for item in items)
    report.answers_merged = sum(1 for item in items if item.answer is not None)
    report.keys_without_question = sorted(set(key) - set(numbers)) if key else []
    report.questions_without_key = sorted(n for n in numbers if n not in key) if key else []
    report.marked_for_review = sum(1 for item in items if item.flags.review_reasons)
    return Extraction(items, blobs, report)


def _image_ref(figure: Figure, sha: str, blobs: dict[str, bytes]) -> dict[str, Any]:
    import hashlib

    ref = f"{hashlib.sha256(figure.png).hexdigest()}.png"
    blobs[ref] = figure.png
    record: dict[str, Any] = {"blob": ref, "kind": figure.kind,
                              "provenance": {"pdf_sha256": sha, "page": figure.page,
                                             "bbox": [round(v, 2) for v in figure.bbox]}}
    if figure.kind == "formula":
        record["latex"] = ""
    return record


def write_extraction(extraction: Extraction, workspace: Workspace, options: ExtractOptions) -> PdfReport:
    """Write blobs and items (one transaction); refuse a second extraction unless forced."""
    report = extraction.report
    ids = [item.id for item in extraction.items]
    existing = workspace.store.get_many(ids) if ids else {}
    missing = [item for item in extraction.items if item.id not in existing]
    if existing and not options.force and not (extraction.resumable and missing):
        report.skipped = (f"already extracted ({len(existing)} of {len(ids)} items exist, sha256 {(report.sha256 or '?')[:12]}); "
                          "use --force to write new revisions")
        report.unchanged = len(existing)
        return report
    items = extraction.items if options.force else missing  # a resumed run adds what failed before
    for ref, data in sorted(extraction.blobs.items()):
        workspace.blobs.put(data, ref.rsplit(".", 1)[1])
    source = Path(report.path)
    if source.is_file():  # the annotator renders the page and re-crops from `<sha256>.pdf`
        workspace.blobs.put(source.read_bytes(), "pdf")
    written = workspace.store.save_items(items, author=options.author, stage=STAGE,
                                         reason=f"extract {Path(report.path).name}")
    report.created, report.updated, report.unchanged = len(written.created), len(written.updated), len(written.unchanged)
    report.unchanged += len(extraction.items) - len(items)
    entered = written.created + written.updated
    report.korea_tagged = len(tag_new_items(workspace.store, items, entered, options.author,
                                             created=written.created).changed)
    return report


def extract_pdf(path: Path, workspace: Workspace, options: ExtractOptions, key: KeyInput | None = None,
                model: TextModel | None = None) -> PdfReport:
    """Extract and write one PDF; with a vision model configured in `options`, `model` is that model
    (`vision_model` builds it)."""
    if model is None and options.reads_with_vlm():
        raise BenchsmithError(NO_VISION_MODEL if options.vlm_model is None
                              else f"the vision model {options.vlm_model} was not given to the extraction")
    return write_extraction(extract_items(path, options, key, model), workspace, options)


def vision_model(options: ExtractOptions, workspace: Workspace, clients: ModelClients) -> TextModel:
    if options.vlm_model is None:
        raise BenchsmithError(NO_VISION_MODEL)
    return clients(options.vlm_model, workspace, options.ask_again)


def load_answer_key(path: Path | None, section: str | None = None, form: str | None = None) -> KeyChoice | None:
    """The key file read once for every paper; a --section or --form that names nothing in it
    fails here, before any paper is read."""
    if path is None:
        if section is not None or form is not None:
            raise AnswerKeyError("--section and --form choose from an answer key: give --answer-key")
        return None
    from curation.extract.key_files import read_key_sheet_file

    choice = KeyChoice(read_key_sheet_file(path), form=form, section=section)
    choice.check()
    return choice
