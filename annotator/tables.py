"""The annotator's own tables, on the workspace store's engine (SQLite or PostgreSQL).

Items are never written here: item edits go through `curation.store.Store`, so every save
is a revision with its author. These tables hold what belongs to the review app itself:
users, login attempts, per-user drafts and positions, assignments, review decisions, suspect
decisions (with the content and answers they were made on), scoring tasks, expert scores and imported judge scores.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    Column,
    Engine,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Connection

metadata = MetaData()

users = Table(
    "annot_users",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("role", String(16), nullable=False),
    Column("password_hash", String(300), nullable=False),
    Column("created_at", String(32), nullable=False),
)

login_attempts = Table(
    "annot_login_attempts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(100), nullable=False, index=True),
    Column("at", Float, nullable=False),
    Column("ok", Integer, nullable=False),
)

# Shared by every server process on this store (annotator/shared_sessions.py)
server_secrets = Table(
    "annot_server_secrets",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", String(200), nullable=False),
)

sessions = Table(
    "annot_sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),  # sha256 of the cookie's token, never the token
    Column("user", String(100), nullable=False, index=True),
    Column("created_at", Float, nullable=False),
)

drafts = Table(
    "annot_drafts",
    metadata,
    Column("user", String(100), primary_key=True),
    Column("queue", String(32), primary_key=True),
    Column("item_id", String(200), primary_key=True),
    Column("base_rev", Integer, nullable=False),
    Column("edits", Text, nullable=False),
    Column("updated_at", String(32), nullable=False),
)

positions = Table(
    "annot_positions",
    metadata,
    Column("user", String(100), primary_key=True),
    Column("queue", String(32), primary_key=True),
    Column("item_id", String(200), nullable=False),
    Column("updated_at", String(32), nullable=False),
)

assignments = Table(
    "annot_assignments",
    metadata,
    Column("queue", String(32), primary_key=True),
    Column("item_id", String(200), primary_key=True),
    Column("user", String(100), primary_key=True),
    Column("assigned_at", String(32), nullable=False),
    Index("ix_annot_assignments_user", "user", "queue"),
)

reviews = Table(
    "annot_reviews",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("queue", String(32), nullable=False),
    Column("item_id", String(200), nullable=False),
    Column("user", String(100), nullable=False),
    Column("decision", String(32), nullable=False),
    Column("reason", Text),
    Column("rev", Integer, nullable=False),
    Column("at", String(32), nullable=False),
    Index("ix_annot_reviews_user", "user", "queue", "item_id"),
)

suspect_decisions = Table(  # the Suspects queue's decisions, with what they were made on
    "annot_suspect_decisions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("item_id", String(200), nullable=False),
    Column("user", String(100), nullable=False),
    Column("decision", String(32), nullable=False),
    Column("reason", Text),
    Column("rev", Integer, nullable=False),  # the item's revision after the decision
    Column("content_hash", String(64)),  # the item's content when it was decided (before a key fix)
    Column("fingerprint", String(64), nullable=False),  # of the answers the suspects result was found in
    Column("score", Float),
    Column("new_key", Integer),
    Column("at", String(32), nullable=False),
    Index("ix_annot_suspect_decisions_item", "item_id", "fingerprint"),
)

scoring_tasks = Table(
    "annot_scoring_tasks",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("item_id", String(200), nullable=False, index=True),
    Column("model", String(200), nullable=False),
    Column("rationale", Text, nullable=False),
    Column("run_id", String(200), nullable=False),
    UniqueConstraint("item_id", "model", "run_id", name="uq_annot_scoring_task"),
)

expert_scores = Table(
    "annot_expert_scores",
    metadata,
    Column("task_id", Integer, primary_key=True),
    Column("expert", String(100), primary_key=True),
    Column("factuality", Integer, nullable=False),
    Column("logic", Integer, nullable=False),
    Column("depth", Integer, nullable=False),
    Column("clarity", Integer, nullable=False),
    Column("comment", Text),
    Column("rev", Integer, nullable=False),
    Column("updated_at", String(32), nullable=False),
)

judge_scores = Table(
    "annot_judge_scores",
    metadata,
    Column("item_id", String(200), primary_key=True),
    Column("model", String(200), primary_key=True),
    Column("factuality", Float, nullable=False),
    Column("logic", Float, nullable=False),
    Column("depth", Float, nullable=False),
    Column("clarity", Float, nullable=False),
    Column("loaded_at", String(32), nullable=False),
)


def ensure_tables(engine: Engine) -> None:
    """Create the annotator's tables where missing (never touches the store's own)."""
    with write_connection(engine) as conn, conn.begin():
        metadata.create_all(conn, checkfirst=True)


def write_connection(engine: Engine) -> Connection:
    """A connection for writing: on SQLite the store's hook takes the write lock up front
    (BEGIN IMMEDIATE) so concurrent writers queue instead of failing on a lock upgrade."""
    return engine.connect().execution_options(benchsmith_write=True)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
