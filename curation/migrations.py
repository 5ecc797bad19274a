"""Schema versions of the store and of item records, and the steps between them.

A store written by an older benchsmith is brought up to date when it is opened; a store
written by a newer one is refused. Item records carry `schema_version`; records from an
older schema are upgraded on read (the stored snapshot stays as written, history intact).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Connection

from curation.item import SCHEMA_VERSION

STORE_VERSION = 1

# STORE_MIGRATIONS[n] upgrades a store from version n to n + 1.
STORE_MIGRATIONS: dict[int, Callable[[Connection], None]] = {}

# RECORD_MIGRATIONS[n] upgrades an item record from schema_version n to n + 1.
RECORD_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


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
