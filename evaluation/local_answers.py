"""Answers computed in this process from the options alone (the baseline heuristics).

Such an answer costs microseconds: sending it through the request sender, the response
cache and the answer parser would cost a hundred times more than the answer itself. The
records are the ones the request sender writes for the same baseline (the completion it would return
is `{"정답": N}`, parsed as JSON), except that there is no request key: nothing was requested
and nothing is cached. Lines go to the log in batches: a kill loses at most one batch, which a
rerun computes again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache
from typing import Any

from curation.core.item import Answerable
from evaluation.backends.baseline import RULES, Chooser, chooser_for
from evaluation.cells import note_appended
from evaluation.models import ModelSpec
from evaluation.runlog import RunLog, now_iso
from scoring import Score
from scoring.portable import get_format

CHOICE = get_format("choice")

_BATCH = 2000


def local_chooser(spec: ModelSpec) -> Chooser | None:
    """The heuristic that answers for this model here and now, or None for a model that must be asked."""
    if spec.backend != "baseline" or spec.model in RULES:
        return None
    return chooser_for(spec.model)


@lru_cache(maxsize=64)
def _completion_text(choice: int) -> str:
    return json.dumps({"정답": choice})


def local_score(item: Answerable, choice: int) -> dict[str, Any]:
    """The Score the runner gives the completion `{"정답": N}` (read as JSON) under the item's choice key."""
    key = item.choice_key()
    if key is None:
        raise ValueError(f"{item.id}: an option-only baseline answers choice items only")
    return dict(_choice_score(tuple(key.options), key.require_all, choice))


@lru_cache(maxsize=4096)
def _choice_score(options: tuple[int, ...], require_all: bool, choice: int) -> dict[str, Any]:
    """(Pool-scale baselines score few distinct keys: the Score is made once per key and choice.)"""
    verdict = CHOICE.check(choice, {"format": "choice", "options": list(options), "require_all": require_all}, ())
    return Score.from_verdict(replace(verdict, details={"method": "json", **verdict.details})).model_dump(
        mode="json", exclude_none=True)


def local_record(item: Answerable, digest: str, choice: int, ts: str) -> dict[str, Any]:
    score = local_score(item, choice)
    return {"item_id": item.id, "content_hash": digest, "outcome": score["outcome"], "score": score,
            "gold": item.gold(), "answer": choice, "parse_method": "json", "text": _completion_text(choice),
            "finish_reason": "stop", "usage": {}, "attempts": 1, "latency_s": 0.0, "cached": False, "resends": 0,
            "ts": ts}


def answer_locally(to_ask: Iterable[tuple[Answerable, str]], choose: Chooser, hide_options: bool, log: RunLog,
                   on_record: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Answer every (item, content hash) with `choose` and log the records; the run's stats."""
    by_outcome: dict[str, int] = {}
    batch: list[dict[str, Any]] = []
    answered: list[dict[str, Any]] = []
    start = end = log.path.stat().st_size
    ts = now_iso()  # one stamp per batch: a batch is answered within milliseconds
    for item, digest in to_ask:
        choices = tuple("" if hide_options else option.text for option in item.options)
        record = local_record(item, digest, choose(choices), ts)
        batch.append(record)
        answered.append(record)
        by_outcome[record["outcome"]] = by_outcome.get(record["outcome"], 0) + 1
        if on_record is not None:
            on_record(record)
        if len(batch) == _BATCH:
            end += log.append_many(batch)
            batch, ts = [], now_iso()
    end += log.append_many(batch)
    note_appended(log.path.parent, answered, (start, end))
    return {"sent": 0, "cached": 0, "computed_locally": sum(by_outcome.values()), "by_outcome": by_outcome}
