"""The solve matrix: items × models × attempts, built from the runners' append-only logs.

A *model* here is one answering configuration (model identity, prompt version, variant);
each run of it (another seed, say) is one *attempt*. Every cell keeps the outcome
(correct | wrong | unparseable | error), the parsed answer, latency, token usage and the
content hash of the item it was answered on. Records whose item changed since are stale:
left out and counted (`stale_skipped`). The matrix is stored as `filtering/matrix.parquet`.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.workspace import Workspace
from evaluation.metrics import load_run
from evaluation.runlog import MANIFEST

MATRIX_FILE = "matrix.parquet"


@dataclass(frozen=True)
class Cell:
    item_id: str
    model: str
    attempt: int
    run_id: str
    outcome: str
    answer: str | None
    latency_s: float | None
    tokens: int | None
    content_hash: str | None = None


@dataclass
class SolveMatrix:
    cells: list[Cell] = field(default_factory=list)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> description with run ids
    not_sent: dict[str, dict[str, str]] = field(default_factory=dict)  # label -> item -> why
    stale_skipped: int = 0

    def content_hashes(self) -> dict[str, str]:
        """Item → the content hash its cells were answered on."""
        return {cell.item_id: cell.content_hash for cell in self.cells if cell.content_hash}

    def outcomes(self) -> dict[tuple[str, str], list[str]]:
        """(item, model) → the outcomes of every attempt."""
        table: dict[tuple[str, str], list[str]] = defaultdict(list)
        for cell in self.cells:
            table[(cell.item_id, cell.model)].append(cell.outcome)
        return table

    def item_ids(self) -> list[str]:
        return sorted({cell.item_id for cell in self.cells})

    def per_model(self) -> dict[str, dict[str, Any]]:
        """Accuracy over determined outcomes, with n and the unparseable/error counts apart."""
        counts: dict[str, Counter] = defaultdict(Counter)
        for cell in self.cells:
            counts[cell.model][cell.outcome] += 1
        summary = {}
        for model, c in sorted(counts.items()):
            answered = c["correct"] + c["wrong"]
            total = sum(c.values())
            summary[model] = {"n": total, "correct": c["correct"], "wrong": c["wrong"], "unparseable": c["unparseable"],
                              "error": c["error"], "accuracy": c["correct"] / total if total else None,
                              "accuracy_answered": c["correct"] / answered if answered else None,
                              "not_sent": len(self.not_sent.get(model, {})),
                              "attempts": len(self.models.get(model, {}).get("run_ids", []))}
        return summary

    def solve_counts(self) -> dict[str, dict[str, int]]:
        """Per item: how many models solved it (any attempt), missed it, or left it undetermined."""
        per_item: dict[str, dict[str, int]] = defaultdict(lambda: {"solved": 0, "missed": 0, "undetermined": 0})
        for (item_id, _), outcomes in self.outcomes().items():
            per_item[item_id][model_verdict(outcomes)] += 1
        return dict(per_item)

    def problem_items(self) -> dict[str, list[str]]:
        """Items with unparseable or error outcomes, and which models gave them."""
        found: dict[str, list[str]] = defaultdict(list)
        for cell in self.cells:
            if cell.outcome in ("unparseable", "error"):
                found[cell.item_id].append(f"{cell.model}#{cell.attempt}: {cell.outcome}")
        return dict(found)


def model_verdict(outcomes: list[str], attempts: int | None = None) -> str:
    """solved (any attempt correct) | missed (every attempt wrong) | undetermined.

    An unparseable or error outcome never counts as a miss, and a missing attempt never
    counts at all: such an item is undetermined unless some attempt solved it.
    """
    if "correct" in outcomes:
        return "solved"
    if outcomes and all(outcome == "wrong" for outcome in outcomes) and (attempts is None or len(outcomes) >= attempts):
        return "missed"
    return "undetermined"


def model_label(manifest: dict[str, Any]) -> str:
    """A readable, stable name for an answering configuration (seed excluded: seeds are attempts)."""
    config = manifest["config"]
    decoding = {k: v for k, v in config["decoding"].items() if k != "seed"}
    identity = json.dumps([config["model"], decoding, config["prompt_version"], config["variant"]], sort_keys=True)
    digest = hashlib.sha256(identity.encode()).hexdigest()[:6]
    variant = "" if config["variant"] == "implicit" else f"/{config['variant']}"
    return f"{manifest['model']['name']}[{config['prompt_version']}{variant}]#{digest}"


def _tokens(usage: Any) -> int | None:
    if not isinstance(usage, dict) or not usage:
        return None
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [value for key, value in usage.items() if isinstance(value, int) and "token" in key]
    return sum(parts) if parts else None


def build_matrix(run_dirs: list[Path], ws: Workspace) -> SolveMatrix:
    """Cells from every answer run's current records; stale records are counted, never used."""
    matrix = SolveMatrix()
    attempts: Counter = Counter()
    for run_dir in sorted(run_dirs, key=lambda p: p.name):
        manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("kind") != "answers":
            continue
        run = load_run(run_dir, ws)
        label = model_label(manifest)
        attempt = attempts[label]
        attempts[label] += 1
        description = matrix.models.setdefault(label, {
            "name": manifest["model"]["name"], "identity": manifest["config"]["model"],
            "prompt": manifest["prompt"], "variant": manifest["variant"],
            "decoding": manifest["config"]["decoding"], "run_ids": []})
        description["run_ids"].append(manifest["run_id"])
        matrix.not_sent.setdefault(label, {}).update(manifest.get("skipped", {}))
        matrix.stale_skipped += run.stale
        for item_id, record in run.records.items():
            answer = record.answer
            matrix.cells.append(Cell(item_id, label, attempt, manifest["run_id"], record.outcome,
                                     None if answer is None else json.dumps(answer), record.latency_s,
                                     _tokens(record.usage), record.content_hash))
    return matrix


def answer_runs(runs_dir: Path, run_ids: list[str] | None = None) -> list[Path]:
    if run_ids:
        return [runs_dir / run_id for run_id in run_ids]
    return sorted(p for p in runs_dir.glob("*") if (p / MANIFEST).is_file())


def save_matrix(matrix: SolveMatrix, folder: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    columns = {name: [getattr(cell, name) for cell in matrix.cells] for name in Cell.__dataclass_fields__}
    table = pa.table(columns, schema=pa.schema([
        ("item_id", pa.string()), ("model", pa.string()), ("attempt", pa.int32()), ("run_id", pa.string()),
        ("outcome", pa.string()), ("answer", pa.string()), ("latency_s", pa.float64()), ("tokens", pa.int64()),
        ("content_hash", pa.string())]))
    table = table.replace_schema_metadata({"models": json.dumps(matrix.models, ensure_ascii=False),
                                           "not_sent": json.dumps(matrix.not_sent, ensure_ascii=False),
                                           "stale_skipped": str(matrix.stale_skipped)})
    path = folder / MATRIX_FILE
    pq.write_table(table, path, compression="zstd")
    return path


def load_matrix(path: Path) -> SolveMatrix:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    metadata = table.schema.metadata or {}
    data = table.to_pydict()
    names = [name for name in Cell.__dataclass_fields__ if name in data]
    cells = [Cell(*values) for values in zip(*(data[name] for name in names), strict=True)]
    return SolveMatrix(cells, json.loads(metadata.get(b"models", b"{}")), json.loads(metadata.get(b"not_sent", b"{}")),
                       int(metadata.get(b"stale_skipped", b"0")))
