"""The item analysis as files: JSON (the record), CSV per item and per model, and a Markdown summary."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from evaluation.filter_records import SUSPECTS_FILE, Suspect, SuspectsResult
from evaluation.runlog import now_iso
from filtering.irt.analysis import Analysis
from filtering.irt.records import ItemAnalysis, ItemStats

ITEM_COLUMNS = ["item_id", "content_hash", "n", "share_correct", "item_rest", "difficulty", "difficulty_low",
                "difficulty_high", "discrimination", "discrimination_low", "discrimination_high", "key",
                "top_distractor", "top_distractor_share", "unparseable"]


def write_item_analysis(record: ItemAnalysis, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / "item_analysis.json", folder / "items.csv", folder / "models.csv", folder / "item_analysis.md"]
    tmp = paths[0].with_suffix(".tmp")
    tmp.write_text(record.model_dump_json(indent=1), encoding="utf-8")
    tmp.replace(paths[0])
    with paths[1].open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*ITEM_COLUMNS, "options", "options_strong"])
        for item in record.items:
            writer.writerow([_cell(getattr(item, c)) for c in ITEM_COLUMNS]
                            + [_shares(item.options), _shares(item.options_strong)])
    with paths[2].open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model", "n", "share_correct", "ability", "ability_se"])
        for model in record.models:
            writer.writerow([model.model, model.n, _cell(model.share_correct), _cell(model.ability),
                             _cell(model.ability_se)])
    paths[3].write_text(markdown(record), encoding="utf-8")
    return paths


def write_suspects(rows: list[Suspect], analysis: Analysis, folder: Path) -> dict[str, Any]:
    """`suspects.json` (the `SuspectsResult` the annotator's Suspects queue reads); returns what it wrote."""
    folder.mkdir(parents=True, exist_ok=True)
    responses = analysis.responses
    result = SuspectsResult(suspects=rows, items=len(responses.items), models=len(responses.models),
                            stale_skipped=responses.stale_skipped, notes=analysis.notes,
                            matrix_fingerprint=responses.fingerprint(), created_at=now_iso())
    data = result.model_dump(mode="json")
    (folder / SUSPECTS_FILE).write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return data


def _cell(value: object) -> str:
    return "" if value is None else str(value)


def _shares(shares: dict[str, float]) -> str:
    return " ".join(f"{option}:{share:.2f}" for option, share in shares.items())


def markdown(record: ItemAnalysis, rows: int = 15) -> str:
    level = f"{record.level:.0%}"
    lines = [f"# Item analysis — {len(record.items)} items × {len(record.models)} models", "",
             f"- source: {record.source}", f"- method: {record.method}",
             f"- intervals: {level}, {record.bootstrap} model resamples",
             f"- unparseable/error answers: {'wrong' if record.unparseable_as_wrong else 'missing'}",
             f"- stale records skipped: {record.stale_skipped}", f"- converged: {record.converged} "
             f"({record.iterations} rounds)", *(f"- note: {note}" for note in record.notes), "",
             "## Models", "", "| model | n | share correct | ability | se |", "|---|---:|---:|---:|---:|"]
    for m in sorted(record.models, key=lambda m: -(m.ability or 0)):
        lines.append(f"| {m.model} | {m.n} | {_fmt(m.share_correct)} | {_fmt(m.ability)} | {_fmt(m.ability_se)} |")

    def table(title: str, items: list[ItemStats]) -> None:
        lines.extend(["", f"## {title}", "", f"| item | n | share correct | item–rest | difficulty ({level}) | "
                      f"discrimination ({level}) | top distractor |", "|---|---:|---:|---:|---|---|---|"])
        for i in items[:rows]:
            distractor = f"{i.top_distractor} ({_fmt(i.top_distractor_share)})" if i.top_distractor else "—"
            lines.append(f"| {i.item_id} | {i.n} | {_fmt(i.share_correct)} | {_fmt(i.item_rest)} | "
                         f"{_fmt(i.difficulty)} [{_fmt(i.difficulty_low)}, {_fmt(i.difficulty_high)}] | "
                         f"{_fmt(i.discrimination)} [{_fmt(i.discrimination_low)}, {_fmt(i.discrimination_high)}] | "
                         f"{distractor} |")

    table("Lowest discrimination", sorted(record.items, key=lambda i: i.discrimination))
    table("Hardest", sorted(record.items, key=lambda i: -i.difficulty))
    table("Easiest", sorted(record.items, key=lambda i: i.difficulty))
    return "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"
