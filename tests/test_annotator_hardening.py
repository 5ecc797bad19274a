"""The review app against its own logged-in users, over HTTP to the real server on loopback
(issue 34, the security half): page state bounded per user, reservations only while editing,
Suspects held to assignments, no model name in an expert's rationale notes, size limits and
the Host check. Each test states the request that got through before and is refused now, and
checks the store is unchanged. Driven with the blind-scoring tests' raw page session, whose
workspace (users, models, the drafted rationale) these tests share."""

from __future__ import annotations

import json
import re
import time
import tomllib
import uuid
from pathlib import Path

import pytest
from sqlalchemy import func, select

from annotator.review import claims, queues
from annotator.review.tables import drafts, reservations, reviews, suspect_decisions
from curation.core.item import parse_item
from curation.core.store import revisions_table
from curation.core.workspace import CONFIG_NAME

from . import blind_support as support

pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")
httpx = pytest.importorskip("httpx")

from .test_blind_scoring import PageSession  # noqa: E402
from .test_suspects_queue import _write  # noqa: E402

BROWSED = [f"browse-{n:02d}" for n in range(60)]
SUSPECT = "s1"
# small page-session bounds, so that a flood passes them in a few hundred events
SETTINGS = "\n[annotator]\npage_sessions = 30\npage_sessions_per_user = 8\nreservations_per_user = 2\n"
BIG_STEM = "가" * 2_970_954  # the issue's 5 MB stem (UTF-8: 3 bytes a character)
LONG_STEM = "나" * 30_000  # under the request limit, past max_text_chars


def _record(item_id: str) -> dict:
    return {"id": item_id, "source": {"exam": "둘러보기 시험"}, "stem": f"{item_id} 문제",
            "options": [{"text": f"보기 {k}"} for k in range(1, 5)], "answer": 1}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    workspace = support.build(tmp_path_factory.mktemp("hardening") / "ws")
    config = workspace.root / CONFIG_NAME
    config.write_text(config.read_text(encoding="utf-8") + SETTINGS, encoding="utf-8")
    store = workspace.store
    store.save_items([parse_item(_record(i)) for i in [*BROWSED, "s2", "s3", SUSPECT]], author="test", stage="import")
    _write(workspace, {SUSPECT: 0.9, "s2": 0.5})
    queues.assign(store.engine, "suspects", ["erin"], 1, item_ids=[SUSPECT])
    # the drafted rationale's notes name its model, written by the model itself
    drafted = store.get(support.DRAFTED)
    store.update_fields(support.DRAFTED, {"rationale.notes": f"drafted by {support.MODELS[0]} ({support.RUN_ID})"},
                        expect_rev=drafted.rev, author=support.MODELS[0], stage="rationale-draft")
    with support.serving(workspace) as url:
        yield url, workspace


def written(workspace) -> dict[str, int]:
    with workspace.store.engine.connect() as conn:
        return {table.name: conn.execute(select(func.count()).select_from(table)).scalar_one()
                for table in (revisions_table, reviews, drafts, suspect_decisions, reservations)}


def held(workspace, user: str | None = None) -> list[str]:
    query = select(reservations.c.item_id).order_by(reservations.c.item_id)
    with workspace.store.engine.connect() as conn:
        return list(conn.execute(query if user is None else query.where(reservations.c.user == user)).scalars())


def load(page: PageSession) -> httpx.Response:
    """The page's load event: it opens the first tab (the item queue) on the user's next item."""
    return page.call(next(d for d in page.config["dependencies"] if any(e == "load" for _, e in d["targets"])))


def run(page: PageSession, api_name: str, *data: object) -> httpx.Response:
    """An event of the page by its api name (the item queue's moves), in the page's session."""
    response = page.http.post(f"gradio_api/run/{api_name}", json={"data": list(data), "session_hash": page.session_hash})
    page.bodies.append(response.text)
    return response


def next_item(page: PageSession) -> httpx.Response:
    return run(page, "item_next", None, [], "", "", "", "", "", "id")


def shown_item(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text[:300]
    return re.search(r'data-item=\\"([^"\\]+)', response.text).group(1)


def shown_values(page: PageSession, dependency: dict, response: httpx.Response) -> dict[str, object]:
    """elem_id → the value an event sent to each of its outputs (what the page then shows)."""
    values = {}
    for component_id, value in zip(dependency["outputs"], response.json()["data"], strict=False):
        if isinstance(value, dict):
            if "value" not in value:
                continue
            value = value["value"]
        if value is not None and page.elem_id(component_id):
            values[page.elem_id(component_id)] = value
    return values


def edit(page: PageSession, item_id: str, value: str) -> httpx.Response:
    """Open `item_id` in a new tab of the page's login (Find) and type `value` into its stem, as the page sends it."""
    page.session_hash = uuid.uuid4().hex[:11]
    assert shown_item(run(page, "item_first", None, [], "", "", "", "", item_id, "id")) == item_id
    typed = page.call(page.handler("item-stem", "input"), {"item-stem": value})
    assert typed.status_code == 200, typed.text[:300]
    return typed


def draft(page: PageSession, item_id: str, value: str, rev: int = 1, **extra: object) -> httpx.Response:
    body = {"queue": "item", "item_id": item_id, "rev": rev, "path": "stem", "value": value, **extra}
    return page.http.post("bs/draft", json=body, headers={"X-Benchsmith": "1"})


def release_all(workspace) -> None:
    for name in support.PASSWORDS:
        claims.release(workspace.store.engine, name)


# -- 1: one account cannot push another's page state out ------------------------------------

def test_a_flood_of_refused_and_new_page_events_leaves_another_users_page_working(served):
    url, workspace = served
    release_all(workspace)
    victim = PageSession(url, "dave")
    victim_load = next(d for d in victim.config["dependencies"] if any(e == "load" for _, e in d["targets"]))
    opened = victim.call(victim_load)
    assert opened.status_code == 200 and shown_item(opened)
    attacker = PageSession(url, "carol")  # another annotator, with a script
    stats = attacker.handler("tab-stats", "select")  # experts and admins only: refused to an annotator
    for _ in range(520):
        attacker.session_hash = uuid.uuid4().hex[:11]
        assert attacker.call(stats).status_code == 500
    assert "may not see the stats" in attacker.bodies[-1]
    for _ in range(40):  # and events that are served, each from a new page, past both bounds
        attacker.session_hash = uuid.uuid4().hex[:11]
        assert next_item(attacker).status_code == 200
    accepted = victim.call(victim.handler("item-accept", "click"), shown_values(victim, victim_load, opened))
    assert accepted.status_code == 200, accepted.text[:300]
    assert "Open an item first" not in accepted.text and "Saved as rev" in accepted.text
    victim.close(), attacker.close()


# -- 2: reservations only while a user edits -----------------------------------------------

def test_browsing_sixty_items_reserves_none_and_another_annotator_may_edit_them(served):
    url, workspace = served
    release_all(workspace)
    before = written(workspace)
    carol = PageSession(url, "carol")
    carol.get("")
    load(carol)
    shown = [shown_item(next_item(carol)) for _ in range(60)]
    carol.api_result("get_item", "browse-07", "item")
    assert len(set(shown)) == 60  # she walked sixty items
    assert held(workspace) == [] and written(workspace)["annot_edit_reservations"] == 0
    # another annotator edits and saves what carol merely looked at
    dave = PageSession(url, "dave")
    saved = dave.api_result("save_item", "item", "browse-59", 1, json.dumps({"stem": "dave 고침"}), "", "")
    assert saved["status"] == "saved", saved
    assert written(workspace)["annot_edit_reservations"] == before["annot_edit_reservations"]
    carol.close(), dave.close()


def test_an_edit_reserves_for_its_login_only_a_few_per_user_and_logout_releases_that_logins(served):
    url, workspace = served
    release_all(workspace)
    laptop, desktop, dave = PageSession(url, "carol"), PageSession(url, "carol"), PageSession(url, "dave")
    edit(laptop, "browse-01", "노트북에서 고침")
    edit(desktop, "browse-02", "데스크톱에서 고침")
    assert held(workspace, "carol") == ["browse-01", "browse-02"]
    refused = dave.api("save_item", "item", "browse-02", 1, json.dumps({"stem": "dave"}), "", "")
    assert "carol is editing it" in refused and "UTC" not in refused
    assert workspace.store.get("browse-02").rev == 1
    # a third edit: carol holds at most reservations_per_user (2), her oldest is released
    edit(desktop, "browse-03", "하나 더")
    assert held(workspace, "carol") == ["browse-02", "browse-03"]
    # logging out of the laptop releases what the laptop reserved, not the desktop's
    edit(laptop, "browse-04", "노트북")
    assert held(workspace, "carol") == ["browse-03", "browse-04"]
    assert laptop.http.post("logout").status_code == 200
    assert held(workspace, "carol") == ["browse-03"]
    # a decided item is never reserved
    assert dave.api_result("save_item", "item", "browse-05", 1, "{}", "accept", "")["status"] == "saved"
    edit(desktop, "browse-05", "결정된 문항")
    assert held(workspace, "carol") == ["browse-03"]
    # the page going away: its last edits kept as a draft, the item it showed left
    assert draft(desktop, "browse-03", "닫기 전에 고침").status_code == 200
    assert held(workspace, "carol") == []
    desktop.close(), dave.close()


def test_an_admin_may_break_a_reservation_and_the_break_is_recorded(served):
    url, workspace = served
    release_all(workspace)
    carol, dave, alice = PageSession(url, "carol"), PageSession(url, "dave"), PageSession(url, "alice")
    edit(carol, "browse-10", "carol 작업 중")
    assert "may not break a reservation" in dave.api("break_reservation", "item", "browse-10")
    assert held(workspace) == ["browse-10"]
    assert alice.api_result("break_reservation", "item", "browse-10") == {"released": "carol"}
    assert held(workspace) == []
    from annotator.review.tables import reservation_breaks

    with workspace.store.engine.connect() as conn:
        rows = conn.execute(select(reservation_breaks.c.queue, reservation_breaks.c.item_id,
                                   reservation_breaks.c.holder, reservation_breaks.c.by)).all()
    assert [tuple(r) for r in rows] == [("item", "browse-10", "carol", "alice")]
    saved = dave.api_result("save_item", "item", "browse-10", 1, json.dumps({"stem": "dave 고침"}), "", "")
    assert saved["status"] == "saved", saved
    carol.close(), dave.close(), alice.close()


# -- 3: the Suspects queue holds experts to its assignments -----------------------------------

def test_an_experts_keep_on_a_suspect_assigned_to_another_expert_is_refused_and_writes_nothing(served):
    url, workspace = served
    bob = PageSession(url, "bob")
    found = bob.call(bob.handler("suspects-find", "click"), {"suspects-search": SUSPECT})
    assert found.status_code == 200 and "not among the suspects" not in found.text
    before = written(workspace)
    kept = bob.call(bob.handler("suspects-keep", "click"))
    assert "assigned to erin" in kept.text and "Not saved" in kept.text
    assert written(workspace) == before
    erin = PageSession(url, "erin")  # its assignee decides it
    erin.call(erin.handler("suspects-find", "click"), {"suspects-search": SUSPECT})
    assert "유지 · Kept" in erin.call(erin.handler("suspects-keep", "click")).text
    with workspace.store.engine.connect() as conn:
        assert conn.execute(select(suspect_decisions.c.user)).scalars().all() == ["erin"]
    bob.close(), erin.close()


# -- 4: no model, run or author name in what an expert is served about a blind item ------------

def test_nothing_an_expert_is_served_on_the_rationale_tab_names_the_model_in_its_notes(served):
    url, workspace = served
    release_all(workspace)
    erin = PageSession(url, "erin")
    erin.get("")
    load(erin)
    tab = erin.handler("tab-rationale", "select")
    opened = erin.call(tab)
    assert opened.status_code == 200 and support.DRAFTED in shown_item(opened)
    for dependency in erin.handlers("rationale-"):  # every handler of the tab, Save and decisions included,
        erin.call(dependency, shown_values(erin, tab, erin.call(tab)))  # sent what the tab shows
    erin.api_result("get_item", support.DRAFTED, "rationale")
    assert any("drafted by ‹숨김 · hidden›" in body for body in erin.bodies)  # the notes are shown, scrubbed
    for body in erin.bodies:
        for name in support.secrets_served(workspace):
            assert name not in body, (name, body[:2000])
    stored = workspace.store.get(support.DRAFTED).item.to_record()
    assert stored["rationale"]["notes"].startswith(f"drafted by {support.MODELS[0]}")  # never overwritten
    erin.close()


# -- 5: size limits, the Host check, errors without internals --------------------------------

def test_a_five_megabyte_stem_is_refused_through_every_route_and_nothing_is_written(served):
    url, workspace = served
    release_all(workspace)
    carol = PageSession(url, "carol")
    load(carol)
    assert shown_item(run(carol, "item_first", None, [], "", "", "", "", "browse-20", "id")) == "browse-20"
    before, rev = written(workspace), workspace.store.get("browse-20").rev
    for stem, status in ((BIG_STEM, 413), (LONG_STEM, None)):
        api = carol.http.post("gradio_api/call/save_item", json={"data": [
            "item", "browse-20", rev, json.dumps({"stem": stem}, ensure_ascii=False), "", ""]})
        page = carol.call(carol.handler("item-save", "click"), {"item-stem": stem})
        relay = draft(carol, "browse-20", stem, rev)
        if status == 413:  # past the request limit: the gate refuses each before anything reads it
            assert (api.status_code, page.status_code, relay.status_code) == (413, 413, 413)
            assert all("너무 큽니다 · Too large" in r.json()["detail"] for r in (api, page, relay))
        else:  # under it, past max_text_chars: each route refuses it
            stream = carol.http.get(f"gradio_api/call/save_item/{api.json()['event_id']}").text
            assert "Too large: field 'stem' is 30,000 characters" in stream
            assert page.status_code == 200 and "Too large" in page.text, page.text[:500]  # said in the status line
            assert relay.status_code == 413 and "max_text_chars" in relay.json()["detail"]
        assert written(workspace) == before and workspace.store.get("browse-20").rev == rev
    carol.close()


def test_a_thirty_megabyte_upload_is_refused_and_a_small_one_served(served):
    url, _ = served
    carol = PageSession(url, "carol")
    big = carol.http.post("gradio_api/upload", files={"files": ("big.bin", b"\0" * (30 * 1024 * 1024))})
    assert big.status_code == 413 and "max_upload_mb" in big.json()["detail"]
    small = carol.http.post("gradio_api/upload", files={"files": ("small.txt", b"hello")})
    assert small.status_code == 200
    carol.close()


def test_a_foreign_host_header_is_refused(served):
    url, _ = served
    carol = PageSession(url, "carol")
    assert carol.http.get("config").status_code == 200
    for host in ("evil.example", "evil.example:80", "127.0.0.1.evil.example"):
        # a page on a name that resolves here (DNS rebinding): its own origin, so no cross-origin refusal
        refused = carol.http.get("config", headers={"Host": host, "Origin": f"http://{host}"})
        assert refused.status_code == 400 and "Host not allowed" in refused.json()["detail"], host
    port = url.rstrip("/").rsplit(":", 1)[1]
    local = {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}  # the page opened as localhost
    assert carol.http.get("config", headers=local).status_code == 200
    carol.close()


def test_a_bad_draft_is_refused_without_python_internals(served):
    url, workspace = served
    carol = PageSession(url, "carol")
    before = written(workspace)
    refused = carol.http.post("bs/draft", json={"item_id": "browse-30", "rev": 1, "path": "stem", "value": "x"},
                              headers={"X-Benchsmith": "1"})
    detail = refused.json()["detail"]
    assert refused.status_code == 400 and "Bad draft" in detail and "잘못된" in detail
    assert "'queue'" not in detail and "KeyError" not in detail
    assert written(workspace) == before
    carol.close()


def test_a_stop_does_not_wait_for_a_page_that_keeps_a_stream_open():
    """Ctrl-C or SIGTERM stops the server within its grace period even while a page holds a stream
    open (Gradio's queue keeps one per tab); uvicorn's default waits until every tab is closed."""
    import asyncio
    import socket
    import threading

    import uvicorn

    from annotator.web.server import GRACEFUL_STOP_S, uvicorn_config

    async def endless_stream(scope, receive, send):
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        while True:
            await send({"type": "http.response.body", "body": b"data: {}\n\n", "more_body": True})
            await asyncio.sleep(0.1)

    listener = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn_config(endless_stream))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    page = socket.create_connection(listener.getsockname())
    page.sendall(b"GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert b"200 OK" in page.recv(4096)  # the stream is open
    server.should_exit = True
    thread.join(timeout=GRACEFUL_STOP_S + 25)
    stopped = not thread.is_alive()
    page.close()
    listener.close()
    assert stopped, "the server was still waiting for the open stream"



def test_a_draft_whose_page_went_away_mid_body_is_dropped_without_an_error(served, caplog):
    import logging
    import socket
    from urllib.parse import urlsplit

    url, workspace = served
    carol = PageSession(url, "carol")
    before = written(workspace)
    cookies = "; ".join(f"{name}={value}" for name, value in carol.http.cookies.items())
    server_log = logging.getLogger("uvicorn.error")  # uvicorn's loggers do not reach the root logger
    server_log.addHandler(caplog.handler)
    try:
        address = urlsplit(url)
        with socket.create_connection((address.hostname, address.port)) as page:
            page.sendall(f"POST /bs/draft HTTP/1.1\r\nHost: {address.netloc}\r\nCookie: {cookies}\r\n"
                         f"Origin: {url.rstrip('/')}\r\nX-Benchsmith: 1\r\nContent-Type: application/json\r\n"
                         f"Content-Length: 400\r\n\r\n{{\"queue\": \"items\"".encode())
        time.sleep(1.0)  # the server reads on, finds the page gone
        assert carol.get("config").status_code == 200  # still serving
    finally:
        server_log.removeHandler(caplog.handler)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert written(workspace) == before
    carol.close()

# -- Gradio through its public settings; what still touches its internals is checked at start-up --

def test_the_server_refuses_to_start_on_a_gradio_without_what_its_page_sessions_use(tmp_path, monkeypatch):
    from gradio.state_holder import SessionState

    from annotator.web import session_states
    from annotator.web.server import create_server
    from curation.core.errors import BenchsmithError

    workspace = support.build(tmp_path / "ws")
    session_states.check_gradio()  # the installed Gradio has all of it
    monkeypatch.delattr(SessionState, "_update_config")  # as a Gradio that renamed it would be
    with pytest.raises(BenchsmithError, match=r"lacks .*SessionState\._update_config") as refused:
        create_server(workspace, local_mode=False)
    assert session_states.GRADIO_PIN in str(refused.value)
    pinned = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert session_states.GRADIO_PIN in pinned["project"]["optional-dependencies"]["annotator"]  # the pin it names


def test_the_queue_analytics_are_set_through_gradios_environment_only_while_the_app_is_built(tmp_path):
    import os

    from annotator.web.server import QUEUE_SETTINGS, create_server, gradio_app

    gate = create_server(support.build(tmp_path / "ws"), local_mode=False)
    queue = gradio_app(gate.app).get_blocks()._queue  # read back to check, never written
    assert all(name not in os.environ for name in QUEUE_SETTINGS)  # the process's environment is as it was
    assert gradio_app(gate.app).get_blocks().state_session_capacity == 500
    if not hasattr(queue, "ANALYTICS_MAX_EVENTS"):
        pytest.skip("this Gradio's queue keeps no analytics (before 6.25): nothing to bound")
    assert queue.ANALYTICS_MAX_EVENTS == int(QUEUE_SETTINGS["GRADIO_ANALYTICS_MAX_EVENTS"])


def test_the_limits_reservations_page_bounds_and_hosts_are_read_and_bad_ones_refused(tmp_path):
    from annotator.web.settings import read_settings
    from curation.core.errors import BenchsmithError

    config = tmp_path / CONFIG_NAME
    config.write_text("[annotator]\nmax_text_chars = 100\nmax_upload_mb = 2\nreservation_idle_minutes = 1.5\n"
                      "reservations_per_user = 1\npage_sessions_per_user = 4\nallowed_hosts = [\"review.lab\"]\n",
                      encoding="utf-8")
    settings = read_settings(config)
    assert (settings.limits.text_chars, settings.limits.upload_bytes, settings.limits.edit_bytes) == (
        100, 2 * 1024 * 1024, 256 * 1024)
    assert (settings.reservation_idle_s, settings.reservations_per_user, settings.page_sessions_per_user) == (90, 1, 4)
    assert settings.hosts("0.0.0.0") == {"review.lab"}
    assert read_settings(tmp_path / "none.toml").hosts("10.1.2.3") == {"127.0.0.1", "localhost", "::1", "10.1.2.3"}
    import socket

    assert socket.gethostname().lower() in read_settings(tmp_path / "none.toml").hosts("0.0.0.0")
    for bad in ("max_text_chars = 0", "max_edit_kb = 1.5", "reservations_per_user = -1", 'allowed_hosts = "x"'):
        config.write_text(f"[annotator]\n{bad}\n", encoding="utf-8")
        with pytest.raises(BenchsmithError, match=bad.split()[0]):
            read_settings(config)
