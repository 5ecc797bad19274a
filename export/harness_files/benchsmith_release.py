"""What this release's harness tasks share (copied in by benchsmith at build time; do not edit).

`benchsmith_scoring/` beside this file is benchsmith's scorer, `scoring/portable`, copied whole:
the very files `benchsmith evaluate` scores with (standard library only; Math-Verify, when
installed, for expressions and LaTeX numbers). `score` below gives it a row's typed key (the
`key` column) and option texts, so every answer format is scored here exactly as benchsmith
scores it: option numbers, numbers with units, short texts, ㄱㄴㄷ sets, expressions, multi-part
answers; a reply cut off at the token limit or inside an unclosed thinking block is an error.

The rest reads the release from wherever it lies: its rows (the parquet files), the messages
benchsmith sends for each row (`prompts/CONFIG.jsonl`) and its decoding (`release.json`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(os.path.abspath(__file__)).parent  # not resolve(): in the Hub cache this file is a symlink into blobs/
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
RELEASE = HERE.parent

import benchsmith_scoring as checkers  # noqa: E402 - beside this file, on sys.path

OUTCOMES: tuple[str, ...] = checkers.OUTCOMES  # correct | wrong | unparseable | error | undecided
# besides `acc`, the share of rows with each outcome no checker counts as solved or unsolved
RATE_OUTCOMES = ("unparseable", "error", "undecided")


def row_key(row: dict[str, Any]) -> dict[str, Any] | None:
    """A row's typed key as the checkers take it (its `key` column, JSON text); None without one."""
    key = row.get("key")
    if isinstance(key, dict):
        return key
    if isinstance(key, str) and key:
        return json.loads(key)
    return None


def option_texts(row: dict[str, Any]) -> list[str]:
    return [option["text"] if isinstance(option, dict) else str(option) for option in row.get("options") or []]


def score(text: str | None, row: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    """One reply to one row: {"outcome", "correct", "value", "answer" (what was read), "method",
    "checker", "checker_version", "explanation"}. `finish_reason` as the OpenAI API gives it
    (`length`: cut off, an error) where the harness passes it on."""
    key = row_key(row)
    if key is None:  # as benchsmith's runner: a judge or a person decides
        return {"outcome": "undecided", "correct": False, "value": 0.0, "answer": None, "method": None,
                "checker": "", "checker_version": "", "explanation": "the row has no answer key"}
    verdict = checkers.score_response(key, text, options=option_texts(row), finish_reason=finish_reason)
    return {"outcome": verdict.outcome, "correct": verdict.outcome == "correct", "value": verdict.value,
            "answer": verdict.extracted, "method": verdict.details.get("method"), "checker": verdict.checker,
            "checker_version": verdict.checker_version, "explanation": verdict.explanation}


def outcome_metrics(result: dict[str, Any]) -> dict[str, float]:
    """`acc` (1 only when correct) and 0/1 for each outcome that is neither correct nor wrong."""
    return {"acc": float(result["correct"]), **{name: float(result["outcome"] == name) for name in RATE_OUTCOMES}}


def manifest() -> dict[str, Any]:
    return json.loads((RELEASE / "release.json").read_text(encoding="utf-8"))


def decoding() -> dict[str, Any]:
    """What this release is meant to be run with: roles, temperature, max_tokens, seed, stop, images."""
    return manifest()["decoding"]


def data_files(config: str) -> list[str]:
    configs = manifest()["configs"]
    if config not in configs:
        raise ValueError(f"no config {config!r} in this release (configs: {', '.join(configs)})")
    return [str(RELEASE / name) for name in configs[config]["files"]]


def prompts(config: str) -> dict[str, dict[str, Any]]:
    """Row id → {"system": text, "content": [{"text": ...} | {"image": ["question"|"option", i]}]}."""
    path = HERE / "prompts" / f"{config}.jsonl"
    records = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return {record["id"]: record for record in records}


def user_text(record: dict[str, Any]) -> str:
    return "\n".join(part["text"] for part in record["content"] if "text" in part)


def images(row: dict[str, Any], record: dict[str, Any]) -> list[Any]:
    """The row's images in the order benchsmith sends them (whatever form the loader gave them)."""
    found = []
    for part in record["content"]:
        if "image" in part:
            kind, index = part["image"]
            found.append(row["question_images"][index] if kind == "question" else row["options"][index]["image"])
    return found


def target(row: dict[str, Any]) -> str:
    """The key as a harness shows it beside a reply: a choice row's option numbers, else `answer_text`."""
    if row.get("answer_format") in (None, "choice") and row.get("answers"):
        return ",".join(str(answer) for answer in row["answers"])
    return row.get("answer_text") or ""


def read_rows(config: str) -> list[dict[str, Any]]:
    """The config's rows as plain dicts (image bytes undecoded), read with pyarrow."""
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = []
    for path in data_files(config):
        rows += pq.read_table(path).to_pylist()
    return rows
