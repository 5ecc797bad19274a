"""The answers item analysis reads: models × items arrays built from a workspace's solve matrix
or from a wide 0/1 file (`--matrix`: first column the model id, one column per item).

A cell's value is the share of the model's determined attempts that were correct (0 or 1 for a
single attempt), NaN where it has none: a choice item and an open one (numeric, text, set …)
alike, by their Score's outcome. `unparseable` and `error` outcomes are missing, not wrong,
unless `unparseable_as_wrong`; `undecided` ones (waiting for a judge or a person) are always
missing. Only cells answered on the item's current content count; the rest are counted in
`stale_skipped`.

What each model answered is kept for the suspects' consensus: the option chosen for a choice
item (`choice`), and for an open item its answer normalised by the key's format
(`scoring.answers`), as a code per item (`votes`: 1 = the key's answer, 2… the others, most
given first; `answer_labels` names them). A correct answer is the key's whatever its wording;
an undecided one votes with what it said.
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curation.core.errors import BenchsmithError
from filtering.matrix import SolveMatrix
from scoring.answers import normalised_answer, normalised_key
from scoring.keys import key_text


@dataclass
class ItemFacts:
    """What the store says about an item: its key, how many options it has, dedup's conflicts."""

    content_hash: str | None
    key: int | None  # the one correct option (None: none or several)
    options: int
    conflicts: list[str] = field(default_factory=list)
    open_key: dict | None = None  # an open item's key (numeric, text, set …) as a dict: its answers are compared


@dataclass
class Responses:
    items: list[str]
    models: list[str]
    correct: np.ndarray  # models × items, share correct, NaN = no determined answer
    choice: np.ndarray | None = None  # models × items, the option chosen (0 = none); None when unknown
    keys: np.ndarray | None = None  # per item, the key option (0 = unknown or several)
    options: np.ndarray | None = None  # per item, the number of options (0 = unknown)
    hashes: dict[str, str] = field(default_factory=dict)
    unparseable: np.ndarray | None = None  # per item, cells with an unparseable or error outcome
    cells: np.ndarray | None = None  # per item, cells recorded (any outcome)
    conflicts: dict[str, list[str]] = field(default_factory=dict)  # item → dedup answer-conflict reasons
    stale_skipped: int = 0
    source: str = "workspace"
    votes: np.ndarray | None = None  # models × items: an open item's answer code (1 = the key's; 0 = none)
    answer_labels: dict[str, list[str]] = field(default_factory=dict)  # open item → answer per code (code − 1)
    formats: dict[str, str] = field(default_factory=dict)  # open item → its key's format

    @property
    def answered(self) -> np.ndarray:
        return ~np.isnan(self.correct)

    def fingerprint(self) -> str:
        """A hash of the answers as read: items, their content hashes, models, cells and choices.
        Equal answers give an equal fingerprint; a new run, a new record or an edited item change it."""
        digest = hashlib.sha256(json.dumps([self.items, self.models, [self.hashes.get(i) for i in self.items]],
                                           ensure_ascii=False).encode())
        digest.update(np.nan_to_num(self.correct, nan=-1.0).astype("<f8").tobytes())
        if self.choice is not None:
            digest.update(self.choice.astype("<i2").tobytes())
        if self.votes is not None:
            digest.update(self.votes.astype("<i2").tobytes())
            digest.update(json.dumps(self.answer_labels, ensure_ascii=False, sort_keys=True).encode())
        return digest.hexdigest()[:32]

    def models_without_answers(self) -> list[str]:
        return [m for m, n in zip(self.models, self.answered.sum(axis=1), strict=True) if n == 0]

    def take(self, models: np.ndarray | None = None, items: np.ndarray | None = None) -> Responses:
        """These models (row indices) and items (column indices) only."""
        rows = np.arange(len(self.models)) if models is None else models
        cols = np.arange(len(self.items)) if items is None else items

        def per_item(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else values[cols]

        item_ids = [self.items[j] for j in cols]
        return Responses(item_ids, [self.models[i] for i in rows], self.correct[np.ix_(rows, cols)],
                         None if self.choice is None else self.choice[np.ix_(rows, cols)],
                         per_item(self.keys), per_item(self.options),
                         {i: self.hashes[i] for i in item_ids if i in self.hashes}, per_item(self.unparseable),
                         per_item(self.cells), {i: self.conflicts[i] for i in item_ids if i in self.conflicts},
                         self.stale_skipped, self.source,
                         None if self.votes is None else self.votes[np.ix_(rows, cols)],
                         {i: self.answer_labels[i] for i in item_ids if i in self.answer_labels},
                         {i: self.formats[i] for i in item_ids if i in self.formats})


def from_solve_matrix(matrix: SolveMatrix, facts: dict[str, ItemFacts], unparseable_as_wrong: bool = False) -> Responses:
    """Arrays from the matrix's cells on items the store has now (`facts`); cells answered on other
    content are stale and counted. Computed in Arrow and numpy: no Python object per cell."""
    table = matrix.table
    known = pa.array(list(facts), pa.string())
    known_hashes = pa.array([fact.content_hash for fact in facts.values()], pa.string())
    current = known_hashes.take(pc.index_in(table["item_id"], value_set=known))
    fresh_cells = pc.fill_null(pc.equal(table["content_hash"], current), False)
    stale = matrix.stale_skipped + (table.num_rows - pc.sum(fresh_cells).as_py() if table.num_rows else 0)
    fresh = fresh_cells.to_numpy(zero_copy_only=False)  # cells are masked in numpy: the table is not copied
    item_ids = sorted(pc.unique(table["item_id"].filter(fresh_cells)).to_pylist())
    models = sorted(set(pc.unique(table["model"]).to_pylist()) | set(matrix.models))
    rows = _positions(table["model"], models)[fresh]
    cols = _positions(table["item_id"], item_ids)[fresh]
    right, wrong, unparseable, error = (pc.fill_null(pc.equal(table["outcome"], name), False).to_numpy(
        zero_copy_only=False)[fresh] for name in ("correct", "wrong", "unparseable", "error"))
    problem = unparseable | error
    determined = right | wrong | (problem & unparseable_as_wrong)
    shape = (len(models), len(item_ids))
    flat = rows * len(item_ids) + cols
    hits = np.bincount(flat[right], minlength=shape[0] * shape[1]).reshape(shape)
    counted = np.bincount(flat[determined], minlength=shape[0] * shape[1]).reshape(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        correct = np.where(counted > 0, hits / np.maximum(counted, 1), np.nan)
    choice = np.zeros(shape, dtype=np.int16)
    chosen = np.asarray(table["choice"].fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int16)[fresh]
    attempt = np.asarray(table["attempt"].to_numpy(zero_copy_only=False))[fresh]
    order = np.argsort(-attempt, kind="stable")  # the first attempt's choice is written last and wins
    keep = order[chosen[order] > 0]
    choice[rows[keep], cols[keep]] = chosen[keep]
    n_items = len(item_ids)
    responses = Responses(
        item_ids, models, correct, choice,
        np.array([facts[i].key or 0 for i in item_ids], dtype=np.int16),
        np.array([facts[i].options for i in item_ids], dtype=np.int16),
        {i: h for i in item_ids if (h := facts[i].content_hash)},
        np.bincount(cols[problem], minlength=n_items), np.bincount(cols, minlength=n_items),
        {i: facts[i].conflicts for i in item_ids if facts[i].conflicts}, int(stale))
    open_items = [i for i in item_ids if facts[i].open_key is not None]
    if open_items:
        _add_votes(responses, table.filter(fresh_cells), {i: facts[i].open_key for i in open_items})  # type: ignore[misc]
    return responses


def _add_votes(responses: Responses, cells: pa.Table, keys: dict[str, dict]) -> None:
    """The open items' answers as codes per item (module docstring): one Python step per cell of
    an open item only (a pool of choice items costs nothing here)."""
    chosen = cells.filter(pc.is_in(cells["item_id"], value_set=pa.array(list(keys), pa.string())))
    order = pc.sort_indices(chosen, [("attempt", "descending")])  # the first attempt's answer is read last and wins
    chosen = chosen.take(order)
    said: dict[str, dict[str, str]] = {item_id: {} for item_id in keys}  # item → model → normalised answer
    shown: dict[tuple[str, str], str] = {}  # (item, normalised) → the answer as first given
    key_forms = {item_id: set(normalised_key(key)) for item_id, key in keys.items()}
    for item_id, model, outcome, answer in zip(*(chosen[name].to_pylist() for name in
                                                 ("item_id", "model", "outcome", "answer")), strict=True):
        if outcome not in ("correct", "wrong", "undecided"):
            continue
        extracted = _loaded(answer)
        form = normalised_answer(keys[item_id], extracted)
        if outcome == "correct" or (form is not None and form in key_forms[item_id]):
            form = ""  # the key's answer
        if form is None:
            continue
        said[item_id][model] = form
        if form:
            shown[(item_id, form)] = _as_text(extracted)
    votes = np.zeros(responses.correct.shape, dtype=np.int16)
    row = {model: r for r, model in enumerate(responses.models)}
    col = {item_id: c for c, item_id in enumerate(responses.items)}
    for item_id, key in keys.items():
        counts: dict[str, int] = {}
        for form in said[item_id].values():
            counts[form] = counts.get(form, 0) + 1
        others = sorted((form for form in counts if form), key=lambda f: (-counts[f], f))
        code = {"": 1, **{form: n for n, form in enumerate(others, start=2)}}
        responses.answer_labels[item_id] = [key_text(key), *(shown[(item_id, form)] for form in others)]
        responses.formats[item_id] = str(key.get("format"))
        for model, form in said[item_id].items():
            votes[row[model], col[item_id]] = code[form]
    responses.votes = votes


def _as_text(extracted: object) -> str:
    """An answer as a reviewer reads (and could type) it: a set's members joined by commas."""
    if isinstance(extracted, list):
        return ", ".join(map(str, extracted))
    return extracted if isinstance(extracted, str) else json.dumps(extracted, ensure_ascii=False)


def _loaded(answer: str | None) -> object:
    """A cell's answer column (JSON text) as the Score's extracted answer."""
    if answer is None:
        return None
    try:
        return json.loads(answer)
    except json.JSONDecodeError:
        return answer


def _positions(column: pa.ChunkedArray, values: list[str]) -> np.ndarray:
    return np.asarray(pc.index_in(column, value_set=pa.array(values, pa.string())).to_numpy(zero_copy_only=False),
                      dtype=np.int64)


VALUES = {"": np.nan, "0": 0.0, "1": 1.0, "0.0": 0.0, "1.0": 1.0, "false": 0.0, "true": 1.0, "False": 0.0,
          "True": 1.0}


def read_matrix_file(path: Path) -> Responses:
    """A wide 0/1 matrix (CSV or parquet): first column the model id, then one column per item,
    the header naming the items; an empty cell is missing. A malformed file is one clear error
    naming the row (the header is row 1, in a parquet file too) and the column (1-based)."""
    if not path.is_file():
        raise BenchsmithError(f"{path}: no such matrix file")
    if path.suffix.lower() in (".parquet", ".pq"):
        header, rows = _parquet_rows(path)
    else:
        header, rows = _csv_rows(path)
    if len(header) < 2:
        raise BenchsmithError(f"{path}: the header needs the model column and at least one item column")
    items = header[1:]
    seen: set[str] = set()
    for column, item in enumerate(items, start=2):
        if not item.strip():
            raise BenchsmithError(f"{path}: row 1, column {column}: an item column without a name")
        if item in seen:
            raise BenchsmithError(f"{path}: row 1, column {column}: item {item!r} appears twice in the header")
        seen.add(item)
    models, values = [], np.empty((len(rows), len(items)))
    for r, row in enumerate(rows):
        line = r + 2
        if len(row) != len(header):
            raise BenchsmithError(f"{path}: row {line}: {len(row)} columns, the header has {len(header)}")
        model = row[0].strip()
        if not model:
            raise BenchsmithError(f"{path}: row {line}, column 1: no model id")
        if model in models:
            raise BenchsmithError(f"{path}: row {line}, column 1: model {model!r} appears twice")
        models.append(model)
        cells = [cell.strip() for cell in row[1:]]
        try:
            values[r] = [VALUES[cell] for cell in cells]
        except KeyError:
            column = next(c for c, cell in enumerate(cells) if cell not in VALUES)
            raise BenchsmithError(f"{path}: row {line}, column {column + 2} ({items[column]}): {cells[column]!r} is "
                                  "not 0, 1 or empty") from None
    if not models:
        raise BenchsmithError(f"{path}: no model rows under the header")
    return Responses(list(items), models, values, source=str(path))


def _csv_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, [])
            return header, [row for row in reader if row]
    except (UnicodeDecodeError, csv.Error) as error:
        raise BenchsmithError(f"{path}: not a readable CSV file: {error}") from None


def _parquet_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        raise BenchsmithError(f"{path}: not a readable parquet file: {error}") from None
    columns = [["" if v is None else _cell_text(v) for v in table.column(i).to_pylist()]
               for i in range(table.num_columns)]
    return [str(name) for name in table.column_names], [list(row) for row in zip(*columns, strict=True)]


def _cell_text(value: object) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return "0" if value == 0 else "1" if value == 1 else repr(value)
    return str(value)
