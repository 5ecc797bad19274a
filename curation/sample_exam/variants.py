"""Named variants of the sample exam, one per layout the extractor must handle. Each changes how
the same questions are printed (and, for passages and tables, adds questions at the end); each
comes with its own ground truth. The canonical paper ends with short-answer questions (단답형);
the layout variants print the multiple-choice questions only."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    glyph_pictures: bool = False  # option markers, leading numbers and final "." drawn as pictures
    numbering: str = "{n}. "  # how a question number is printed
    passage: bool = False  # a shared reading passage with ㉠/[A] markers before two more questions
    columns: int = 2  # 3: three narrow columns (options one per line, figures scaled to the column)
    table: bool = False  # one more question whose stem holds a ruled table (truth: a Markdown table)
    broken_font: bool = False  # every font's ToUnicode map removed: the text layer reads as private-use glyphs
    short_answers: bool = False  # the 단답형 questions after the others (numbers and a word, no options)


CANONICAL = Variant(short_answers=True)
VARIANTS: dict[str, Variant] = {
    "glyphs": Variant(glyph_pictures=True),
    "numbering-mun": Variant(numbering="문 {n}. "),
    "numbering-beon": Variant(numbering="{n}번 "),
    "numbering-bracket": Variant(numbering="【{n}】 "),
    "passage": Variant(passage=True),
    "table": Variant(table=True),
    "three-column": Variant(columns=3),
    "broken-font": Variant(broken_font=True),
}


def variant_named(name: str | None) -> Variant:
    if name is None:
        return CANONICAL
    if name not in VARIANTS:
        raise ValueError(f"no sample-exam variant {name!r}; known: {', '.join(sorted(VARIANTS))}")
    return VARIANTS[name]
