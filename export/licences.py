"""Which licence applies to which released rows. A row's licence is its source's (the row's
`exam`) from the release config's `source_licenses`, else the one its importer recorded
(`Item.source.license`, e.g. KMMLU's), else the config's `source_license` terms. The card's
YAML `license:` is the config's when given, else the one licence every row shares when it is a
Hub licence id, else `other` (with the per-source table in the card and LICENSE.md)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from curation.core.item import Item
from export.release_config import ReleaseConfig

HUB_LICENCE_ID = re.compile(r"^[a-z0-9][a-z0-9.+-]*$")  # apache-2.0, cc-by-nd-4.0, mit …


@dataclass(frozen=True)
class SourceLicence:
    source: str
    licence: str
    rows: int  # released items from this source (each once, whatever configs hold it)


def source_licences(config: ReleaseConfig, items: dict[str, Item],
                    rows_by_config: dict[str, list[dict[str, Any]]]) -> list[SourceLicence]:
    exam_of = {row["id"]: row["exam"] for rows in rows_by_config.values() for row in rows}
    counts = Counter((exam, config.source_licenses.get(exam) or items[item_id].source.license
                      or config.source_license) for item_id, exam in exam_of.items())
    return [SourceLicence(source, licence, rows) for (source, licence), rows in sorted(counts.items())]


def release_licence(config: ReleaseConfig, licences: list[SourceLicence]) -> str:
    if config.license:
        return config.license
    shared = {entry.licence for entry in licences}
    return shared.pop() if len(shared) == 1 and HUB_LICENCE_ID.match(next(iter(shared))) else "other"


def licence_table(licences: list[SourceLicence]) -> str:
    lines = ["| source | licence | rows |", "|---|---|---:|"]
    lines += [f"| {_cell(entry.source)} | {_cell(entry.licence)} | {entry.rows} |" for entry in licences]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def licence_file(pretty_name: str, licences: list[SourceLicence]) -> str:
    """LICENSE.md: which terms apply to which rows."""
    return (f"# {pretty_name}: terms of use\n\nEach row is under the licence of its source (the `exam` column):\n\n"
            f"{licence_table(licences)}\n")
