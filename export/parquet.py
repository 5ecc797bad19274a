"""Writing parquet shards byte-for-byte reproducibly, readable by `datasets` 2.19 through 5.

Rows are sorted by id by the caller; shard and row-group sizes are fixed by the config; the
writer settings below are pinned and recorded in the card, so the same rows give the same
bytes with the same pyarrow version (which the manifest records too).

`datasets` 4 renamed `Sequence` to `List` in the features it stores in the parquet schema;
releases before 4 fail on `List` ("Feature type 'List' not found"). The metadata is written in
the older spelling, which every version reads into the same types: a list of one type is a
`Sequence`, a list of records a plain JSON list (`[{...}]`, list<struct> in Arrow).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

WRITER_SETTINGS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": True,
    "write_statistics": True,
    "data_page_version": "2.0",
    "version": "2.6",
    "store_schema": True,
}


def portable_feature(value: Any) -> Any:
    """One feature of `Features.to_dict()` in the spelling `datasets` 2.19 … 5 all read."""
    if isinstance(value, dict) and value.get("_type") == "List":
        inner = value["feature"]
        if isinstance(inner, dict) and "_type" not in inner:  # a record: list<struct>
            return [{key: portable_feature(sub) for key, sub in inner.items()}]
        return {"feature": portable_feature(inner), "_type": "Sequence"}
    if isinstance(value, dict) and "_type" not in value:
        return {key: portable_feature(sub) for key, sub in value.items()}
    return value


def portable_features_dict(features) -> dict[str, Any]:  # noqa: ANN001 - datasets.Features
    return {name: portable_feature(value) for name, value in features.to_dict().items()}


def portable_yaml_list(features) -> list[dict[str, Any]]:  # noqa: ANN001
    """The card's `dataset_info.features`: `sequence:` for a list of one type (what `datasets` < 4
    writes), `list:` for a list of records."""
    def rename(entry: dict[str, Any]) -> dict[str, Any]:
        entry = dict(entry)
        if "list" in entry and not isinstance(entry["list"], list):
            entry["sequence"] = entry.pop("list")
        if isinstance(entry.get("list"), list):
            entry["list"] = [rename(sub) for sub in entry["list"]]
        return entry

    return [rename(entry) for entry in features._to_yaml_list()]


def portable_schema(features):  # noqa: ANN001, ANN201 - pyarrow is imported lazily
    metadata = {"huggingface": json.dumps({"info": {"features": portable_features_dict(features)}})}
    return features.arrow_schema.with_metadata(metadata)


def arrow_rows(rows: list[dict[str, Any]], features):  # noqa: ANN001, ANN201 - pyarrow is imported lazily
    """Rows as one Arrow table in the portable schema."""
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=portable_schema(features))


def write_shards(table, folder: Path, *, shard_rows: int, row_group_rows: int,  # noqa: ANN001
                 split: str = "test") -> list[Path]:
    """`table` (from `arrow_rows`, or rows taken from one) as fixed-size parquet shards."""
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    shards = max(1, -(-table.num_rows // shard_rows))
    paths = []
    for index in range(shards):
        path = folder / f"{split}-{index:05d}-of-{shards:05d}.parquet"
        pq.write_table(table.slice(index * shard_rows, shard_rows), path, row_group_size=row_group_rows,
                       **WRITER_SETTINGS)
        paths.append(path)
    return paths


def arrow_nbytes(paths: list[Path]) -> int:
    """The in-memory size `datasets` records as a split's `num_bytes` (and the Hub's cards as
    `dataset_size`) when it prepares these files: its parquet loader reads one Arrow batch per
    row group and adds up their `nbytes` (not the size of one table of all rows, whose buffers
    round differently)."""
    import pyarrow.parquet as pq

    total = 0
    for path in paths:
        with pq.ParquetFile(path) as parquet:
            total += sum(parquet.read_row_group(index).nbytes for index in range(parquet.num_row_groups))
    return total
