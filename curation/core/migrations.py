"""Schema versions of the store and of item records, and the steps between them.

A store written by an older benchsmith is brought up to date when it is opened; a store
written by a newer one is refused. Item records carry `schema_version`; records from an
older schema are upgraded on read (the stored snapshot stays as written, history intact).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection

from curation.core.facets import facet, resolved_part, resolved_subject
from curation.core.facets import values as facet_values
from curation.core.identity import content_hash
from curation.core.item import SCHEMA_VERSION, parse_item, upgrade_record

STORE_VERSION = 6


def _add_identity_columns(conn: Connection) -> None:
    """1 → 2: the content hash and the taxonomy's part/subject become columns, filled from each snapshot."""
    for column in ("content_hash VARCHAR(32)", "taxonomy_part VARCHAR(200)", "taxonomy_subject VARCHAR(200)"):
        conn.execute(text(f"ALTER TABLE items ADD COLUMN {column}"))
    conn.execute(text("CREATE INDEX ix_items_content_hash ON items (content_hash)"))
    rows = conn.execute(text("SELECT id, data FROM items")).all()
    values = []
    for item_id, data in rows:
        item = parse_item(migrate_record(json.loads(data)))
        values.append({"id": item_id, "hash": content_hash(item), "part": item.taxonomy.part,
                       "subject": item.taxonomy.subject})
    if values:
        conn.execute(text("UPDATE items SET content_hash = :hash, taxonomy_part = :part, taxonomy_subject = :subject "
                          "WHERE id = :id"), values)


def _index_revision_stage_and_time(conn: Connection) -> None:
    """2 → 3: a release card's stage counts and newest revision time read indexes instead of
    scanning every snapshot (0.6 s on a 65,000-item store)."""
    conn.execute(text("CREATE INDEX ix_revisions_stage ON revisions (stage)"))
    conn.execute(text("CREATE INDEX ix_revisions_created_at ON revisions (created_at)"))


def _resolve_part_and_subject(conn: Connection) -> None:
    """3 → 4: the `part` and `subject` columns hold the one resolved rule (the taxonomy's, else the
    source's; curation/core/facets.py) instead of the source's first, so the columns say it all and the
    taxonomy's own copies go."""
    rows = conn.execute(text("SELECT id, data FROM items")).all()
    values = []
    for item_id, data in rows:
        item = parse_item(migrate_record(json.loads(data)))
        values.append({"id": item_id, "part": resolved_part(item), "subject": resolved_subject(item)})
    if values:
        conn.execute(text("UPDATE items SET part = :part, subject = :subject WHERE id = :id"), values)
    for column in ("taxonomy_part", "taxonomy_subject"):
        conn.execute(text(f"ALTER TABLE items DROP COLUMN {column}"))


def _add_review_facet_columns(conn: Connection) -> None:
    """4 → 5: the review state the annotator's queues select by (a Korea candidate, needs fix, has a
    rationale) becomes columns, filled from each snapshot, so no queue filter reads the JSON."""
    names = ("korea_candidate", "needs_fix", "has_rationale")
    for name in names:
        conn.execute(text(f"ALTER TABLE items ADD COLUMN {name} BOOLEAN NOT NULL DEFAULT FALSE"))
    rows = conn.execute(text("SELECT id, data FROM items")).all()
    values = [{"id": item_id, **facet_values(parse_item(migrate_record(json.loads(data))), [facet(n) for n in names])}
              for item_id, data in rows]
    if values:
        conn.execute(text("UPDATE items SET korea_candidate = :korea_candidate, needs_fix = :needs_fix, "
                          "has_rationale = :has_rationale WHERE id = :id"), values)


def _add_answer_format_and_points(conn: Connection) -> None:
    """5 → 6: the key's format and the points (배점) become columns, filled from each snapshot, so the
    report's `format:…` subsets and exam score read no JSON."""
    conn.execute(text("ALTER TABLE items ADD COLUMN answer_format VARCHAR(16)"))
    conn.execute(text("ALTER TABLE items ADD COLUMN points FLOAT"))
    names = ("answer_format", "points")
    rows = conn.execute(text("SELECT id, data FROM items")).all()
    values = [{"id": item_id, **facet_values(parse_item(migrate_record(json.loads(data))), [facet(n) for n in names])}
              for item_id, data in rows]
    if values:
        conn.execute(text("UPDATE items SET answer_format = :answer_format, points = :points WHERE id = :id"), values)


# STORE_MIGRATIONS[n] upgrades a store from version n to n + 1.
STORE_MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _add_identity_columns, 2: _index_revision_stage_and_time,
                                                              3: _resolve_part_and_subject, 4: _add_review_facet_columns,
                                                              5: _add_answer_format_and_points}

# RECORD_MIGRATIONS[n] upgrades an item record from schema_version n to n + 1.
# 1 → 2: the answer (option numbers) becomes a typed choice key, all options required when the
# taxonomy's question_format said multiple_answers (`curation.core.item.upgrade_record`).
RECORD_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: upgrade_record}


def migrate_store(conn: Connection, from_version: int) -> None:
    for version in range(from_version, STORE_VERSION):
        STORE_MIGRATIONS[version](conn)


def migrate_record(record: dict[str, Any]) -> dict[str, Any]:
    version = record.get("schema_version", SCHEMA_VERSION)
    while version < SCHEMA_VERSION:
        record = RECORD_MIGRATIONS[version](record)
        version += 1
        record["schema_version"] = version
    return record
