"""What one extraction run did, per PDF: as lines for people and as JSON for scripts."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class PdfReport:
    path: str
    sha256: str | None = None
    pages: int = 0
    engine: str = ""
    questions: int = 0
    numbers: list[int] = field(default_factory=list)
    numbering_gaps: list[int] = field(default_factory=list)
    option_counts: dict[str, int] = field(default_factory=dict)
    images_attached: int = 0
    answers_merged: int = 0
    keys_without_question: list[int] = field(default_factory=list)
    questions_without_key: list[int] = field(default_factory=list)
    short_answer: list[int] = field(default_factory=list)  # questions read as short-answer: no options by design
    pages_without_text: list[int] = field(default_factory=list)
    ocr_pages: list[int] = field(default_factory=list)
    marked_for_review: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    korea_tagged: int = 0  # Korea-specific candidates tagged on entry (stage tag-korea)
    vlm_model: str | None = None  # the vision model that read some regions (curation/extract/vlm.py)
    vlm_regions: int = 0
    skipped: str | None = None
    error: str | None = None  # the whole PDF failed: nothing written
    errors: list[str] = field(default_factory=list)  # questions (or page regions) that could not be read: left out
    warnings: list[str] = field(default_factory=list)

    def count_options(self, counts: list[int]) -> None:
        self.option_counts = {str(k): v for k, v in sorted(Counter(counts).items())}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary_lines(self) -> list[str]:
        if self.error:
            return [f"error: {self.error}"]
        head = f"{self.path}: {self.questions} questions ({self.engine}, {self.pages} pages)"
        if self.skipped:
            return [f"{self.path}: {self.skipped}"]
        lines = [head,
                 f"  numbering gaps: {_list(self.numbering_gaps)}",
                 f"  options per question: {', '.join(f'{k}×{v}' for k, v in self.option_counts.items()) or 'none'}",
                 f"  images attached: {self.images_attached}",
                 f"  answers merged: {self.answers_merged}; keys without a question: {_list(self.keys_without_question)}; "
                 f"questions without a key: {_list(self.questions_without_key)}",
                 f"  short-answer questions (no options): {_spans(self.short_answer)}",
                 f"  pages without text: {_list(self.pages_without_text)}; OCR pages: {_list(self.ocr_pages)}",
                 f"  marked for review: {self.marked_for_review}",
                 f"  store: {self.created} new, {self.updated} updated, {self.unchanged} unchanged; "
                 f"{self.korea_tagged} tagged as Korea-specific candidates"]
        if self.vlm_model:
            lines.append(f"  vision model {self.vlm_model}: {self.vlm_regions} regions read")
        lines += [f"  warning: {warning}" for warning in self.warnings]
        lines += [f"  error: {error}" for error in self.errors]
        return lines


def _spans(values: list[int]) -> str:
    from curation.extract.key_sheet import spans

    return spans(values) if values else "none"


def _list(values: list[int]) -> str:
    return ", ".join(str(v) for v in values) if values else "none"
