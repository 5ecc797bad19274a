"""External score tables (a leaderboard, another benchmark) as metric columns, model aliases,
and the merge with this workspace's metrics.

A table is CSV, or JSON holding a list of row objects (top level, or under `rows` like the
K-MetBench leaderboard). One column names the model; every other column whose values are all
numbers (empty/null = missing) becomes a metric `LABEL:COLUMN`. Models are matched by exact
name after the alias file (YAML/JSON mapping `alias: canonical name`) is applied; models found
in one source only are listed, never dropped in silence.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.core.errors import BenchsmithError
from evaluation.metrics_table import MetricTable


class TableError(BenchsmithError):
    """An external table or alias file that cannot be used as given."""


@dataclass(frozen=True)
class TableSource:
    path: Path
    model_column: str
    label: str

    @classmethod
    def parse(cls, spec: str, model_column: str) -> TableSource:
        """`FILE` or `LABEL=FILE` (the label prefixes the table's metric names; default: the file stem)."""
        label, sep, rest = spec.partition("=")
        if sep and label.isidentifier() and not Path(spec).exists():
            return cls(Path(rest), model_column, label)
        return cls(Path(spec), model_column, Path(spec).stem)


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise TableError(f"{path}: no such table file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise TableError(f"{path}: cannot read: {error}") from None
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise TableError(f"{path}: not JSON ({error.msg}, line {error.lineno})") from None
        rows = data.get("rows") if isinstance(data, dict) else data
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise TableError(f"{path}: expected a list of row objects (top level or under \"rows\")")
        return rows
    return list(csv.DictReader(text.splitlines()))


def _number(value: Any) -> float | None | str:
    """A float, None for missing, or the string "text" for a non-numeric value."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "null", "nan", "none", "-", "—")):
        return None
    if isinstance(value, bool):
        return "text"
    if isinstance(value, int | float):
        return None if math.isnan(float(value)) else float(value)
    if isinstance(value, str):
        try:
            number = float(value.strip().rstrip("%"))
        except ValueError:
            return "text"
        return None if math.isnan(number) else number
    return "text"


def load_table(source: TableSource, aliases: dict[str, str] | None = None) -> MetricTable:
    rows = _rows(source.path)
    if not rows:
        raise TableError(f"{source.path}: the table has no rows")
    columns = list(dict.fromkeys(key for row in rows for key in row))
    if source.model_column not in columns:
        raise TableError(f"{source.path}: no model column {source.model_column!r} (columns: {', '.join(columns[:20])})")
    table = MetricTable()
    seen: dict[str, int] = {}
    parsed: dict[str, dict[str, float | None | str]] = {}
    for number, row in enumerate(rows, start=1):
        name = str(row.get(source.model_column) or "").strip()
        if not name:
            table.notes.append(f"{source.path.name}: row {number} has no {source.model_column}; left out")
            continue
        name = (aliases or {}).get(name, name)
        if name in seen:
            raise TableError(f"{source.path}: model {name!r} appears in rows {seen[name]} and {number}")
        seen[name] = number
        parsed[name] = {column: _number(row.get(column)) for column in columns if column != source.model_column}
    table.listed = set(parsed)
    for column in columns:
        if column == source.model_column:
            continue
        values = [row[column] for row in parsed.values()]
        if any(value == "text" for value in values) or all(value is None for value in values):
            continue  # names, flags, nested objects: not a metric
        metric = f"{source.label}:{column}"
        table.columns[metric] = {model: row[column] for model, row in parsed.items()  # type: ignore[misc]
                                 if isinstance(row[column], float)}
        table.sources[metric] = str(source.path)
    return table


def load_aliases(path: Path | None) -> dict[str, str]:
    """alias → canonical name, from a YAML or JSON mapping."""
    if path is None:
        return {}
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise TableError(f"{path}: cannot read the alias file: {str(error).splitlines()[0]}") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise TableError(f"{path}: the alias file must map names to names (alias: canonical name)")
    return {k.strip(): v.strip() for k, v in data.items()}


@dataclass
class Merged:
    table: MetricTable
    unmatched: dict[str, list[str]] = field(default_factory=dict)  # source → models found in no other source


def rename_models(table: MetricTable, aliases: dict[str, str]) -> MetricTable:
    if aliases:
        table.columns = {metric: {aliases.get(m, m): v for m, v in values.items()}
                         for metric, values in table.columns.items()}
        table.listed = {aliases.get(m, m) for m in table.listed}
    return table


def merge_tables(named: dict[str, MetricTable]) -> Merged:
    """One table from several sources; a metric name used by two sources is an error."""
    merged = MetricTable()
    for table in named.values():
        clash = set(merged.columns) & set(table.columns)
        if clash:
            raise TableError(f"metric {sorted(clash)[0]!r} comes from two sources: give a table a label (LABEL=FILE)")
        merged.columns.update(table.columns)
        merged.items.update(table.items)
        merged.sources.update(table.sources)
        merged.listed |= table.listed
        merged.notes += table.notes
    result = Merged(merged)
    if len(named) > 1:
        models = {name: set(table.models) for name, table in named.items()}
        for name, own in models.items():
            others = set().union(*(m for other, m in models.items() if other != name))
            if own - others:
                result.unmatched[name] = sorted(own - others)
    return result
