"""Blind scoring: which response is which model stays on the server.

- The order of an item's responses is an HMAC of (workspace secret, expert, item, task), so it
  differs per expert and per item and no one without the secret can recompute it. The secret is
  made once per workspace and kept in the annotator's tables (`annot_secrets`), which only the
  server reads; it is never served.
- Experts see responses by label (A, B, …) only: never a model name, a run id or a task id (task
  ids follow load order, which maps to one model on every item).
- Where an item's rationale is also one of its blind responses, who drafted it (the revision
  reason "drafted by MODEL", `rationale.author`, its notes, the revision's author) and the runs
  of its responses are hidden from everyone but admins, in everything served about the item.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets as token_source
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Engine, insert, select
from sqlalchemy.exc import IntegrityError

from annotator.review.tables import now, scoring_tasks, server_secrets, write_connection
from curation.core.store import Revision

SECRET_NAME = "blind-order"
HIDDEN = "‹숨김 · hidden›"


def workspace_secret(engine: Engine) -> bytes:
    """This workspace's blind-order key, made on first use (one value for every server process)."""
    key = select(server_secrets.c.value).where(server_secrets.c.name == SECRET_NAME)
    with engine.connect() as conn:
        found = conn.execute(key).scalar()
    if found is None:
        try:
            with write_connection(engine) as conn, conn.begin():
                conn.execute(insert(server_secrets).values(name=SECRET_NAME, value=token_source.token_hex(32),
                                                    created_at=now()))
        except IntegrityError:
            pass  # another process made it first: theirs is the one
        with engine.connect() as conn:
            found = conn.execute(key).scalar_one()
    return bytes.fromhex(found)


def order_key(secret: bytes, expert: str, item_id: str, task_id: int) -> bytes:
    return hmac.new(secret, f"{expert}\0{item_id}\0{task_id}".encode(), hashlib.sha256).digest()


def label(place: int) -> str:
    """A, B, …, Z, AA, AB, … for the 0-based place among an item's responses."""
    letters = ""
    place += 1
    while place:
        place, rest = divmod(place - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


# -- authorship of a rationale that is also a blind response ------------------------------------

def blind_responses(engine: Engine, item_id: str) -> tuple[set[str], set[str]]:
    """The texts of an item's scoring tasks, and the names that would unblind them: their models and runs."""
    with engine.connect() as conn:
        rows = conn.execute(select(scoring_tasks.c.rationale, scoring_tasks.c.model, scoring_tasks.c.run_id)
                            .where(scoring_tasks.c.item_id == item_id)).all()
    return {row.rationale.strip() for row in rows}, {name for row in rows for name in (row.model, row.run_id) if name}


def _rationale(snapshot: dict[str, Any]) -> dict[str, Any]:
    value = snapshot.get("rationale")
    return value if isinstance(value, dict) else {}


def hidden_authors(engine: Engine, item_id: str, revisions: Iterable[Revision]) -> set[str]:
    """The names to hide on this item (its responses' models and runs, every `rationale.author` it had),
    or none when no rationale text it ever had is one of its blind responses."""
    texts, models = blind_responses(engine, item_id)
    if not texts:
        return set()
    rationales = [_rationale(revision.snapshot) for revision in revisions]
    if not any((r.get("text") or "").strip() in texts for r in rationales):
        return set()
    return models | {r["author"] for r in rationales if r.get("author")}


def scrub(value: Any, names: set[str]) -> Any:
    """`value` with every hidden name replaced, inside strings, lists and dicts (an `author` key's
    value hidden whatever it is)."""
    if not names:
        return value
    if isinstance(value, str):
        for name in sorted(names, key=len, reverse=True):
            value = value.replace(name, HIDDEN)
        return value
    if isinstance(value, dict):
        return {k: (HIDDEN if k == "author" and v else scrub(v, names)) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, names) for v in value]
    return value


def scrub_history(rows: list[tuple[Revision, list[tuple[str, Any, Any]]]],
                  names: set[str]) -> list[tuple[Revision, list[tuple[str, Any, Any]]]]:
    """History rows (revision, field changes) with the reason, the changes and `rationale.author`
    scrubbed of the hidden names. The revision's own author is kept unless it is a hidden name
    (a model that wrote the revision itself)."""
    if not names:
        return rows
    from dataclasses import replace

    def value(path: str, shown: Any) -> Any:
        return HIDDEN if path.endswith(".author") and shown else scrub(shown, names)

    return [(replace(revision, author=scrub(revision.author, names), reason=scrub(revision.reason, names),
                     snapshot=scrub(revision.snapshot, names)),
             [(path, value(path, before), value(path, after)) for path, before, after in changes])
            for revision, changes in rows]
