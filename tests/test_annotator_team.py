"""A team on one server and on several: store connections reused across the worker threads,
Gradio's per-page state bounded, and two server processes on one store serving one team
(a session from one is signed in on the other, a save on one is seen on the other, and
compare-and-swap conflicts across them give exactly one winner). Real servers over HTTP."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")
pytest.importorskip("gradio_client", reason="gradio_client is not installed (extra: test)")

from annotator.review import auth  # noqa: E402  (session_states imports gradio)
from annotator.review.sample import load_sample  # noqa: E402
from curation.core.workspace import init_workspace  # noqa: E402

from .annotator_support import serving_app  # noqa: E402

PASSWORD = "password-team"
TEAM = [f"member{n}" for n in range(12)]
SESSION_BOUND = 6


def _workspace(root, url=None):
    workspace = init_workspace(root, url)
    load_sample(workspace)
    for name in TEAM:
        auth.add_user(workspace.store.engine, name, "admin", PASSWORD)
    return workspace


@pytest.fixture(scope="module")
def team_server(tmp_path_factory):
    from annotator.web.server import create_server, gradio_app
    from annotator.web.settings import Settings

    workspace = _workspace(tmp_path_factory.mktemp("team") / "ws")
    gate = create_server(workspace, local_mode=False, settings=Settings(page_sessions_per_user=SESSION_BOUND))
    with serving_app(gate) as url:
        yield url, gradio_app(gate.app).state_holder, workspace


def _signed_in(url: str, name: str):
    import httpx

    client = httpx.Client(base_url=url, timeout=60)
    assert client.post("login", data={"username": name, "password": PASSWORD}).status_code == 200
    return client


def _next(client, session_hash: str) -> dict:
    """The item queue's Next, as the page calls it (its state is the page session's, on the server)."""
    response = client.post("gradio_api/run/item_next", json={
        "data": [None, [], "", "", "", "", "", "id"], "session_hash": session_hash})
    assert response.status_code == 200, response.text[:300]
    return response.json()


def _shown_item(reply: dict) -> str:
    return re.search(r'data-item="([^"]+)"', json.dumps(reply["data"][1]).replace('\\"', '"')).group(1)


def test_a_team_clicking_at_once_reuses_the_store_connections(team_server):
    from sqlalchemy import event
    from sqlalchemy.pool import Pool

    from annotator.web import capacity

    url, _, _ = team_server
    clients = [_signed_in(url, name) for name in TEAM]
    opened, closed = [], []
    listeners = [("connect", lambda *_: opened.append(1)), ("close", lambda *_: closed.append(1))]
    for name, listener in listeners:
        event.listen(Pool, name, listener)
    try:
        def work(client) -> None:
            session = uuid.uuid4().hex[:11]
            for _ in range(15):
                _next(client, session)
        with ThreadPoolExecutor(len(clients)) as pool:
            list(pool.map(work, clients))
    finally:
        for name, listener in listeners:
            event.remove(Pool, name, listener)
    # 180 actions by 12 clients at once: every connection opened is kept for the next action
    # (SQLAlchemy's default pool keeps five and opens and closes the others per use)
    assert closed == [] and len(opened) <= capacity.pool_size()


def test_a_users_page_sessions_beyond_their_bound_drop_their_least_recently_used(team_server):
    url, holder, workspace = team_server
    from annotator.review import claims

    for name in TEAM:  # the items the team above left open (reserved), so this walk has every item
        claims.release(workspace.store.engine, name)
    client = _signed_in(url, TEAM[0])
    pages = [uuid.uuid4().hex[:11] for _ in range(SESSION_BOUND + 4)]
    shown = {page: _shown_item(_next(client, page)) for page in pages}
    assert len(holder.sessions_of(TEAM[0])) == SESSION_BOUND
    assert pages[0] not in holder and pages[-1] in holder
    # a kept session still has its own state: Next goes on from the item it showed
    kept = pages[-1]
    assert _shown_item(_next(client, kept)) != shown[kept]


def test_logging_out_drops_the_users_page_sessions_and_keeps_no_sent_values(team_server):
    url, holder, workspace = team_server
    from annotator.review import claims

    for name in TEAM[:2]:
        claims.release(workspace.store.engine, name)
    leaving, staying = _signed_in(url, TEAM[0]), _signed_in(url, TEAM[1])
    mine, theirs = uuid.uuid4().hex[:11], uuid.uuid4().hex[:11]
    _next(leaving, mine)
    _next(staying, theirs)
    assert mine in holder and theirs in holder
    # what a handler sent (the item's page, text and tables) is not kept: only State values are
    assert holder[mine].config_values == {}
    assert leaving.post("logout", headers={"origin": url.rstrip("/")}).status_code == 200
    assert mine not in holder and theirs in holder


def test_script_calls_leave_gradios_queue_analytics_alone(team_server):
    """Gradio's queue summarised every event it kept with pandas at each queued call."""
    url, holder, _ = team_server
    client = _signed_in(url, TEAM[2])
    queue = holder.blocks._queue
    if not hasattr(queue, "events_recorded"):
        pytest.skip("this Gradio's queue keeps no analytics (before 6.25)")
    for _ in range(3):
        event = client.post("gradio_api/call/get_item", json={"data": ["sample-001", "item"]})
        assert event.status_code == 200, event.text[:200]
        assert "event: complete" in client.get(f"gradio_api/call/get_item/{event.json()['event_id']}").text
    assert queue.events_recorded >= 3
    assert queue.cached_event_analytics_summary == {"functions": {}}


def _start_process(root, env) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, "-m", "benchsmith.cli", "annotate", "-w", str(root), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    line = process.stdout.readline()
    found = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
    assert found, f"annotator did not start: {line}{process.stdout.read() if process.poll() is not None else ''}"
    import httpx

    while True:
        try:
            if httpx.get(found.group(1), timeout=2).status_code == 200:
                return process, found.group(1)
        except httpx.HTTPError:
            assert process.poll() is None, "the annotator exited while starting"
            time.sleep(0.1)


def test_two_server_processes_on_one_store_serve_one_team(store_url, tmp_path):
    from gradio_client import Client

    root = tmp_path / "ws"
    workspace = _workspace(root, None if store_url.startswith("sqlite") else store_url)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("BENCHSMITH_ANNOTATOR_SECRET", None)  # the processes find their shared secret in the store
    processes = [_start_process(root, env) for _ in range(2)]
    clients = []
    try:
        (_, first), (_, second) = processes
        signed = _signed_in(first, TEAM[0])
        cookie = "; ".join(f"{name}={value}" for name, value in signed.cookies.items())
        # the cookie made by the first process is a session on the second
        import httpx

        assert httpx.get(f"{second}config", headers={"cookie": cookie}).status_code == 200
        assert httpx.get(f"{second}config").status_code == 401

        on_first = Client(first, headers={"cookie": cookie}, verbose=False)
        on_second = Client(second, headers={"cookie": cookie}, verbose=False)
        clients += [signed, on_first, on_second]
        saved = on_first.predict("item", "sample-001", 1, json.dumps({"stem": "첫 서버에서 고침"}), "", "",
                                 api_name="/save_item")
        assert saved["status"] == "saved"
        seen = on_second.predict("sample-001", api_name="/get_item")
        assert (seen["rev"], seen["item"]["stem"]) == (saved["rev"], "첫 서버에서 고침")

        # the same revision saved through both processes at once: one winner per item
        targets = ["sample-002", "sample-003", "sample-004"]
        barrier = threading.Barrier(2 * len(targets))

        def save(client, item_id: str, text: str) -> str:
            barrier.wait()
            return client.predict("item", item_id, 1, json.dumps({"stem": text}), "", "", api_name="/save_item")["status"]

        with ThreadPoolExecutor(2 * len(targets)) as pool:
            futures = {(item_id, side): pool.submit(save, client, item_id, f"{side} {item_id}")
                       for item_id in targets for side, client in (("first", on_first), ("second", on_second))}
        for item_id in targets:
            statuses = sorted(futures[(item_id, side)].result() for side in ("first", "second"))
            assert statuses == ["conflict", "saved"], item_id
            history = workspace.store.history(item_id)
            assert [revision.rev for revision in history] == [1, 2]
    finally:
        for client in clients:
            client.close()
        for process, _ in processes:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:  # uvicorn waiting on a client's open stream
                process.kill()
                process.wait(timeout=30)
        workspace.store.close()
