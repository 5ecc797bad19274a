"""Score VLMEvalKit prediction files of this benchsmith release with benchsmith's own checkers
(copied in at build time; do not edit).

    python RELEASE/harness/vlmevalkit/benchsmith_vlmevalkit.py PREDICTIONS.xlsx [...] --output scores.json

A prediction file is what VLMEvalKit's inference writes for one of this folder's tables (its
rows with a `prediction` column; .xlsx, .tsv, .csv or .json). Each row is found in the release
by its `id` and its prediction scored by the checker of the row's answer format, with the row's
typed key (`../benchsmith_release.py`): the MCQ tables' rows (a multi-answer row included, which
VLMEvalKit's one-letter MCQ scorer counts wrong) and the open-ended table's, which VLMEvalKit has
no scorer for. Printed per file: n, accuracy and the count of each outcome; `--output` keeps
every row's outcome and the answer read.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

# harness/ holds the shared modules; abspath, not resolve(): in the Hub cache this file is a symlink into blobs/
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import benchsmith_release as release  # noqa: E402


def release_rows() -> dict[str, dict[str, Any]]:
    """Row id → row, over every config (a row's key and options are the same in every config)."""
    found: dict[str, dict[str, Any]] = {}
    for config in release.manifest()["configs"]:
        for row in release.read_rows(config):
            found.setdefault(row["id"], row)
    return found


def read_predictions(path: Path) -> list[dict[str, Any]]:
    import pandas as pd

    suffix = path.suffix.lower()
    if suffix == ".xlsx":
        frame = pd.read_excel(path)
    elif suffix == ".json":
        frame = pd.read_json(path)
    elif suffix == ".jsonl":
        frame = pd.read_json(path, lines=True)
    else:
        frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",")
    return [{str(name): value for name, value in record.items()} for record in frame.to_dict("records")]


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


def score_file(path: Path, rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    scored: dict[str, dict[str, Any]] = {}
    for prediction in read_predictions(path):
        row_id = _text(prediction.get("id"))
        if row_id is None or row_id not in rows:
            raise SystemExit(f"{path}: a row without a release id ({row_id!r}); score the tables of this release")
        result = release.score(_text(prediction.get("prediction")), rows[row_id])
        scored[row_id] = {"outcome": result["outcome"], "correct": result["correct"], "answer": result["answer"],
                          "checker": result["checker"], "explanation": result["explanation"]}
    counts = {outcome: sum(item["outcome"] == outcome for item in scored.values()) for outcome in release.OUTCOMES}
    n = len(scored)
    return {"n": n, "accuracy": counts["correct"] / n if n else 0.0, "outcomes": counts, "items": scored}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Score VLMEvalKit predictions of this benchsmith release.")
    parser.add_argument("predictions", nargs="+", type=Path, help="VLMEvalKit's prediction files (.xlsx, .tsv …)")
    parser.add_argument("--output", type=Path, default=None, help="JSON file for {file: n, accuracy, outcomes, items}")
    args = parser.parse_args(argv)
    rows = release_rows()
    results = {}
    for path in args.predictions:
        result = results[str(path)] = score_file(path, rows)
        others = ", ".join(f"{name} {count}" for name, count in result["outcomes"].items() if name != "correct")
        print(f"{path.name}: accuracy {result['accuracy']:.4f} over {result['n']} items ({others})")
    if args.output is not None:
        args.output.write_text(json.dumps(results, ensure_ascii=False, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
