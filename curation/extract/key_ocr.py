"""Reading an answer-key table that exists only as a picture or as drawn outlines (no text layer).

The page is rendered; the table grid comes from long dark rows and columns; each cell's content
is either empty, a circled digit (a ring is found and erased, leaving the digit) or plain digits.
Columns whose cells are mostly circled are answer columns; the column left of each holds the
question numbers. A key with no circled answers pairs each column of consecutive numbers with
the column of single digits right of it. Each column's cells are stacked into one picture and read by Tesseract with
a digits-only whitelist, one run per column.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from curation.extract.ocr import OcrWord, render_gray, run_tesseract_pages, thicken
from curation.pymupdf_light import pymupdf

_ANGLES = np.linspace(0, 2 * np.pi, 48, endpoint=False)
SLOT = 90  # pixels per stacked cell


@dataclass
class Grid:
    rows: list[int]
    columns: list[int]


def _centres(indices: np.ndarray) -> list[int]:
    if indices.size == 0:
        return []
    groups = np.split(indices, np.nonzero(np.diff(indices) > 3)[0] + 1)
    return [int(group.mean()) for group in groups]


def find_grid(dark: np.ndarray) -> Grid | None:
    height, width = dark.shape
    rows = _centres(np.nonzero(dark.sum(axis=1) > 0.3 * width)[0])
    if len(rows) < 3:
        return None
    top, bottom = rows[0], rows[-1]
    columns = _centres(np.nonzero(dark[top:bottom].sum(axis=0) > 0.45 * (bottom - top))[0])
    if len(columns) < 3:
        return None
    return Grid(rows, columns)


def _cell(dark: np.ndarray, grid: Grid, row: int, column: int) -> np.ndarray:
    inset = 6
    return dark[grid.rows[row] + inset:grid.rows[row + 1] - inset, grid.columns[column] + inset:grid.columns[column + 1] - inset]


def ring_digit(cell: np.ndarray) -> np.ndarray | None:
    """The digit inside a circled digit (ring erased), or None when the content is not circled."""
    ys, xs = np.nonzero(cell)
    if ys.size < 20:
        return None
    y0, y1, x0, x1 = ys.min(), ys.max(), xs.min(), xs.max()
    h, w = y1 - y0 + 1, x1 - x0 + 1
    if not 0.75 < w / h < 1.33 or h < 12:
        return None
    cy, cx, radius = (y0 + y1) / 2, (x0 + x1) / 2, (h + w) / 4
    thick = thicken(cell, 1)
    samples = []
    for r in (radius - 2, radius - 1, radius):
        px = np.clip((cx + r * np.cos(_ANGLES)).astype(int), 0, cell.shape[1] - 1)
        py = np.clip((cy + r * np.sin(_ANGLES)).astype(int), 0, cell.shape[0] - 1)
        samples.append(thick[py, px].mean())
    if max(samples) < 0.85:
        return None
    yy, xx = np.mgrid[0:cell.shape[0], 0:cell.shape[1]]
    inside = (yy - cy) ** 2 + (xx - cx) ** 2 <= (0.82 * radius) ** 2
    return cell & inside


def _trim(content: np.ndarray) -> np.ndarray:
    """The content cut to its ink (an ink mask, or a gray crop whose ink is darker than 160)."""
    ys, xs = np.nonzero(content if content.dtype == bool else content < 160)
    if ys.size == 0:
        return content[:0, :0]
    return content[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


def _read_column(contents: list[np.ndarray | None]) -> list[str | None]:
    """Digits in each content (None where empty), one Tesseract read for the whole column."""
    return read_digit_columns([contents])[0]


def read_digit_columns(columns: list[list[np.ndarray | None]]) -> list[list[str | None]]:
    """Digits in each content of each column (None where empty). A column's contents are stacked
    into one picture, one slot each; every picture is read by one Tesseract (this process's, else
    one `tesseract` run for them all) with a digits-only whitelist."""
    filled = [index for index, contents in enumerate(columns) if any(c is not None for c in contents)]
    read = read_pictures([_column_canvas(columns[index]) for index in filled], psm=6, whitelist="0123456789",
                         languages="kor+eng")  # eng alone misreads this font's 5s
    pages: list[list[OcrWord]] = [[] for _ in columns]
    for index, words in zip(filled, read, strict=True):
        pages[index] = words
    found: list[list[str | None]] = []
    for contents, words in zip(columns, pages, strict=True):
        slots: list[str | None] = [None] * len(contents)
        for word in words:
            slot = (((word.y0 + word.y1) // 2) - 20) // SLOT
            if 0 <= slot < len(slots) and word.text.isdigit():
                slots[slot] = (slots[slot] or "") + word.text
        found.append(slots)
    return found


def _column_canvas(contents: list[np.ndarray | None]) -> np.ndarray:
    """One picture of a column's contents, one SLOT each: ink masks drawn black, gray crops as they are."""
    trimmed = [(_trim(c) if c is not None else None) for c in contents]
    width = max([t.shape[1] for t in trimmed if t is not None and t.size] + [10]) + 60
    canvas = np.full((SLOT * len(contents) + 40, width), 255, dtype=np.uint8)
    for index, content in enumerate(trimmed):
        if content is None or not content.size:
            continue
        h, w = content.shape
        if h > SLOT - 20:
            continue
        top = 20 + index * SLOT + (SLOT - h) // 2
        if content.dtype == bool:
            canvas[top:top + h, 30:30 + w][content] = 0
        else:
            canvas[top:top + h, 30:30 + w] = content
    return canvas


def read_pictures(images: list[np.ndarray], psm: int, whitelist: str = "", languages: str = "eng") -> list[list[OcrWord]]:
    """The words of each grayscale picture: this process's Tesseract when it loads, else one
    `tesseract` run for all of them."""
    from curation.extract.tesseract_lib import engine

    if not images:
        return []
    here = engine(languages)
    if here is not None:
        return here.read(images, psm, whitelist)
    extra = ("-c", f"tessedit_char_whitelist={whitelist}") if whitelist else ()
    return run_tesseract_pages(images, psm=psm, extra=extra, languages=languages)


def read_text_pictures(images: list[np.ndarray]) -> list[str]:
    """Korean (and Latin) text in each picture: headings, a form's name. A picture of one line of
    text is read as one line (Tesseract's block mode adds letters made of the margins to a short
    heading); others as a block."""
    single = [text_lines(image) == 1 for image in images]
    texts = [""] * len(images)
    for mode, one_line in ((7, True), (6, False)):
        chosen = [index for index, flag in enumerate(single) if flag == one_line]
        pages = read_pictures([framed_picture(images[index]) for index in chosen], psm=mode, languages="kor")
        for index, words in zip(chosen, pages, strict=True):
            by_line: dict[tuple[int, int, int], list[OcrWord]] = {}
            for word in words:
                by_line.setdefault(word.line_key, []).append(word)
            texts[index] = " ".join(" ".join(w.text for w in sorted(ws, key=lambda w: w.x0)) for ws in by_line.values())
    return texts


def text_lines(gray: np.ndarray) -> int:
    """How many lines of text a picture holds: bands of inked rows at least a third as tall as the tallest."""
    inked: list[bool] = np.any(gray < 160, axis=1).tolist()
    bands, start = [], None
    for row, ink in enumerate(inked + [False]):
        if ink and start is None:
            start = row
        elif not ink and start is not None:
            bands.append(row - start)
            start = None
    return sum(1 for band in bands if band >= max(bands, default=0) / 3)


def framed_picture(gray: np.ndarray, pad: int = 20) -> np.ndarray:
    out = np.full((gray.shape[0] + 2 * pad, gray.shape[1] + 2 * pad), 255, dtype=np.uint8)
    out[pad:pad + gray.shape[0], pad:pad + gray.shape[1]] = gray
    return out


def _consecutive(numbers: list[str | None]) -> list[str | None]:
    """Question numbers run down a key column one by one: when most rows agree on the start, the
    rows that do not (a misread `25` as `2`) take the number their position gives."""
    starts = Counter(int(value) - row for row, value in enumerate(numbers) if value)
    if not starts:
        return numbers
    start, votes = starts.most_common(1)[0]
    if votes < 0.6 * sum(1 for value in numbers if value):
        return numbers
    return [str(start + row) if value else None for row, value in enumerate(numbers)]


def read_key_table(page: pymupdf.Page) -> dict[int, int]:
    """{question number: answer} from a key table drawn without a text layer."""
    dark = render_gray(page) < 160
    grid = find_grid(dark)
    if grid is None:
        return {}
    n_rows, n_columns = len(grid.rows) - 1, len(grid.columns) - 1
    cells = [[_cell(dark, grid, r, c) for c in range(n_columns)] for r in range(n_rows)]
    digits = [[ring_digit(cells[r][c]) if cells[r][c].any() else None for c in range(n_columns)] for r in range(n_rows)]
    key: dict[int, int] = {}
    for column in range(1, n_columns):
        filled = [r for r in range(n_rows) if cells[r][column].any()]
        circled = [r for r in filled if digits[r][column] is not None]
        if len(filled) < 2 or len(circled) < 0.6 * len(filled):
            continue
        numbers = _consecutive(_read_column([cells[r][column - 1] if r in circled else None for r in range(n_rows)]))
        answers = _read_column([digits[r][column] for r in range(n_rows)])
        for number, answer in zip(numbers, answers, strict=True):
            if number and answer and len(answer) == 1 and answer != "0":
                key.setdefault(int(number), int(answer))
    return key or _digit_columns(cells)


def _digit_columns(cells: list[list[np.ndarray]]) -> dict[int, int]:
    """A key whose answers are plain digits: a column of consecutive question numbers, and right
    of it a column of one-digit answers (that is not itself a run of numbers)."""
    n_rows, n_columns = len(cells), len(cells[0])
    read = [_read_column([cells[r][c] if cells[r][c].any() else None for r in range(n_rows)]) for c in range(n_columns)]
    numbers = [_number_column(values) for values in read]
    key: dict[int, int] = {}
    for column in range(1, n_columns):
        question_numbers, answers = numbers[column - 1], read[column]
        if question_numbers is None or numbers[column] is not None:
            continue
        single = [a for a in answers if a]
        if len(single) < 2 or sum(1 for a in single if len(a) == 1 and a != "0") < 0.6 * len(single):
            continue
        for number, answer in zip(question_numbers, answers, strict=True):
            if number and int(number) >= 1 and answer and len(answer) == 1 and answer != "0":
                key.setdefault(int(number), int(answer))
    return key


def _number_column(values: list[str | None]) -> list[str | None] | None:
    """The column's question numbers (misreads corrected by position), or None when its values
    do not run down one by one (it is not a number column)."""
    starts = Counter(int(value) - row for row, value in enumerate(values) if value)
    filled = sum(1 for value in values if value)
    if filled < 3 or not starts or starts.most_common(1)[0][1] < 0.6 * filled:
        return None
    return _consecutive(values)
