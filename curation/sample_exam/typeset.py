"""Setting rich text (plain text and formulas) into lines of positioned text runs."""

from __future__ import annotations

from dataclasses import dataclass

from curation.pymupdf_light import pymupdf
from curation.sample_exam.content import Formula, Rich

SCRIPT_SCALE = 0.7
SCRIPT_RISE = {"": 0.0, "sup": -0.38, "sub": 0.18}  # baseline shift in units of the font size


@dataclass(frozen=True)
class Run:
    """Text drawn at one position; `kind` is "", "sup" or "sub"."""

    x: float
    baseline: float
    text: str
    size: float
    kind: str = ""


@dataclass
class Typesetter:
    font: pymupdf.Font

    def width(self, text: str, size: float, kind: str = "") -> float:
        return self.font.text_length(text, fontsize=size * (SCRIPT_SCALE if kind else 1.0))

    def run(self, x: float, baseline: float, text: str, size: float, kind: str = "") -> Run:
        scale = SCRIPT_SCALE if kind else 1.0
        return Run(x, baseline + SCRIPT_RISE[kind] * size, text, size * scale, kind)

    def glyph_box(self, run: Run) -> tuple[float, float, float, float]:
        """The box a PDF text extractor reports for the run's glyphs."""
        width = self.font.text_length(run.text, fontsize=run.size)
        return (run.x, run.baseline - self.font.ascender * run.size, run.x + width,
                run.baseline - self.font.descender * run.size)

    @staticmethod
    def words(rich: Rich) -> list[list[tuple[str, str]]]:
        """Rich text as unbreakable words of (text, kind) runs; a formula is one word."""
        words: list[list[tuple[str, str]]] = []
        for piece in rich:
            if isinstance(piece, Formula):
                words.append(list(piece.runs))
                continue
            for index, word in enumerate(piece.split(" ")):
                if index == 0 and words and word and not piece.startswith(" "):
                    words[-1].append((word, ""))  # glued to the previous piece (e.g. after a formula)
                elif word:
                    words.append([(word, "")])
        return words

    def wrap(self, rich: Rich, size: float, first_width: float, width: float) -> list[list[list[tuple[str, str]]]]:
        """Greedy line breaking at spaces: a list of lines, each a list of words."""
        space = self.width(" ", size)
        lines: list[list[list[tuple[str, str]]]] = [[]]
        used = 0.0
        for word in self.words(rich):
            word_width = sum(self.width(text, size, kind) for text, kind in word)
            limit = first_width if len(lines) == 1 else width
            needed = word_width if not lines[-1] else used + space + word_width
            if lines[-1] and needed > limit:
                lines.append([word])
                used = word_width
            else:
                lines[-1].append(word)
                used = needed
        return lines

    def set_line(self, words: list[list[tuple[str, str]]], x: float, baseline: float, size: float) -> list[Run]:
        runs: list[Run] = []
        for index, word in enumerate(words):
            if index:
                runs.append(self.run(x, baseline, " ", size))
                x += self.width(" ", size)
            for text, kind in word:
                runs.append(self.run(x, baseline, text, size, kind))
                x += self.width(text, size, kind)
        return _merge_plain(runs)


def _merge_plain(runs: list[Run]) -> list[Run]:
    """Join neighbouring plain runs on one baseline (fewer, longer text-show operations)."""
    merged: list[Run] = []
    for run in runs:
        last = merged[-1] if merged else None
        if last is not None and not last.kind and not run.kind and last.baseline == run.baseline:
            merged[-1] = Run(last.x, last.baseline, last.text + run.text, last.size)
        else:
            merged.append(run)
    return merged


def truth_text(rich: Rich) -> str:
    """The text the ground truth records: formulas as \\( LaTeX \\)."""
    return "".join(piece if isinstance(piece, str) else f"\\({piece.latex}\\)" for piece in rich)
