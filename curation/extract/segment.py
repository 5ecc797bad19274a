"""Segmenting a stream of lines and figures (in reading order) into questions and options.

- A line `N.` (or `문 N.`, `N번`, `【N】`) starts a question only if N follows the previous question (or N skips one and the
  line starts at the column edge, reported as a gap). The first question may have any number.
- A run of numbers whose items mostly have no options (numbered instructions on a cover) is
  dropped and reported; a restart at 1 is allowed only after such a run or a subject header.
- `1과목 …` / `제1과목 …` set the subject and part of the questions that follow.
- `[41～42] …` starts a passage shared by those questions (it is put before each stem).
- Options: circled digits anywhere in a line (in sequence), otherwise `(1)`, `1)`, `1.`, `가.`,
  `A.` at the start of a cell (a cell is text between wide gaps), in sequence.
- Lines after the last option that are in another column or after a gap are not the option's.
- Stem lines join with a space; a 〈보기〉 title and ㄱ./ㄴ./ㄷ. entries start new lines.
- Short-answer questions have no options and are not odd: those after a `단답형` / `주관식` label
  (until `5지선다형` or a subject header), those with an answer blank (`답: ____`), and those whose
  number the answer key answers with a number (`short_answer`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from curation.extract.lines import (
    CIRCLED_MARKERS,
    OPTION_PLACEHOLDER,
    Box,
    Figure,
    Line,
    union,
    vertical_overlap,
)

QUESTION_START = re.compile(r"^\s*(?:문\s*(\d{1,3})\s*[.．]?|【\s*(\d{1,3})\s*】|(\d{1,3})\s*번(?![가-힣])|(\d{1,3})\s*[.．](?!\d))\s*")
SUBJECT_HEADER = re.compile(r"^\s*(?:제\s*)?(\d{1,2})\s*과목\s*[:：.]?\s*(.*?)\s*$")
SHORT_LABEL = re.compile(r"^\s*[\[【〈<(［]?\s*(단답형|단답식|주관식|서답형)\s*[\]】〉>)］]?\s*$")
CHOICE_LABEL = re.compile(r"^\s*[\[【〈<(［]?\s*(\d\s*지\s*)?(선다형|선택형|객관식)\s*[\]】〉>)］]?\s*$")
ANSWER_BLANK = re.compile(r"답\s*[:：]\s*(_{2,}|\(\s*\)|\[\s*\])|\[\s*답\s*\]\s*$|\(\s*답\s*\)\s*$")
GROUP_HEADER = re.compile(r"^\s*\[\s*(\d{1,3})\s*[～~∼\-–]\s*(\d{1,3})\s*\]")
PARAGRAPH_START = re.compile(r"^(\||〈\s*보\s*기\s*〉|‹\s*보\s*기\s*›|<\s*보\s*기\s*>|\[\s*보\s*기\s*\]|[ㄱ-ㅎ]\s*[.)]|\([가-하]\)\s)")
BOGI_TITLE = re.compile(r"^(〈\s*보\s*기\s*〉|‹\s*보\s*기\s*›|<\s*보\s*기\s*>|\[\s*보\s*기\s*\])$")
OPTION_STYLES: dict[str, tuple[re.Pattern[str], str]] = {
    "paren": (re.compile(r"^\(\s*([1-9])\s*\)\s*"), "123456789"),
    "digit_paren": (re.compile(r"^([1-9])\s*\)\s*"), "123456789"),
    "digit_dot": (re.compile(r"^([1-9])\s*\.(?!\d)\s*"), "123456789"),
    "hangul": (re.compile(r"^([가나다라마바])\s*[.)]\s*"), "가나다라마바"),
    "latin": (re.compile(r"^([A-F])\s*[.)]\s*"), "ABCDEF"),
}
FIGURE_LABEL_REASON = "options are labels inside the figure: check the option texts"
GLYPH_PICTURE_REASON = "characters drawn as pictures were read by OCR: check them"
UNREAD_PICTURE_REASON = "a character drawn as a picture could not be read: kept as its picture"

Entry = Line | Figure


@dataclass
class ExtractedOption:
    text: str
    figure: Figure | None = None
    area: tuple[int, Box] | None = None  # (page, box) right of the marker: cropped when there is no text


@dataclass
class ExtractedQuestion:
    number: int
    run: int
    subject: str | None
    part: str | None
    page: int
    bbox: Box
    stem: str
    options: list[ExtractedOption]
    figures: list[Figure]
    review: list[str] = field(default_factory=list)
    option_style: str = "circled"
    signals: set[str] = field(default_factory=set)  # confidence signals (curation/extract/confidence.py)
    passage: tuple[int, int] | None = None  # (first, last) question of the passage it shares
    passage_text: str = ""  # that passage's text, which the stem begins with
    short_answer: bool = False  # no options by design: the answer is written (a number, a word)


@dataclass
class Chunk:
    number: int
    run: int
    subject: str | None
    part: str | None
    entries: list[Entry]
    passage: Passage | None = None
    short_label: bool = False  # after a 단답형 / 주관식 label


@dataclass
class Passage:
    first: int
    last: int
    entries: list[Entry]


@dataclass
class SegmentStats:
    preamble_lines: int = 0
    orphan_lines: int = 0
    dropped_runs: list[str] = field(default_factory=list)
    gaps: list[int] = field(default_factory=list)
    figure_label_questions: list[int] = field(default_factory=list)
    odd_option_counts: list[tuple[int, int]] = field(default_factory=list)
    expected_options: int = 0
    short_answer: list[int] = field(default_factory=list)  # questions read as short-answer (no options)


def segment(entries: list[Entry], short_answer: set[int] | frozenset[int] = frozenset()) -> tuple[list[ExtractedQuestion], SegmentStats]:
    """Questions in reading order. `short_answer`: the numbers the answer key answers with a
    number (such a question with no options is a short-answer question)."""
    stats = SegmentStats()
    runs = _chunk(entries, stats)
    parsed_runs = [[_parse(chunk, stats) for chunk in run] for run in runs]
    for run in parsed_runs:
        for question in run:
            question.short_answer = not question.options and (question.short_answer or question.number in short_answer)
    kept: list[ExtractedQuestion] = []
    for run in parsed_runs:
        with_options = sum(1 for question in run if len(question.options) >= 2 or question.short_answer)
        if run and with_options < 0.5 * len(run):
            stats.dropped_runs.append(f"{run[0].number}–{run[-1].number}")
            stats.preamble_lines += sum(1 for _ in run)
            continue
        kept += run
    counts = Counter(len(q.options) for q in kept if len(q.options) >= 2)
    stats.expected_options = counts.most_common(1)[0][0] if counts else 0
    for question in kept:
        if question.short_answer:
            stats.short_answer.append(question.number)
            continue
        if not question.options and question.figures and stats.expected_options:
            question.options = [ExtractedOption(CIRCLED_MARKERS[i]) for i in range(stats.expected_options)]
            question.review.append(FIGURE_LABEL_REASON)
            question.signals.add("option_count")
            stats.figure_label_questions.append(question.number)
        elif stats.expected_options and len(question.options) != stats.expected_options:
            stats.odd_option_counts.append((question.number, len(question.options)))
            question.review.append(f"{len(question.options)} options found where the paper has {stats.expected_options}")
            question.signals.add("option_count")
    return kept, stats


def question_number(start: re.Match[str]) -> int:
    """The number of a QUESTION_START match, whichever numbering form matched (`1.`, `문 1.`, `1번`, `【1】`)."""
    return int(next(group for group in start.groups() if group is not None))


# -- chunking -------------------------------------------------------------------------------------
def _chunk(entries: list[Entry], stats: SegmentStats) -> list[list[Chunk]]:
    runs: list[list[Chunk]] = []
    current: Chunk | None = None
    passage: Passage | None = None
    subject: tuple[str | None, str | None] = (None, None)
    subject_changed = False
    short_label = False
    question_x: float | None = None
    for entry in entries:
        if isinstance(entry, Figure):
            if passage is not None:
                passage.entries.append(entry)
            elif current is not None:
                current.entries.append(entry)
            continue
        text = entry.text
        header = SUBJECT_HEADER.match(text)
        if header and len(text) <= 40:
            name = header.group(2).strip(" :：") or None
            subject = (name, f"{int(header.group(1))}과목")
            subject_changed = True
            short_label = False
            continue
        if SHORT_LABEL.match(text) or CHOICE_LABEL.match(text):  # a label over the questions that follow
            short_label = bool(SHORT_LABEL.match(text))
            continue
        group = GROUP_HEADER.match(text)
        if group:
            passage = Passage(int(group.group(1)), int(group.group(2)), [entry])
            continue
        start = QUESTION_START.match(text)
        if start and _starts_question(question_number(start), entry, current, runs, subject_changed, question_x, stats):
            number = question_number(start)
            if current is None or number == 1 and current.number != 0 and number <= current.number:
                runs.append([])
            current = Chunk(number, len(runs) - 1, subject[0], subject[1], [entry], short_label=short_label)
            if passage is not None and passage.first <= number <= passage.last:
                current.passage = passage
            elif passage is not None:
                passage = None
            runs[-1].append(current)
            subject_changed = False
            question_x = entry.bbox[0]
            continue
        if passage is not None and (current is None or current.passage is not passage):
            passage.entries.append(entry)
        elif current is not None:
            current.entries.append(entry)
        else:
            stats.preamble_lines += 1
    return runs


def _starts_question(number: int, line: Line, current: Chunk | None, runs: list[list[Chunk]],
                     subject_changed: bool, question_x: float | None, stats: SegmentStats) -> bool:
    if current is None:
        return True
    digit_options = _digit_options(current)
    if digit_options and number == digit_options + 1:
        return False  # the next `N.` option of a question whose options are numbered that way
    if number == current.number + 1:
        return True
    if number == current.number + 2 and question_x is not None and abs(line.bbox[0] - question_x) < 3:
        stats.gaps.append(current.number + 1)
        return True
    if number == 1 and current.number > 1:
        run = runs[-1]
        preamble_like = sum(1 for chunk in run if _has_options(chunk)) < 0.5 * len(run)
        return preamble_like or subject_changed
    return False


def _digit_options(chunk: Chunk) -> int:
    """How many `1.`, `2.` … options (at cell starts) the chunk holds so far (0 for other styles)."""
    pattern = OPTION_STYLES["digit_dot"][0]
    count = 0
    for entry in chunk.entries[1:]:
        if isinstance(entry, Line):
            for cell in entry.cells:
                if _marker_value(pattern, cell.text) == str(count + 1):
                    count += 1
    return count


def _has_options(chunk: Chunk) -> bool:
    lines = [entry for entry in chunk.entries if isinstance(entry, Line)]
    markers = "".join(marker for line in lines for marker, _, _ in line.markers)
    if "①" in markers and "②" in markers or markers.count(OPTION_PLACEHOLDER) >= 2:
        return True
    return _digit_options(chunk) >= 2 or any(
        pattern.match(cell.text) for line in lines[1:] for cell in line.cells for pattern, _ in OPTION_STYLES.values()
    )


# -- parsing one question ---------------------------------------------------------------------------
@dataclass
class _Builder:
    stem: list[tuple[str, bool]] = field(default_factory=list)  # (fragment, starts a line)
    options: list[list[tuple[str, bool]]] = field(default_factory=list)
    option_lines: list[Line] = field(default_factory=list)

    def add(self, text: str, new_line: bool) -> None:
        text = text.strip()
        if text:
            (self.options[-1] if self.options else self.stem).append((text, new_line))

    def open_option(self, line: Line) -> None:
        self.options.append([])
        self.option_lines.append(line)


def join_fragments(fragments: list[tuple[str, bool]]) -> str:
    out = ""
    previous = ""
    for text, new_line in fragments:
        if not out:
            out = text
        elif new_line and (PARAGRAPH_START.match(text) or BOGI_TITLE.match(previous) or previous.startswith("|")):
            out += "\n" + text
        else:
            out += " " + text
        previous = text
    return out


def _parse(chunk: Chunk, stats: SegmentStats) -> ExtractedQuestion:
    lines = [entry for entry in chunk.entries if isinstance(entry, Line)]
    figures = [entry for entry in chunk.entries if isinstance(entry, Figure)]
    style = "circled" if any(line.markers for line in lines) else _other_style(lines)
    builder = _Builder()
    kept_lines: list[Line] = []
    for index, line in enumerate(lines):
        text = QUESTION_START.sub("", line.text, count=1) if index == 0 else line.text
        if builder.options and _after_options(line, kept_lines[-1], style, len(builder.options)):
            stats.orphan_lines += len(lines) - index
            kept = {id(entry) for entry in kept_lines}
            figures = [f for f in figures if _figure_before(f, lines[index]) or id(f) in kept]
            break
        kept_lines.append(line)
        if line.table is not None:  # a ruled table: written once, as Markdown, where its first line was
            if not any(other.table is line.table for other in kept_lines[:-1]):
                builder.add(line.table.markdown, True)
            continue
        if style == "circled":
            _split_circled(text, line, builder)
        else:
            _split_cells(line, text if index == 0 else None, builder, style)
    options = [ExtractedOption(join_fragments(fragments), area=_option_area(builder.option_lines, index))
               for index, fragments in enumerate(builder.options)]
    question_figures = _attach_option_figures(figures, options, builder.option_lines)
    stem = join_fragments(builder.stem)
    passage_text = ""
    if chunk.passage is not None:
        passage_lines = [entry for entry in chunk.passage.entries if isinstance(entry, Line)]
        passage_text = join_fragments([(line.text, True) for line in passage_lines])
        stem = passage_text + ("\n" + stem if stem else "")
        question_figures = [e for e in chunk.passage.entries if isinstance(e, Figure)] + question_figures
    review = []
    signals: set[str] = set()
    if not stem:
        stem = "(no stem text found)"
        review.append("no stem text found")
    if any(line.pictures for line in kept_lines):
        review.append(GLYPH_PICTURE_REASON)
        signals.add("glyph_pictures")
    if any(figure.glyph for figure in figures):
        review.append(UNREAD_PICTURE_REASON)
        signals.add("glyph_pictures")
    page = lines[0].page
    boxes = [line.bbox for line in kept_lines if line.page == page] + [f.bbox for f in figures if f.page == page]
    boxes += [line.table.bbox for line in kept_lines if line.page == page and line.table is not None]
    passage = (chunk.passage.first, chunk.passage.last) if chunk.passage is not None else None
    short = not options and (chunk.short_label or any(ANSWER_BLANK.search(line.text) for line in kept_lines))
    return ExtractedQuestion(chunk.number, chunk.run, chunk.subject, chunk.part, page, union(boxes), stem,
                             options, question_figures, review, style, signals, passage, passage_text, short)


def _after_options(line: Line, previous: Line, style: str, opened: int) -> bool:
    """True when `line` no longer belongs to the last option (another column/page, or a gap)."""
    if style == "circled" and opened < len(CIRCLED_MARKERS) and (
            CIRCLED_MARKERS[opened] in line.text or OPTION_PLACEHOLDER in line.text):
        return False
    if style not in ("circled", "none"):
        pattern, values = OPTION_STYLES[style]
        if any(_marker_value(pattern, cell.text) == values[opened] for cell in line.cells if opened < len(values)):
            return False
    if line.page != previous.page or line.region != previous.region:
        return True
    return line.bbox[1] - previous.bbox[3] > 0.9 * max(previous.height, 1.0)


def _figure_before(figure: Figure, line: Line) -> bool:
    return (figure.page, figure.bbox[1]) < (line.page, line.bbox[1])


def _split_circled(text: str, line: Line, builder: _Builder) -> None:
    position, new_line = 0, True
    while len(builder.options) < len(CIRCLED_MARKERS):
        candidates = [at for at in (text.find(CIRCLED_MARKERS[len(builder.options)], position),
                                    text.find(OPTION_PLACEHOLDER, position)) if at >= 0]
        if not candidates:
            break
        found = min(candidates)
        builder.add(text[position:found], new_line)
        builder.open_option(line)
        position, new_line = found + 1, False
    builder.add(text[position:], new_line)


def _other_style(lines: list[Line]) -> str:
    for line in lines[1:]:
        for cell in line.cells:
            for name, (pattern, values) in OPTION_STYLES.items():
                if _marker_value(pattern, cell.text) == values[0]:
                    return name
    return "none"


def _marker_value(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.match(text)
    return match.group(1) if match else None


def _split_cells(line: Line, first_text: str | None, builder: _Builder, style: str) -> None:
    if first_text is not None:  # the question line itself: its number is already stripped
        builder.add(first_text, True)
        return
    new_line = True
    for cell in line.cells:
        if style != "none":
            pattern, values = OPTION_STYLES[style]
            opened = len(builder.options)
            if opened < len(values) and _marker_value(pattern, cell.text) == values[opened]:
                builder.open_option(line)
                builder.add(pattern.sub("", cell.text, count=1), new_line)
                new_line = False
                continue
        builder.add(cell.text, new_line)
        new_line = False


def _attach_option_figures(figures: list[Figure], options: list[ExtractedOption], option_lines: list[Line]) -> list[Figure]:
    """Figures right of an option marker on the marker's line become that option's image."""
    rest = []
    for figure in figures:
        target = None
        for index, line in enumerate(option_lines):
            if line.page != figure.page or vertical_overlap(line.bbox, figure.bbox) < 0.5 * line.height:
                continue
            marker = next((m for m in line.markers if m[0] == CIRCLED_MARKERS[index]), None) or _nth_placeholder(
                line, options_on_line=[i for i, other in enumerate(option_lines) if other is line], index=index)
            if marker is None or marker[2] > figure.bbox[0] + 1:
                continue
            if target is None or marker[2] > target[1]:
                target = (index, marker[2])
        if target is not None and options[target[0]].figure is None:
            options[target[0]].figure = figure
        else:
            rest.append(figure)
    return rest


def _option_area(option_lines: list[Line], index: int) -> tuple[int, Box]:
    """Where option `index` sits: from its marker to the next marker on the line (or the line's end)."""
    line = option_lines[index]
    position = [i for i, other in enumerate(option_lines) if other is line].index(index)
    markers = sorted(line.markers, key=lambda marker: marker[1])
    offset = len(markers) - sum(1 for other in option_lines if other is line)
    start = markers[position + offset][2] if 0 <= position + offset < len(markers) else line.bbox[0]
    following = markers[position + offset + 1][1] if 0 <= position + offset + 1 < len(markers) else line.bbox[2]
    if position + offset == len(markers) - 1 and position + offset >= 1:  # the last option is as wide as the others
        following = max(following, start + markers[position + offset][1] - markers[position + offset - 1][1])
    pad = line.height
    return line.page, (start, line.bbox[1] - pad, max(following, start + pad), line.bbox[3] + pad)


def _nth_placeholder(line: Line, options_on_line: list[int], index: int) -> tuple[str, float, float] | None:
    placeholders = [m for m in line.markers if m[0] == OPTION_PLACEHOLDER]
    position = options_on_line.index(index) if index in options_on_line else -1
    offset = len(placeholders) - len(options_on_line)
    if position < 0 or not 0 <= position + offset < len(placeholders):
        return None
    return placeholders[position + offset]
