"""The solve matrix: items × models × attempts, as columns built from the runners' append-only logs.

A *model* here is one answering configuration (model identity, prompt version, variant);
each run of it (another seed, say) is one *attempt*. Every cell keeps the outcome
(correct | wrong | unparseable | error | undecided: only correct and wrong ever count as solved
or missed), the parsed answer and the option chosen, latency,
token usage and the content hash of the item it was answered on. Each run's cells come from
its log's columnar index (`evaluation.cells`, updated from the lines added since it was last
read); cells whose item changed since are stale: dropped by comparing the hash columns with the
store's, and counted (`stale_skipped`). `benchsmith matrix build` writes the matrix as
`filtering/matrix.parquet` (`MATRIX_SCHEMA`).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curation.core.workspace import Workspace
from evaluation.item_facets import FacetReader
from evaluation.metrics import load_run
from evaluation.records import RunManifest
from evaluation.runlog import MANIFEST, find_run, read_manifest

MATRIX_FILE = "matrix.parquet"
MATRIX_SCHEMA = pa.schema([
    ("item_id", pa.string()), ("model", pa.string()), ("attempt", pa.int32()), ("run_id", pa.string()),
    ("outcome", pa.string()), ("answer", pa.string()), ("choice", pa.int16()), ("latency_s", pa.float64()),
    ("tokens", pa.int64()), ("content_hash", pa.string()),
])


@dataclass(frozen=True)
class Cell:
    """One row of the matrix, for readers that want objects (a few items, tests)."""

    item_id: str
    model: str
    attempt: int
    run_id: str
    outcome: str
    answer: str | None
    latency_s: float | None
    tokens: int | None
    content_hash: str | None = None
    choice: int | None = None


@dataclass
class SolveMatrix:
    table: pa.Table = field(default_factory=MATRIX_SCHEMA.empty_table)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> description with run ids
    not_sent: dict[str, dict[str, str]] = field(default_factory=dict)  # label -> item -> why
    stale_skipped: int = 0

    @classmethod
    def from_cells(cls, cells: list[Cell], models: dict[str, dict[str, Any]] | None = None,
                   not_sent: dict[str, dict[str, str]] | None = None) -> SolveMatrix:
        columns = {name: [getattr(cell, name) for cell in cells] for name in MATRIX_SCHEMA.names}
        return cls(pa.table(columns, schema=MATRIX_SCHEMA), models or {}, not_sent or {})

    @property
    def cells(self) -> list[Cell]:
        return [Cell(**row) for row in self.table.to_pylist()]

    def column(self, name: str) -> list[Any]:
        return self.table[name].to_pylist()

    def content_hashes(self) -> dict[str, str]:
        """Item → the content hash its cells were answered on."""
        return {i: h for i, h in zip(self.column("item_id"), self.column("content_hash"), strict=True) if h}

    def item_ids(self) -> list[str]:
        return sorted(pc.unique(self.table["item_id"]).to_pylist())

    def model_labels(self) -> list[str]:
        return sorted(pc.unique(self.table["model"]).to_pylist())

    def outcomes(self) -> dict[tuple[str, str], list[str]]:
        """(item, model) → the outcomes of every attempt, in attempt order."""
        table: dict[tuple[str, str], list[str]] = defaultdict(list)
        for item_id, model, outcome in zip(self.column("item_id"), self.column("model"), self.column("outcome"),
                                           strict=True):
            table[(item_id, model)].append(outcome)
        return table

    def per_model(self) -> dict[str, dict[str, Any]]:
        """Accuracy with n and the unparseable/error counts apart; undecided cells (waiting for a
        judge or a person) are counted apart and left out of n, as the report does."""
        counts: dict[str, Counter] = defaultdict(Counter)
        grouped = self.table.group_by(["model", "outcome"]).aggregate([([], "count_all")])
        for model, outcome, n in zip(*(grouped[name].to_pylist() for name in ("model", "outcome", "count_all")),
                                     strict=True):
            counts[model][outcome] = n
        summary = {}
        for model, c in sorted(counts.items()):
            answered = c["correct"] + c["wrong"]
            total = sum(c.values()) - c["undecided"]
            summary[model] = {"n": total, "correct": c["correct"], "wrong": c["wrong"], "unparseable": c["unparseable"],
                              "error": c["error"], "undecided": c["undecided"],
                              "accuracy": c["correct"] / total if total else None,
                              "accuracy_answered": c["correct"] / answered if answered else None,
                              "not_sent": len(self.not_sent.get(model, {})),
                              "attempts": len(self.models.get(model, {}).get("run_ids", []))}
        return summary

    def verdicts(self, models: list[str], item_ids: list[str], attempts: int | None = None) -> VerdictTable:
        """Per item and model: solved, missed, undetermined, or not asked (not sent)."""
        return VerdictTable.build(self, models, item_ids, attempts)

    def solve_counts(self) -> dict[str, dict[str, int]]:
        """Per item: how many models solved it (any attempt), missed it, or left it undetermined."""
        items, models = self.item_ids(), self.model_labels()
        table = self.verdicts(models, items)
        answered = table.cells > 0
        counts = {"solved": (table.solved & answered).sum(axis=1), "missed": (table.missed & answered).sum(axis=1),
                  "undetermined": (~table.solved & ~table.missed & answered).sum(axis=1)}
        return {item_id: {name: int(values[row]) for name, values in counts.items()}
                for row, item_id in enumerate(items)}

    def problem_items(self) -> dict[str, list[str]]:
        """Items with unparseable or error outcomes, and which models gave them."""
        found: dict[str, list[str]] = defaultdict(list)
        problems = self.table.filter(pc.is_in(self.table["outcome"], value_set=pa.array(["unparseable", "error"])))
        for item_id, model, attempt, outcome in zip(*(problems[name].to_pylist()
                                                      for name in ("item_id", "model", "attempt", "outcome")),
                                                    strict=True):
            found[item_id].append(f"{model}#{attempt}: {outcome}")
        return dict(found)


@dataclass
class VerdictTable:
    """items × models arrays: how many attempts each model has on each item and how they went."""

    items: list[str]
    models: list[str]
    cells: np.ndarray  # attempts recorded
    solved: np.ndarray  # some attempt correct
    missed: np.ndarray  # every attempt wrong, and all attempts there
    asked: np.ndarray  # the model could be sent the item

    @classmethod
    def build(cls, matrix: SolveMatrix, models: list[str], items: list[str], attempts: int | None) -> VerdictTable:
        shape = (len(items), len(models))
        cells, correct, wrong = (np.zeros(shape, dtype=np.int32) for _ in range(3))
        row_of = {item_id: row for row, item_id in enumerate(items)}
        col_of = {model: col for col, model in enumerate(models)}
        table = matrix.table
        rows = _positions(table["item_id"], items)
        cols = _positions(table["model"], models)
        keep = (rows >= 0) & (cols >= 0)
        flat = rows[keep] * len(models) + cols[keep]  # one bincount per count, over the flattened grid
        size = shape[0] * shape[1]
        for counts, outcome in ((cells, None), (correct, "correct"), (wrong, "wrong")):
            chosen = flat if outcome is None else flat[_is(table["outcome"], outcome)[keep]]
            counts += np.bincount(chosen, minlength=size).reshape(shape).astype(np.int32)
        asked = np.ones(shape, dtype=bool)
        for model, col in col_of.items():
            for item_id in matrix.not_sent.get(model, {}):
                if item_id in row_of:
                    asked[row_of[item_id], col] = False
        missed = (cells > 0) & (wrong == cells) & (cells >= (attempts or 0))
        return cls(items, models, cells, correct > 0, missed, asked)


def _positions(column: pa.ChunkedArray, values: list[str]) -> np.ndarray:
    """Each cell's position in `values` (-1 where it is not there), computed in Arrow."""
    found = pc.index_in(column, value_set=pa.array(values, pa.string()))
    return pc.fill_null(found, -1).to_numpy().astype(np.int64)


def _is(column: pa.ChunkedArray, value: str) -> np.ndarray:
    return pc.fill_null(pc.equal(column, value), False).to_numpy()


def model_verdict(outcomes: list[str], attempts: int | None = None) -> str:
    """solved (any attempt correct) | missed (every attempt wrong) | undetermined.

    An unparseable, error or undecided outcome never counts as a miss, and a missing attempt never
    counts at all: such an item is undetermined unless some attempt solved it.
    """
    if "correct" in outcomes:
        return "solved"
    if outcomes and all(outcome == "wrong" for outcome in outcomes) and (attempts is None or len(outcomes) >= attempts):
        return "missed"
    return "undetermined"


def model_label(manifest: RunManifest) -> str:
    """A readable, stable name for an answering configuration (seed excluded: seeds are attempts)."""
    config = manifest.config
    decoding = {k: v for k, v in config.decoding.items() if k != "seed"}
    identity = json.dumps([config.model, decoding, config.prompt_version, config.variant], sort_keys=True)
    digest = hashlib.sha256(identity.encode()).hexdigest()[:6]
    variant = "" if config.variant == "implicit" else f"/{config.variant}"
    return f"{manifest.model.name}[{config.prompt_version}{variant}]#{digest}"


def build_matrix(run_dirs: list[Path], ws: Workspace, reader: FacetReader | None = None) -> SolveMatrix:
    """Cells from every answer run's current records; stale records are counted, never used."""
    reader = reader or FacetReader()
    matrix = SolveMatrix()
    attempts: Counter = Counter()
    tables = []
    for run_dir in sorted(run_dirs, key=lambda p: p.name):
        manifest = read_manifest(run_dir)
        if not isinstance(manifest, RunManifest):
            continue
        run = load_run(run_dir, ws, reader, manifest)
        label = model_label(manifest)
        attempt = attempts[label]
        attempts[label] += 1
        description = matrix.models.setdefault(label, {
            "name": manifest.model.name, "identity": manifest.config.model,
            "prompt": manifest.prompt.model_dump(), "variant": manifest.variant,
            "decoding": manifest.config.decoding, "run_ids": []})
        description["run_ids"].append(manifest.run_id)
        matrix.not_sent.setdefault(label, {}).update(manifest.skipped)
        matrix.stale_skipped += run.stale
        rows = run.cells.num_rows
        tables.append(run.cells.append_column("model", pa.repeat(pa.scalar(label, pa.string()), rows))
                      .append_column("attempt", pa.repeat(pa.scalar(attempt, pa.int32()), rows))
                      .append_column("run_id", pa.repeat(pa.scalar(manifest.run_id, pa.string()), rows))
                      .select(MATRIX_SCHEMA.names).cast(MATRIX_SCHEMA))
    if tables:
        matrix.table = pa.concat_tables(tables)
    return matrix


def answer_runs(runs_dir: Path, run_ids: list[str] | None = None) -> list[Path]:
    if run_ids:
        return [find_run(runs_dir, run_id) for run_id in run_ids]  # an unknown id is one clear error
    return sorted(p for p in runs_dir.glob("*") if (p / MANIFEST).is_file())


def save_matrix(matrix: SolveMatrix, folder: Path) -> Path:
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    table = matrix.table.replace_schema_metadata({"models": json.dumps(matrix.models, ensure_ascii=False),
                                                  "not_sent": json.dumps(matrix.not_sent, ensure_ascii=False),
                                                  "stale_skipped": str(matrix.stale_skipped)})
    path = folder / MATRIX_FILE
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(path)
    return path


def load_matrix(path: Path) -> SolveMatrix:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    metadata = table.schema.metadata or {}
    return SolveMatrix(table.replace_schema_metadata(None).cast(MATRIX_SCHEMA),
                       json.loads(metadata.get(b"models", b"{}")), json.loads(metadata.get(b"not_sent", b"{}")),
                       int(metadata.get(b"stale_skipped", b"0")))
