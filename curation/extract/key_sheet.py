"""An answer-key file as read: its forms (홀수형, 짝수형 …), each form's sections (공통 과목 and the
electives, numbered alike), and per question its number, format, answer and points (배점).

`KeyChoice` picks what one paper is scored with: a form, the sections every paper shares (their
numbers appear in no other section) and, where sections answer the same numbers (electives), the
one named by `--section`. A paper that has questions only electives answer needs that choice.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from curation.core.errors import BenchsmithError
from scoring.keys import ChoiceKey, NumericKey, TextKey

KeyFormat = Literal["choice", "numeric", "text"]
LegacyAnswer = int | list[int]


class AnswerKeyError(BenchsmithError):
    exit_code = 2


@dataclass(frozen=True)
class KeyEntry:
    """One question's key. `answer`: the 1-based option number (a sorted list when several are
    right) for `choice`; the number as written (`"7"`, `"120"`, `"0.5"`) for `numeric`; the word
    as written (`"안개"`) for `text`.
    `explicit` is False for a plain digit taken as an option number (a table without circled
    digits): a question with no options reads it as a number instead."""

    number: int
    format: KeyFormat
    answer: int | list[int] | str
    points: float | None = None
    explicit: bool = True

    def typed(self) -> ChoiceKey | NumericKey | TextKey:
        if self.format == "numeric":
            return NumericKey(value=str(self.answer))
        if self.format == "text":
            return TextKey(accepted=[str(self.answer)])
        options = self.answer if isinstance(self.answer, list) else [int(self.answer)]  # type: ignore[arg-type]
        return ChoiceKey(options=options)

    def as_numeric(self) -> KeyEntry:
        """The same key read as a number (a plain digit on a question that has no options)."""
        value = self.answer if not isinstance(self.answer, list) else ",".join(map(str, self.answer))
        return KeyEntry(self.number, "numeric", str(value), self.points, self.explicit)

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "format": self.format, "answer": self.answer, "points": _points(self.points)}

    def answer_text(self) -> str:
        if self.format != "choice":
            return str(self.answer)
        values = self.answer if isinstance(self.answer, list) else [self.answer]
        return ", ".join(_circled(int(value)) for value in values)  # type: ignore[arg-type]


@dataclass
class KeySection:
    name: str | None  # None: the table names no section
    keys: list[KeyEntry] = field(default_factory=list)

    def numbers(self) -> set[int]:
        return {entry.number for entry in self.keys}

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "keys": [entry.to_json() for entry in sorted(self.keys, key=_by_number)]}


@dataclass
class KeyForm:
    form: str | None  # 홀수, 짝수, A …; None where the file names none
    page: int | None  # the first page it is printed on (None: not a PDF)
    sections: list[KeySection] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"form": self.form, "page": self.page, "sections": [section.to_json() for section in self.sections]}

    def shared_and_alternatives(self) -> tuple[list[KeySection], list[KeySection]]:
        """Sections whose numbers no other section has (every paper's), and the rest (electives)."""
        shared: list[KeySection] = []
        alternatives: list[KeySection] = []
        for section in self.sections:
            others = set().union(*(other.numbers() for other in self.sections if other is not section))
            (alternatives if section.numbers() & others else shared).append(section)
        return shared, alternatives


@dataclass
class KeySheet:
    source: str
    forms: list[KeyForm] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"forms": [form.to_json() for form in self.forms]}

    def count(self) -> int:
        return sum(len(section.keys) for form in self.forms for section in form.sections)

    @classmethod
    def from_mapping(cls, source: str, key: Mapping[int, Any]) -> KeySheet:
        """One unnamed form and section from {number: answer} (option numbers, a KeyEntry, or a number as text)."""
        entries = [value if isinstance(value, KeyEntry) else entry_from_value(number, value)
                   for number, value in sorted(key.items())]
        return cls(source, [KeyForm(None, None, [KeySection(None, entries)])])

    def legacy(self) -> dict[int, LegacyAnswer | str]:
        """{number: option number(s), or the number as written} of the first form, first section first."""
        found: dict[int, LegacyAnswer | str] = {}
        for section in self.forms[0].sections if self.forms else []:
            for entry in section.keys:
                found.setdefault(entry.number, entry.answer)
        return found


def entry_from_value(number: int, value: Any, points: float | None = None) -> KeyEntry:
    """A key from a CSV/JSON value. Circled digits, letters, `3번` and lists are option numbers; a
    plain digit 1–9 is one too, but not explicitly (a question without options reads it as a
    number); any other number (`12`, `0.5`, `3/4`) is a numeric answer. A dict is a typed key
    (`{"format": "numeric", "value": "7"}`). Raises ValueError."""
    from curation.answers import parse_answer_key

    if isinstance(value, dict):
        return _typed_entry(number, value, points)
    if isinstance(value, bool):
        raise ValueError(f"answer {value!r} is not an option number")
    if isinstance(value, int):
        if 1 <= value <= 9:
            return KeyEntry(number, "choice", value, points, explicit=False)
        return KeyEntry(number, "numeric", str(value), points)
    if isinstance(value, float):
        return KeyEntry(number, "numeric", repr(value), points)
    if isinstance(value, list):
        return KeyEntry(number, "choice", parse_answer_key(value), points)
    text = str(value).strip()
    if SINGLE_DIGITS.match(text):
        return KeyEntry(number, "choice", parse_answer_key(text), points, explicit=False)
    if NUMBER.match(text):
        return KeyEntry(number, "numeric", re.sub(r"\s+", "", text), points)
    return KeyEntry(number, "choice", parse_answer_key(text), points)


def _typed_entry(number: int, value: dict[str, Any], points: float | None) -> KeyEntry:
    from pydantic import ValidationError

    from scoring.keys import parse_key

    try:
        typed = parse_key(value)
    except ValidationError as error:
        raise ValueError(f"question {number}: not a key ({error.errors()[0]['msg']})") from None
    if isinstance(typed, ChoiceKey):
        return KeyEntry(number, "choice", typed.options[0] if len(typed.options) == 1 else sorted(typed.options), points)
    if isinstance(typed, NumericKey):
        return KeyEntry(number, "numeric", typed.value, points)
    if isinstance(typed, TextKey) and len(typed.accepted) == 1:
        return KeyEntry(number, "text", typed.accepted[0], points)
    raise ValueError(f"question {number}: {typed.format} keys are not read from key files")


NUMBER = re.compile(r"^-?(\d+(\.\d+)?|\d+\s*/\s*\d+)$")
SINGLE_DIGITS = re.compile(r"^[1-9](\s*,\s*[1-9])*$")


def section_key(name: str) -> str:
    """How section names are compared: NFC, spaces and case ignored."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFC", name)).casefold()


def form_key(name: str) -> str:
    return section_key(name).removesuffix("형")


@dataclass(frozen=True)
class KeyChoice:
    """What a paper is scored with from a key sheet: a form (default: the first) and, among
    sections answering the same numbers, one by name (or 1-based position)."""

    sheet: KeySheet
    form: str | None = None
    section: str | None = None
    paper_form: bool = False  # the form was taken from what the paper says (홀수형 on its first page)

    def for_paper_form(self, form: str | None) -> KeyChoice:
        """The choice for a paper that names its form: that form, unless one was chosen or the
        sheet does not have it."""
        if form is None or self.form is not None or len(self.sheet.forms) < 2:
            return self
        if any(f.form is not None and form_key(f.form) == form_key(form) for f in self.sheet.forms):
            return KeyChoice(self.sheet, form=form, section=self.section, paper_form=True)
        return self

    def check(self) -> None:
        """Raise AnswerKeyError now when the form or section names nothing in the sheet."""
        chosen = self._form()
        if self.section is not None:
            self._section(chosen)

    def notes(self) -> list[str]:
        if self.paper_form:
            return [f"the paper says {self.form}형: the answer key's {self.form} form is used"]
        if self.form is None and len(self.sheet.forms) > 1:
            names = ", ".join(_form_name(form) for form in self.sheet.forms)
            return [f"the answer key has forms {names}: the {_form_name(self.sheet.forms[0])} form is used "
                    "(--form chooses another)"]
        return []

    def short_answer_numbers(self) -> frozenset[int]:
        """Numbers some section of the form (the chosen one, where chosen) answers with a number (or a word)."""
        form = self._form()
        shared, alternatives = form.shared_and_alternatives()
        sections = shared + ([self._section(form)] if self.section is not None else alternatives)
        return frozenset(entry.number for section in sections for entry in section.keys if entry.format != "choice")

    def keys_for(self, numbers: Iterable[int]) -> dict[int, KeyEntry]:
        """{number: key} for a paper with these question numbers. Raises AnswerKeyError when the
        paper has questions only alternative sections answer and no section was chosen."""
        form = self._form()
        shared, alternatives = form.shared_and_alternatives()
        chosen = self._section(form) if self.section is not None else None
        keys: dict[int, KeyEntry] = {}
        for section in shared:
            keys.update({entry.number: entry for entry in section.keys})
        if chosen is not None:
            keys.update({entry.number: entry for entry in chosen.keys})
            return keys
        ambiguous = sorted(set(numbers) & set().union(*(section.numbers() for section in alternatives)))
        if ambiguous:
            names = ", ".join(section_label(form, section) for section in alternatives)
            raise AnswerKeyError(f"questions {spans(ambiguous)} have keys in several sections of {self.sheet.source} "
                                 f"({names}): choose one with --section")
        return keys

    def _form(self) -> KeyForm:
        if not self.sheet.forms:
            raise AnswerKeyError(f"{self.sheet.source}: no answer key found")
        if self.form is None:
            return self.sheet.forms[0]
        for form in self.sheet.forms:
            if form.form is not None and form_key(form.form) == form_key(self.form):
                return form
        names = ", ".join(_form_name(form) for form in self.sheet.forms)
        raise AnswerKeyError(f"{self.sheet.source}: no form {self.form!r} in the answer key (forms: {names})")

    def _section(self, form: KeyForm) -> KeySection:
        assert self.section is not None
        for section in form.sections:
            if section.name is not None and section_key(section.name) == section_key(self.section):
                return section
        if self.section.isdigit() and 1 <= int(self.section) <= len(form.sections):
            return form.sections[int(self.section) - 1]
        names = ", ".join(section_label(form, section) for section in form.sections)
        raise AnswerKeyError(f"{self.sheet.source}: no section {self.section!r} in the answer key (sections: {names})")


KeyInput = KeyChoice | Mapping[int, Any]  # what extraction takes: a chosen key sheet, or {number: answer}


def section_label(form: KeyForm, section: KeySection) -> str:
    """The section's name, or its 1-based position where the table names none."""
    return section.name if section.name is not None else f"#{form.sections.index(section) + 1} (unnamed)"


def spans(numbers: list[int]) -> str:
    """`16–22, 29–30` for [16, …, 22, 29, 30]."""
    out: list[str] = []
    for number in sorted(numbers):
        if out and "–" in out[-1] and int(out[-1].split("–")[1]) == number - 1:
            out[-1] = f"{out[-1].split('–')[0]}–{number}"
        elif out and "–" not in out[-1] and int(out[-1]) == number - 1:
            out[-1] = f"{out[-1]}–{number}"
        else:
            out.append(str(number))
    return ", ".join(out)


def _form_name(form: KeyForm) -> str:
    return form.form if form.form is not None else f"(unnamed, page {form.page})"


def _points(points: float | None) -> float | int | None:
    return int(points) if points is not None and float(points).is_integer() else points


def _by_number(entry: KeyEntry) -> int:
    return entry.number


def _circled(value: int) -> str:
    from curation.answers import CIRCLED

    return CIRCLED[value - 1] if 1 <= value <= len(CIRCLED) else str(value)
