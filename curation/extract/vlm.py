"""The vision-model transcription engine: regions of the page read by a vision model, merged with
the layout's boxes.

`--engine vlm` reads every question the layout found, each in its own box; with a model configured
(`--vlm-model`, or `[extract] vlm_model` in benchsmith.toml) the ordinary engine hands over only
what the text layer cannot give: pages with a broken or missing text layer and formula-heavy
pages. A page with no usable text layer has no layout: it is read column by column and the
model's own boxes place its questions on the page.

Requests go through the model client of curation/llm.py, so the evaluation runners send them:
cached, logged, retried, resumable. An answer that is not a valid transcription is asked again
(a new sample) up to `max_tries`; what still fails is one clear error per question, and that
question is left out (with `--engine vlm`) or keeps the layout's text with a review reason (in
the fallback). Every transcribed question is marked for review with the `vlm` confidence signal.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from curation.extract.document import ReadDocument, blank_page
from curation.extract.figures import render_crop
from curation.extract.latex_check import text_problems
from curation.extract.lines import Figure
from curation.extract.pdf_open import OpenedPdf, load_page
from curation.extract.report import PdfReport
from curation.extract.segment import ExtractedOption, ExtractedQuestion
from curation.extract.vlm_prompt import (
    PROMPT_VERSION,
    SYSTEM,
    TranscribedQuestion,
    Transcription,
    TranscriptionError,
    house_delimiters,
    parse_transcription,
    response_schema,
    user_text,
)
from curation.extract.vlm_regions import Region, column_regions, question_region
from curation.llm import TextModel, TextRequest
from curation.pymupdf_light import pymupdf

MAX_TRIES = 3
VLM_REASON = "transcribed by the vision model {model}: check text, formulas, options and crops"
NO_LAYOUT_REASON = "page {page} has no usable text layer ({problem}): its box and crops are the vision model's"
KEPT_LAYOUT_REASON = "the vision model could not read it ({error}): the text layer's reading is kept"
FIGURE_KIND = "other"  # a crop where the model pointed: no kind is known


@dataclass
class Answer:
    """What became of one region: its transcription, or why there is none."""

    transcription: Transcription | None = None
    error: str | None = None
    tries: int = 0


@dataclass
class VisionTranscriber:
    """Called by the pipeline with the layout's questions; returns the questions to build items from."""

    opened: OpenedPdf
    document: ReadDocument
    model: TextModel
    everything: bool  # --engine vlm: every question; otherwise only what the text layer cannot give
    max_tries: int = MAX_TRIES
    regions: list[Region] = field(default_factory=list)

    def __call__(self, questions: list[ExtractedQuestion], report: PdfReport) -> list[ExtractedQuestion]:
        by_page: dict[int, list[ExtractedQuestion]] = {}
        for question in questions:
            by_page.setdefault(question.page, []).append(question)
        no_layout = self._pages_without_layout()
        chosen = [q for page, page_questions in by_page.items() if page not in no_layout
                  and (self.everything or formula_heavy(page_questions)) for q in page_questions]
        self.regions = [question_region(self._page(q.page), self.opened.sha256, q) for q in chosen]
        for number in no_layout:
            self.regions += column_regions(self._page(number), number, self.opened.sha256)
        answers = transcribe(self.regions, self.model, self.max_tries)
        report.vlm_model = self.model.name
        report.vlm_regions = len(self.regions)
        return self._merge(questions, no_layout, answers, report)

    def _page(self, number: int) -> pymupdf.Page:
        return load_page(self.opened, number - 1)

    def _pages_without_layout(self) -> list[int]:
        """Pages whose text layer is unusable and that hold something to read."""
        return [number for number, problem in sorted(self.document.page_problems.items())
                if problem != "OCR requested" and not blank_page(self._page(number))]

    def _merge(self, questions: list[ExtractedQuestion], no_layout: list[int], answers: dict[str, Answer],
               report: PdfReport) -> list[ExtractedQuestion]:
        read = {id(region.question): region for region in self.regions if region.question is not None}
        merged: list[ExtractedQuestion] = []
        for question in questions:
            region = read.get(id(question))
            if region is None:
                merged.append(question)
                continue
            answer = answers[region.key]
            if answer.transcription is not None:
                merged.append(self._from_layout(region, _matching(answer.transcription, question.number)))
            elif self.everything:
                report.errors.append(f"question {question.number} (page {question.page}): {answer.error}")
            else:
                question.review.append(KEPT_LAYOUT_REASON.format(error=answer.error))
                report.warnings.append(f"question {question.number} (page {question.page}): vision model: {answer.error}")
                merged.append(question)
        for number in no_layout:
            self._add_unlaid(merged, [r for r in self.regions if r.page == number and r.question is None], answers, report)
        merged.sort(key=lambda q: q.page)  # stable: reading order within a page is kept
        _flag_odd_option_counts(merged)
        return merged

    def _from_layout(self, region: Region, read: TranscribedQuestion) -> ExtractedQuestion:
        """The layout's question (number, page, box, figures) with the model's text and options."""
        layout = region.question
        assert layout is not None
        review = [VLM_REASON.format(model=self.model.name)]
        if read.number is not None and read.number != layout.number:
            review.append(f"the vision model read number {read.number} where the layout has {layout.number}")
        options = self._options(region, read)
        if len(options) == len(layout.options):  # a picture option the layout cropped and the model did not box
            for option, laid in zip(options, layout.options, strict=True):
                option.figure = option.figure or laid.figure
        figures = layout.figures or [self._crop(region, box) for box in read.figures]
        stem = house_delimiters(read.stem).strip()
        if layout.passage_text and not stem.startswith(layout.passage_text):
            stem = f"{layout.passage_text}\n{stem}"  # the region is the question's own box: the shared passage is outside it
        return ExtractedQuestion(layout.number, layout.run, layout.subject, layout.part, layout.page, layout.bbox,
                                 stem, options, figures, review, layout.option_style, {"vlm"}, layout.passage,
                                 layout.passage_text, short_answer=layout.short_answer and not options)

    def _add_unlaid(self, merged: list[ExtractedQuestion], regions: list[Region], answers: dict[str, Answer],
                    report: PdfReport) -> None:
        """The questions of a page without layout, placed where the model says they are."""
        for region in regions:
            answer = answers[region.key]
            if answer.transcription is None:
                report.errors.append(f"page {region.page}, {region.label}: {answer.error}")
                continue
            problem = self.document.page_problems[region.page]
            for read in answer.transcription.questions:
                if read.number is None:
                    self._continue_previous(merged, region, read, report)
                    continue
                if any(q.number == read.number and q.run == 0 for q in merged):
                    report.errors.append(f"page {region.page}, {region.label}: question {read.number} was read "
                                         "twice; this reading is left out")
                    continue
                review = [VLM_REASON.format(model=self.model.name),
                          NO_LAYOUT_REASON.format(page=region.page, problem=problem)]
                box = region.to_page(read.box) if read.box else region.box
                merged.append(ExtractedQuestion(read.number, 0, None, None, region.page, box,
                                                house_delimiters(read.stem).strip(), self._options(region, read),
                                                [self._crop(region, b) for b in read.figures], review, "circled", {"vlm"}))

    def _continue_previous(self, merged: list[ExtractedQuestion], region: Region, read: TranscribedQuestion,
                           report: PdfReport) -> None:
        """The end of a question begun in the previous region: its text and options join that question."""
        previous = merged[-1] if merged and "vlm" in merged[-1].signals else None
        if previous is None:
            report.warnings.append(f"page {region.page}, {region.label}: the end of a question whose start "
                                   "was not read; left out")
            return
        previous.stem = f"{previous.stem}\n{house_delimiters(read.stem).strip()}"
        previous.options += self._options(region, read)
        previous.figures += [self._crop(region, box) for box in read.figures]
        previous.review.append(f"continued on page {region.page} ({region.label}): check that the parts join")

    def _options(self, region: Region, read: TranscribedQuestion) -> list[ExtractedOption]:
        return [ExtractedOption(house_delimiters(option.text).strip(),
                                self._crop(region, option.figure) if option.figure else None) for option in read.options]

    def _crop(self, region: Region, pixels: list[float]) -> Figure:
        box = region.to_page(pixels)
        page = self._page(region.page)
        return Figure(region.page, 0, box, render_crop(page, pymupdf.Rect(box)), FIGURE_KIND)


def transcribe(regions: list[Region], model: TextModel, max_tries: int = MAX_TRIES) -> dict[str, Answer]:
    """Every region through the model; an invalid answer is asked again, up to `max_tries` in all.
    A request that failed at the backend (after the runner's own retries) or was refused is final."""
    answers = {region.key: Answer() for region in regions}
    pending = {region.key: region for region in regions}
    schema = response_schema()
    for attempt in range(max_tries):
        if not pending:
            break
        requests = [TextRequest(key, SYSTEM, user_text(region.where(), *region.size,
                                                       region.question.number if region.question else None),
                                attempt, schema, (region.png,)) for key, region in pending.items()]
        for key, result in model.generate(requests, PROMPT_VERSION).items():
            answer = answers[key]
            answer.tries = attempt + 1
            if result.text is None:
                answer.error = result.error or "no answer"
                del pending[key]
                continue
            try:
                answer.transcription = _checked(parse_transcription(result.text), pending[key])
                answer.error = None
                del pending[key]
            except TranscriptionError as error:
                answer.error = str(error)
    for key in pending:
        answers[key].error = f"{answers[key].error} (after {max_tries} tries)"
    return answers


def _checked(transcription: Transcription, region: Region) -> Transcription:
    """A question's own region must yield that question whole (a short-answer question the layout
    found: its stem, no options)."""
    if region.question is None:
        return transcription
    if not transcription.questions:
        raise TranscriptionError(f"no question found in the region of question {region.question.number}")
    if not _matching(transcription, region.question.number).complete(region.question.short_answer):
        raise TranscriptionError(f"question {region.question.number} read without its stem or with fewer than "
                                 "two options")
    return transcription


def _matching(transcription: Transcription, number: int) -> TranscribedQuestion:
    """The transcribed question with the layout's number, else the first one (the region holds one)."""
    return next((q for q in transcription.questions if q.number == number), transcription.questions[0])


def formula_heavy(questions: list[ExtractedQuestion]) -> bool:
    """A page whose formulas the text layer cannot be trusted with: a formula drawn as a picture or
    one that does not parse, or formulas in at least two questions and a third of them."""
    texts = [[q.stem, *(o.text for o in q.options)] for q in questions]
    if any(f.kind == "formula" for q in questions for f in q.figures):
        return True
    if any(text_problems(text) for question_texts in texts for text in question_texts):
        return True
    with_formulas = sum(1 for question_texts in texts if any("\\(" in t or "$$" in t for t in question_texts))
    return with_formulas >= 2 and 3 * with_formulas >= len(questions)


def _flag_odd_option_counts(questions: list[ExtractedQuestion]) -> None:
    counts = Counter(len(q.options) for q in questions)
    if not counts:
        return
    expected = counts.most_common(1)[0][0]
    for question in questions:
        if "vlm" in question.signals and len(question.options) != expected and not question.short_answer:
            question.review.append(f"{len(question.options)} options read where the paper has {expected}")
            question.signals.add("option_count")

