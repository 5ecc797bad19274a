"""The annotator's own tables, on the workspace store's engine (SQLite or PostgreSQL).

Items are never written here: item edits go through `curation.core.store.Store`, so every save
is a revision with its author. These tables hold what belongs to the review app itself:
users, login attempts, sessions, per-user drafts and positions, assignments, reservations and skips,
review decisions, each reviewer's own decision on an overlapped item until it is settled
(reviewer_decisions), suspect decisions (with the content and answers they were made on), scoring
tasks, expert scores, imported judge scores, the Verdicts queue (responses loaded for people to
decide, each reviewer's verdict, the settled verdicts, what the loaded runs hold) and the server's
own secrets.
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

# every login attempt with the client it came from, for the backoff (annotator/web/throttle.py)
login_tries = Table(
    "annot_login_tries",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(100), nullable=False),
    Column("client", String(64), nullable=False),
    Column("at", Float, nullable=False),
    Column("ok", Integer, nullable=False),
    Index("ix_annot_login_tries_name", "name", "at"),
    Index("ix_annot_login_tries_client", "client", "at"),
)

# signed-in sessions (annotator/web/sessions.py): the token only as its hash, and the version of
# the password it was opened with, so that a password reset ends it
sessions = Table(
    "annot_sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("user", String(100), nullable=False, index=True),
    Column("password_version", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("seen_at", Float, nullable=False),
)

inactive_users = Table(  # deactivated users: no login, no session
    "annot_inactive_users",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("since", String(32), nullable=False),
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

reservations = Table(  # who is editing an item in a queue, from which login session, until when (claims.py)
    "annot_edit_reservations",
    metadata,
    Column("queue", String(32), primary_key=True),
    Column("item_id", String(200), primary_key=True),
    Column("user", String(100), nullable=False),
    Column("session", String(64), nullable=False, default=""),  # the login session's digest ('' for scripts)
    Column("taken_at", Float, nullable=False),  # epoch seconds
    Column("expires_at", Float, nullable=False),  # epoch seconds: the last edit and the idle time
    Index("ix_annot_edit_reservations_user", "user"),
)

reservation_breaks = Table(  # an admin broke a reservation: who held it, who broke it, when (claims.py)
    "annot_reservation_breaks",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("queue", String(32), nullable=False),
    Column("item_id", String(200), nullable=False),
    Column("holder", String(100), nullable=False),
    Column("by", String(100), nullable=False),
    Column("at", String(32), nullable=False),
)

skips = Table(  # items a reviewer skipped: their next unreviewed item passes over them while others remain
    "annot_skips",
    metadata,
    Column("user", String(100), primary_key=True),
    Column("queue", String(32), primary_key=True),
    Column("item_id", String(200), primary_key=True),
    Column("at", String(32), nullable=False),
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

reviewer_decisions = Table(  # on an item assigned to 2+ reviewers: each one's decision, kept apart (adjudication.py)
    "annot_reviewer_decisions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("queue", String(32), nullable=False),
    Column("item_id", String(200), nullable=False),
    Column("user", String(100), nullable=False),
    Column("decision", String(32), nullable=False),
    Column("edits", Text, nullable=False),  # JSON {"field.path": value}: the reviewer's own edits
    Column("reason", Text),
    Column("base_rev", Integer, nullable=False),  # the item revision the decision was made on
    Column("outcome", String(16)),  # None while others have still to decide; agreed, disputed, adjudicated
    Column("applied_rev", Integer),  # the item revision that settled it
    Column("at", String(32), nullable=False),
    Index("ix_annot_reviewer_decisions_item", "queue", "item_id", "outcome"),
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

server_secrets = Table(  # server-only values (the blind-order key); never served to a page or the API
    "annot_secrets",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", String(200), nullable=False),
    Column("created_at", String(32), nullable=False),
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


# -- the Verdicts queue (annotator/review/verdicts.py) ------------------------------------------------------
verdict_tasks = Table(  # one response of a run for people to decide, keyed by (run, item, response)
    "annot_verdict_tasks",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(200), nullable=False),
    Column("item_id", String(200), nullable=False),
    Column("response_sha", String(64), nullable=False),
    Column("response", Text, nullable=False),  # the response text judged (shown whole; its sha above)
    Column("content_hash", String(64)),
    Column("answer_format", String(32)),
    Column("tier", Integer, nullable=False),  # 0 checker–judge disagreement, 1 judged or undecided, 2 audit
    Column("blind_rank", String(64), nullable=False),  # the blind order within an item (HMAC with the workspace secret)
    Column("score", Text, nullable=False),  # JSON: the record's Score when loaded (what people's verdict overrides)
    Column("external", Text),  # JSON: what another tool said of the response (AnswerRecord.external)
    Column("loaded_at", String(32), nullable=False),
    UniqueConstraint("run_id", "item_id", "response_sha", name="uq_annot_verdict_task"),
    Index("ix_annot_verdict_tasks_order", "tier", "item_id", "blind_rank"),
)

verdict_votes = Table(  # each reviewer's verdict on a task (kept apart on an overlapped task until settled)
    "annot_verdict_votes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("task_id", Integer, nullable=False, index=True),
    Column("user", String(100), nullable=False),
    Column("verdict", String(16), nullable=False),  # correct | incorrect | no_answer
    Column("extraction_ok", Integer),  # 1 / 0, or NULL: not judged
    Column("error_category", String(64)),
    Column("reason", Text),
    Column("outcome", String(16)),  # None while others have still to decide; single, agreed, disputed, adjudicated
    Column("at", String(32), nullable=False),
)

verdict_results = Table(  # the settled verdict of a task: what is applied to the run
    "annot_verdict_results",
    metadata,
    Column("task_id", Integer, primary_key=True),
    Column("verdict", String(16), nullable=False),
    Column("extraction_ok", Integer),
    Column("error_category", String(64)),
    Column("decided_by", String(300), nullable=False),  # the reviewer, the agreeing reviewers (a+b) or the lead
    Column("how", String(16), nullable=False),  # single, agreed, adjudicated
    Column("reason", Text),
    Column("at", String(32), nullable=False),
    Column("applied", String(32)),  # applied, already, changed, no record, no run (evaluation/human_verdicts.py)
)

verdict_runs = Table(  # per loaded run and answer format: its responses and how many the judge decided
    "annot_verdict_runs",
    metadata,
    Column("run_id", String(200), primary_key=True),
    Column("answer_format", String(32), primary_key=True),
    Column("responses", Integer, nullable=False),
    Column("judged", Integer, nullable=False),
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
