"""The ruled tables of an answer-key page, found on its rendered picture, and how their columns read.

Rules are long straight runs of ink (horizontal ones at least MIN_RULE_H long, vertical ones at
least MIN_RULE_V); a table is a set of rules that cross one another. Its atomic cells lie between
neighbouring rules; cells with no rule between them are one merged cell (a heading such as
`공통 과목` over several columns). Nothing here reads text: `key_pdf.py` reads the cells from the
text layer or by OCR and hands the values back to `read_groups`, which finds the
(question number, answer, points) column groups of the data rows.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

MIN_RULE_H = 40.0  # points: shorter horizontal ink runs are letters
MIN_RULE_V = 10.0
RULE_MERGE = 2.5  # points: parallel runs this close are one (thick or doubled) rule
CROSS_TOLERANCE = 2.0  # points: a rule ends this close to the one it meets
LABEL = re.compile(r"^(문항|번호|문항번호|문제|정답|답|배점|점수|번|no\.?|number|answer|key|points?)$", re.IGNORECASE)


@dataclass
class Rule:
    at: float  # pixels: y of a horizontal rule, x of a vertical one
    spans: list[tuple[int, int]]

    def covers(self, position: float, tolerance: float = 0.0) -> bool:
        return any(start - tolerance <= position <= end + tolerance for start, end in self.spans)

    @property
    def start(self) -> int:
        return self.spans[0][0]

    @property
    def end(self) -> int:
        return self.spans[-1][1]


def find_rules(dark: np.ndarray, min_length: int, merge: int) -> list[Rule]:
    """Horizontal rules of a boolean ink mask (pass `dark.T` for vertical ones): long runs of ink,
    those on rows at most `merge` apart and overlapping along the row joined into one rule."""
    padded = np.pad(dark, ((0, 0), (1, 1))).astype(np.int8)
    steps = np.diff(padded, axis=1)
    rows, starts = np.nonzero(steps == 1)
    _, ends = np.nonzero(steps == -1)  # row-major order: the n-th end closes the n-th start
    long = (ends - starts) >= min_length
    open_bands: list[list] = []  # [first row, last row, spans]
    closed: list[list] = []
    for row, start, end in zip(rows[long].tolist(), starts[long].tolist(), ends[long].tolist(), strict=True):
        still: list[list] = []
        for band in open_bands:
            (still if row - band[1] <= merge else closed).append(band)
        touched = [b for b in still if any(s - merge <= end and start <= e + merge for s, e in b[2])]
        open_bands = [b for b in still if not any(b is t for t in touched)]
        merged = [min([row] + [b[0] for b in touched]), row, [(start, end)] + [span for b in touched for span in b[2]]]
        open_bands.append(merged)  # a run touching several pieces joins them all
    closed += open_bands
    rules = sorted((Rule((first + last) / 2, _union(spans, merge)) for first, last, spans in closed), key=_at)
    joined: list[Rule] = []
    for rule in rules:  # pieces of one rule drawn a hair apart, end to end
        if joined and rule.at - joined[-1].at <= merge / 2 and _touch(joined[-1], rule, merge):
            longer = max(joined[-1], rule, key=_length)
            joined[-1] = Rule(longer.at, _union(joined[-1].spans + rule.spans, merge))
        else:
            joined.append(rule)
    return joined


def _touch(a: Rule, b: Rule, gap: int) -> bool:
    return any(s - gap <= f and t <= e + gap for s, e in a.spans for t, f in b.spans)


def _length(rule: Rule) -> int:
    return sum(end - start for start, end in rule.spans)


def _union(spans: list[tuple[int, int]], gap: int) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + gap:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


@dataclass
class Cell:
    """A merged cell: rows r0..r1 and columns c0..c1 of the atomic grid (inclusive), its box in pixels."""

    r0: int
    r1: int
    c0: int
    c1: int
    box: tuple[float, float, float, float]


@dataclass
class Table:
    rows: list[Rule]  # horizontal rules, top to bottom
    columns: list[Rule]  # vertical rules, left to right
    _cells: list[Cell] | None = field(default=None, repr=False)

    @property
    def box(self) -> tuple[float, float, float, float]:
        return (self.columns[0].at, self.rows[0].at, self.columns[-1].at, self.rows[-1].at)

    def atomic_box(self, row: int, column: int) -> tuple[float, float, float, float]:
        return (self.columns[column].at, self.rows[row].at, self.columns[column + 1].at, self.rows[row + 1].at)

    def cells(self) -> list[Cell]:
        """The merged cells: atomic cells joined where no rule separates them."""
        if self._cells is None:
            self._cells = _merge_cells(self)
        return self._cells


def find_tables(dark: np.ndarray, scale: float) -> list[Table]:
    """The ruled tables of a page picture (`scale` pixels per point), top to bottom."""
    horizontal = find_rules(dark, int(MIN_RULE_H * scale), int(RULE_MERGE * scale))
    vertical = find_rules(dark.T, int(MIN_RULE_V * scale), int(RULE_MERGE * scale))
    tolerance = CROSS_TOLERANCE * scale
    for _ in range(2):  # a rule meets two of the other direction; a letter's stroke by a rule meets one at most
        horizontal = [h for h in horizontal if sum(_cross(h, v, tolerance) for v in vertical) >= 2]
        vertical = [v for v in vertical if sum(_cross(h, v, tolerance) for h in horizontal) >= 2]
    parent = list(range(len(horizontal) + len(vertical)))

    def root(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for i, h in enumerate(horizontal):
        for j, v in enumerate(vertical):
            if _cross(h, v, tolerance):
                parent[root(i)] = root(len(horizontal) + j)
    groups: dict[int, tuple[list[Rule], list[Rule]]] = {}
    for i, h in enumerate(horizontal):
        groups.setdefault(root(i), ([], []))[0].append(h)
    for j, v in enumerate(vertical):
        groups.setdefault(root(len(horizontal) + j), ([], []))[1].append(v)
    tables = [Table(sorted(hs, key=_at), sorted(vs, key=_at)) for hs, vs in groups.values() if len(hs) >= 2 and len(vs) >= 3]
    return sorted(tables, key=lambda table: table.rows[0].at)


def _cross(horizontal: Rule, vertical: Rule, tolerance: float) -> bool:
    return horizontal.covers(vertical.at, tolerance) and vertical.covers(horizontal.at, tolerance)


def _at(rule: Rule) -> float:
    return rule.at


def _merge_cells(table: Table) -> list[Cell]:
    n_rows, n_columns = len(table.rows) - 1, len(table.columns) - 1
    parent = list(range(n_rows * n_columns))

    def root(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for r in range(n_rows):
        middle_y = (table.rows[r].at + table.rows[r + 1].at) / 2
        for c in range(n_columns):
            middle_x = (table.columns[c].at + table.columns[c + 1].at) / 2
            if c + 1 < n_columns and not table.columns[c + 1].covers(middle_y):
                parent[root(r * n_columns + c)] = root(r * n_columns + c + 1)
            if r + 1 < n_rows and not table.rows[r + 1].covers(middle_x):
                parent[root(r * n_columns + c)] = root((r + 1) * n_columns + c)
    members: dict[int, list[tuple[int, int]]] = {}
    for r in range(n_rows):
        for c in range(n_columns):
            members.setdefault(root(r * n_columns + c), []).append((r, c))
    cells = []
    for atoms in members.values():
        r0, r1 = min(r for r, _ in atoms), max(r for r, _ in atoms)
        c0, c1 = min(c for _, c in atoms), max(c for _, c in atoms)
        box = (table.columns[c0].at, table.rows[r0].at, table.columns[c1 + 1].at, table.rows[r1 + 1].at)
        cells.append(Cell(r0, r1, c0, c1, box))
    return sorted(cells, key=lambda cell: (cell.r0, cell.c0))


# -- reading the columns ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Value:
    """What a data cell holds: a circled digit (its digit, or digits for several) or plain text."""

    text: str
    circled: bool = False


@dataclass
class Group:
    """One (question number, answer[, points]) column group of a table's data rows."""

    number_column: int
    answer_column: int
    points_column: int | None
    numbers: list[int | None]  # per data row

    @property
    def last_column(self) -> int:
        return self.points_column if self.points_column is not None else self.answer_column


Grid = list[list[Value | None]]  # data rows × atomic columns


def read_groups(grid: Grid) -> list[Group]:
    """Column groups, left to right: a column of question numbers running down one by one, the
    answer column right of it, and right of that a points column of small numbers (when the next
    column starts another group, or there is none)."""
    if not grid:
        return []
    n_columns = len(grid[0])
    columns = [[row[c] for row in grid] for c in range(n_columns)]
    numbers = [_number_column(column) for column in columns]
    groups: list[Group] = []
    column = 0
    while column + 1 < n_columns:
        found = numbers[column]
        answers = columns[column + 1]
        rows = [row for row, number in enumerate(found or []) if number is not None]
        if found is None or sum(1 for row in rows if answers[row] is not None) < 0.6 * len(rows):
            column += 1
            continue
        points = column + 2
        has_points = (points < n_columns and _points_column(columns[points], rows)
                      and (points + 1 >= n_columns or numbers[points + 1] is not None or not _filled(columns[points + 1])))
        groups.append(Group(column, column + 1, points if has_points else None, found))
        column = points + 1 if has_points else points
    return groups


def _filled(column: list[Value | None]) -> bool:
    return any(value is not None for value in column)


def _integer(value: Value | None) -> int | None:
    if value is None or value.circled or not value.text.isdigit():
        return None
    return int(value.text)


def _number_column(column: list[Value | None]) -> list[int | None] | None:
    """The question numbers of a column (misreads corrected by position), or None when its values do
    not run down one by one. Rows with no value stay None."""
    values = [_integer(value) for value in column]
    filled = [(row, value) for row, value in enumerate(values) if value is not None]
    if len(filled) < 2 or any(value is not None and value.circled for value in column):
        return None
    starts = Counter(value - row for row, value in filled)
    start, votes = starts.most_common(1)[0]
    if votes < (len(filled) if len(filled) < 4 else 0.6 * len(filled)) or start + filled[0][0] < 1:
        return None
    return [start + row if value is not None else None for row, value in enumerate(column)]


def _points_column(column: list[Value | None], rows: list[int]) -> bool:
    """Small numbers (배점: 1–10, halves allowed) beside most of the group's rows."""
    values = [column[row] for row in rows]
    present = [value for value in values if value is not None]
    if len(present) < 0.8 * len(rows):
        return False
    return all(not value.circled and _small_number(value.text) for value in present)


def _small_number(text: str) -> bool:
    try:
        number = float(text)
    except ValueError:
        return False
    return 0 < number <= 10


def is_label(text: str) -> bool:
    """A column heading (문항 번호, 정답, 배점 …), not a section name."""
    return bool(LABEL.match(re.sub(r"\s+", "", text)))


def section_names(table: Table, header_texts: dict[int, str], groups: list[Group], header_rows: int) -> list[str | None]:
    """Each group's section: the lowest heading cell above the data rows that spans the group's
    columns and is not a column label (`화법과 작문` under `선택 과목`). `header_texts` maps the
    index of a cell in `table.cells()` to its text."""
    cells = table.cells()
    names: list[str | None] = []
    for group in groups:
        best: tuple[int, str] | None = None
        for index, text in header_texts.items():
            cell = cells[index]
            if cell.r1 >= header_rows or not text or is_label(text):
                continue
            if cell.c0 <= group.number_column and cell.c1 >= group.last_column and (best is None or cell.r1 > best[0]):
                best = (cell.r1, text)
        names.append(best[1] if best is not None else None)
    return names


def tidy_name(text: str) -> str:
    """A heading as read: spaces collapsed, and a letter-spaced run of syllables (`화 법 과 작문`)
    joined into one word (`화법과 작문`)."""
    words: list[tuple[str, bool]] = []  # (word, is a run of single syllables)
    for word in text.split():
        single = len(word) == 1 and _hangul(word)
        if single and words and words[-1][1]:
            words[-1] = (words[-1][0] + word, True)
        else:
            words.append((word, single))
    return " ".join(word for word, _ in words)


def _hangul(text: str) -> bool:
    return all("\uac00" <= ch <= "\ud7a3" for ch in text)
