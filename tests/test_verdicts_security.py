"""The Verdicts queue over HTTP, as anyone with a login (or none) can call it: every handler of the
tab refuses the annotator role and requests without a session, and writes nothing; an expert is
refused the lead's handlers; nothing served to an expert names the model, the run or a task.
Driven with the blind-scoring tests' raw page session (tests/test_blind_scoring.py), whose users and
passwords the Verdicts workspace shares."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from annotator.review import queues
from annotator.review.tables import (
    reservations,
    reviews,
    skips,
    verdict_results,
    verdict_tasks,
    verdict_votes,
)
from evaluation.human_verdicts import VERDICTS_FILE
from evaluation.runlog import RESPONSES

from . import verdicts_support as support
from .annotator_support import running_server

pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")
httpx = pytest.importorskip("httpx")

from .test_blind_scoring import PageSession  # noqa: E402

ANSWER = {"verdicts-verdict": "incorrect", "verdicts-extraction": "right", "verdicts-category": "reasoning_depth",
          "verdicts-reason": "검토 사유"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from annotator.review.verdicts import load_verdict_tasks
    from evaluation.metrics import load_run

    workspace = support.build(tmp_path_factory.mktemp("verdicts-http") / "ws")
    run = load_run(workspace.runs_dir / support.RUN_ID, workspace)
    load_verdict_tasks(workspace.store.engine, run, audit=4)
    with running_server(workspace) as url:
        yield url, workspace


def written(workspace) -> dict[str, int]:
    """Row counts of everything the queue writes, and the run's log sizes."""
    with workspace.store.engine.connect() as conn:
        counts = {table.name: conn.execute(select(func.count()).select_from(table)).scalar_one()
                  for table in (verdict_tasks, verdict_votes, verdict_results, reviews, reservations, skips)}
    run = workspace.runs_dir / support.RUN_ID
    for name in (RESPONSES, VERDICTS_FILE):
        counts[name] = len((run / name).read_bytes()) if (run / name).is_file() else 0
    guidelines = workspace.root / "guidelines" / "verdicts.md"
    counts["guidelines"] = guidelines.stat().st_mtime_ns if guidelines.is_file() else 0
    return counts


def _verdict_handlers(page: PageSession) -> list[dict]:
    return page.handlers("verdicts-", "tab-verdicts")


def test_an_annotator_is_refused_every_verdicts_handler_and_nothing_is_written(served):
    url, workspace = served
    before = written(workspace)
    carol = PageSession(url, "carol")
    handlers = _verdict_handlers(carol)
    names = {carol.elem_id(target) for d in handlers for target, _ in d["targets"]}
    assert {"tab-verdicts", "verdicts-save", "verdicts-settle", "verdicts-next", "verdicts-prev", "verdicts-mine",
            "verdicts-skip", "verdicts-disputed", "verdicts-guidelines-save"} <= names
    for dependency in handlers:
        refused = carol.call(dependency, ANSWER)
        assert refused.status_code == 500, (dependency["targets"], refused.text[:300])
        assert "may not use the verdicts queue" in refused.text or "Only admins" in refused.text
    for elem_id, event in (("tab-stats", "select"), ("stats-refresh", "click")):  # the figures too
        assert carol.call(carol.handler(elem_id, event)).status_code == 500
    assert written(workspace) == before
    carol.close()


def test_without_a_session_every_verdicts_handler_is_refused_and_nothing_is_written(served):
    url, workspace = served
    before = written(workspace)
    bob = PageSession(url, "bob")  # only to read the handlers' numbers
    with httpx.Client(base_url=url, timeout=60) as anonymous:
        for dependency in _verdict_handlers(bob):
            response = anonymous.post("gradio_api/run/predict", json={
                "data": [None] * len(dependency["inputs"]), "fn_index": dependency["id"], "session_hash": "x"})
            assert response.status_code == 401
            assert support.MODEL not in response.text
    assert written(workspace) == before
    bob.close()


def test_an_expert_is_refused_the_leads_handlers_and_sees_no_model_run_or_task(served):
    url, workspace = served
    erin = PageSession(url, "erin")
    erin.get("")
    erin.call(next(d for d in erin.config["dependencies"] if any(e == "load" for _, e in d["targets"])))
    opened = erin.call(erin.handler("tab-verdicts", "select"))
    assert opened.status_code == 200 and "v02" in opened.text  # the disagreement first
    assert "정답: 3" in opened.text and "kmmmu-judge" in opened.text
    before = written(workspace)
    for elem_id in ("verdicts-settle", "verdicts-disputed"):
        refused = erin.call(erin.handler(elem_id, "click"), ANSWER)
        assert refused.status_code == 500 and "may not decide 'adjudicate'" in refused.text
    assert written(workspace) == before
    for elem_id in ("verdicts-next", "verdicts-next", "verdicts-prev", "verdicts-mine", "verdicts-skip"):
        assert erin.call(erin.handler(elem_id, "click")).status_code == 200
    saved = erin.call(erin.handler("verdicts-save", "click"), ANSWER)
    assert saved.status_code == 200 and "Your verdict is applied" in saved.text
    assert erin.call(erin.handler("tab-stats", "select")).status_code == 200
    assert "Deciders vs people" in erin.bodies[-1]
    for body in erin.bodies:
        for secret in support.secrets_served():
            assert secret not in body, (secret, body[:2000])
        assert re.search(r"verdict-\d", body) is None  # a task's key
    assert queues.has_assignments(workspace.store.engine, "verdicts") is False
    erin.close()
