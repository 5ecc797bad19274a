"""The annotator attacked over HTTP, as someone on the same machine would (issue 25, holes 1, 4
and 6): the request that got through before is refused or harmless now, and writes nothing.

Each test uses its own users and its own client address (127.0.0.N: all of 127/8 is this
machine), so the login backoff one test provokes does not touch another."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")
httpx = pytest.importorskip("httpx")

from sqlalchemy import func, select  # noqa: E402

from annotator.review import auth  # noqa: E402
from annotator.review.sample import load_sample  # noqa: E402
from annotator.review.tables import drafts, expert_scores, reviews, sessions  # noqa: E402
from annotator.web import throttle  # noqa: E402
from curation.core.item import parse_item  # noqa: E402
from curation.core.store import revisions_table  # noqa: E402
from curation.core.workspace import CONFIG_NAME, init_workspace  # noqa: E402

from .annotator_support import running_server  # noqa: E402
from .conftest import run_cli  # noqa: E402

ROLES = {"alice": "admin", "bob": "expert", "carol": "annotator", "dave": "annotator", "erin": "annotator",
         "frank": "annotator", "gina": "annotator", "hana": "expert"}
PASSWORDS = {name: f"password-{name}" for name in ROLES}
# names only a session may learn: the users above and these exam and subject names
EXAM, SUBJECT = "비밀시험-기상기사", "비밀과목-대기역학"
FOREIGN = "http://127.0.0.1:1"  # a page on another port of this machine
# long backoff waits, so that no test depends on how fast it runs
LONG_BACKOFF = "\n[annotator]\nlogin_backoff_seconds = 600\n"


def _workspace(root: Path, config: str = ""):
    workspace = init_workspace(root)
    if config:
        path = root / CONFIG_NAME
        path.write_text(path.read_text(encoding="utf-8") + config, encoding="utf-8")
    load_sample(workspace)
    secret = {"id": "secret-001", "source": {"exam": EXAM, "subject": SUBJECT}, "stem": "문제",
              "options": [{"text": "보기 1"}, {"text": "보기 2"}], "answer": 1}
    workspace.store.save_items([parse_item(secret)], author="test", stage="import")
    for name, role in ROLES.items():
        auth.add_user(workspace.store.engine, name, role, PASSWORDS[name])
    return workspace


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    workspace = _workspace(tmp_path_factory.mktemp("security") / "ws", LONG_BACKOFF)
    with running_server(workspace) as url:
        yield url, workspace


def client(url: str, address: str) -> httpx.Client:
    """An HTTP client connecting from `address` (127.0.0.N), i.e. one client as the server sees it."""
    return httpx.Client(base_url=url, transport=httpx.HTTPTransport(local_address=address), timeout=60)


def log_in(http: httpx.Client, name: str, password: str | None = None) -> httpx.Response:
    return http.post("login", data={"username": name, "password": PASSWORDS[name] if password is None else password})


def written(workspace) -> dict[str, int]:
    """Row counts of everything a review writes: revisions, decisions, drafts, scores."""
    with workspace.store.engine.connect() as conn:
        return {table.name: conn.execute(select(func.count()).select_from(table)).scalar_one()
                for table in (revisions_table, reviews, drafts, expert_scores)}


def session_rows(workspace, name: str) -> int:
    with workspace.store.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(sessions).where(sessions.c.user == name)).scalar_one()


def secrets_in(text: str) -> list[str]:
    return [word for word in (*ROLES, EXAM, SUBJECT) if word in text]


# -- hole 1: nothing about users or items without a session; backoff, not a lock ----------

def test_without_a_session_nothing_names_a_user_an_exam_or_a_subject(app):
    url, workspace = app
    before = written(workspace)
    with client(url, "127.0.0.2") as anonymous, client(url, "127.0.0.2") as signed_in:
        page = anonymous.get("")
        assert page.status_code == 200 and "password" in page.text  # the login page
        assert secrets_in(page.text) == []  # it used to embed every assignee, exam and subject
        assert log_in(signed_in, "carol").status_code == 200
        app_page = signed_in.get("")
        assert set(secrets_in(app_page.text)) >= {EXAM, SUBJECT, "alice", "dave"}  # the app itself has them
        assets = sorted(set(re.findall(r'(?:assets|static)/[^"\'\s>]+', app_page.text)))
        assert assets, "the app page loads Gradio's assets"
        for path in ("config", "info", "gradio_api/info", "gradio_api/config", "gradio_api/openapi.json", "openapi.json",
                     "theme.css", "favicon.ico", "manifest.json", "gradio_api/app_id", "gradio_api/token",
                     "gradio_api/user", "gradio_api/queue/status", "gradio_api/startup-events", "docs",
                     "gradio_api/file=benchsmith.toml", "bs/blob/" + "0" * 64 + ".png", "bs/page/" + "0" * 64 + "/1",
                     *assets):
            response = anonymous.get(path)
            assert response.status_code == 401 and secrets_in(response.text) == [], path
        for path, body in (("gradio_api/call/get_item", {"data": ["secret-001"]}),
                           ("gradio_api/call/save_item", {"data": ["item", "secret-001", 1, "{}", "accept", ""]}),
                           ("gradio_api/run/predict", {"data": [], "fn_index": 0}),
                           ("gradio_api/queue/join", {"data": [], "fn_index": 0, "session_hash": "x"})):
            response = anonymous.post(path, json=body)
            assert response.status_code == 401 and secrets_in(response.text) == [], path
    assert written(workspace) == before


def test_one_client_spraying_names_is_slowed_down_whatever_names_it_tries(app):
    url, workspace = app
    with client(url, "127.0.0.1") as sprayer:  # the address uvicorn would take X-Forwarded-For from by default
        # each try claims another address in X-Forwarded-For: the server does not believe it
        statuses = [sprayer.post("login", data={"username": f"guess{n}", "password": "wrong-password"},
                                 headers={"X-Forwarded-For": f"10.0.0.{n}"}).status_code for n in range(20)]
        assert statuses == [400] * throttle.FREE_TRIES + [429] * (20 - throttle.FREE_TRIES)
        refused = log_in(sprayer, "gina")  # a real user's right password, from the client that sprayed
        assert refused.status_code == 429 and "try again in" in refused.json()["detail"]
        assert int(refused.headers["retry-after"]) > 0 and "set-cookie" not in refused.headers
    with client(url, "127.0.0.4") as elsewhere:  # another client is not slowed down by it
        assert log_in(elsewhere, "gina").status_code == 200


def test_spraying_the_admin_name_does_not_keep_the_admin_out(app):
    url, workspace = app
    with client(url, "127.0.0.5") as attacker:
        statuses = [log_in(attacker, "alice", f"guess-{n}").status_code for n in range(10)]
        assert statuses == [400] * throttle.FREE_TRIES + [429] * (10 - throttle.FREE_TRIES)
        assert log_in(attacker, "alice").status_code == 429  # even the right password, from this client
    with client(url, "127.0.0.6") as second:  # a second guessing client gets one try, then the name's backoff
        assert [log_in(second, "alice", "guess").status_code for _ in range(2)] == [400, 429]
    with client(url, "127.0.0.7") as admin:  # the admin's own browser has not failed: straight in
        assert log_in(admin, "alice").status_code == 200
        assert admin.get("config").status_code == 200


def test_users_unlock_clears_a_name_backoff(app):
    url, workspace = app
    with client(url, "127.0.0.8") as typo:
        assert [log_in(typo, "dave", "typo").status_code for _ in range(throttle.FREE_TRIES)] == [400] * throttle.FREE_TRIES
        assert log_in(typo, "dave").status_code == 429
        done = run_cli("users", "unlock", "dave", "-w", str(workspace.root))
        assert done.returncode == 0, done.stderr
        assert f"{throttle.FREE_TRIES} failed logins forgotten" in done.stdout
        assert log_in(typo, "dave").status_code == 200


# -- hole 4: sessions end with a new password, deactivation, logout and idle time ---------

def test_a_password_reset_ends_the_users_sessions(app):
    url, workspace = app
    with client(url, "127.0.0.9") as old, client(url, "127.0.0.9") as other_browser:
        assert log_in(old, "erin").status_code == 200 and log_in(other_browser, "erin").status_code == 200
        assert old.get("config").status_code == 200 and session_rows(workspace, "erin") == 2
        reset = subprocess.run([sys.executable, "-m", "benchsmith.cli", "users", "add", "erin", "--role", "annotator",
                                "--replace", "--password-stdin", "-w", str(workspace.root)],
                               input="new-password-erin\n", capture_output=True, text=True, timeout=300)
        assert reset.returncode == 0, reset.stderr
        for browser in (old, other_browser):  # the old cookies used to read /config still
            assert browser.get("config").status_code == 401
            assert browser.post("gradio_api/call/get_item", json={"data": ["secret-001"]}).status_code == 401
        assert session_rows(workspace, "erin") == 0
        assert log_in(old, "erin").status_code == 400  # the old password
        assert log_in(old, "erin", "new-password-erin").status_code == 200


def test_a_deactivated_user_is_signed_out_and_cannot_log_in(app):
    url, workspace = app
    before = written(workspace)
    with client(url, "127.0.0.10") as frank:
        assert log_in(frank, "frank").status_code == 200
        done = run_cli("users", "deactivate", "frank", "-w", str(workspace.root))
        assert done.returncode == 0, done.stderr
        assert frank.get("config").status_code == 401
        save = frank.post("gradio_api/call/save_item", json={"data": ["item", "secret-001", 1, "{}", "accept", ""]})
        assert save.status_code == 401 and session_rows(workspace, "frank") == 0
        assert log_in(frank, "frank").status_code == 400
        assert "frank\tannotator\tdeactivated" in run_cli("users", "list", "-w", str(workspace.root)).stdout
        assert written(workspace) == before
        assert run_cli("users", "activate", "frank", "-w", str(workspace.root)).returncode == 0
        assert log_in(frank, "frank").status_code == 200 and frank.get("config").status_code == 200


def test_logout_is_a_post_from_the_app_and_ends_the_session(app):
    url, workspace = app
    with client(url, "127.0.0.11") as hana:
        assert log_in(hana, "hana").status_code == 200
        assert hana.get("logout").status_code == 405  # what <img src=/logout> sends
        assert hana.post("logout", headers={"Origin": FOREIGN}).status_code == 403  # a form on another site
        assert hana.get("config").status_code == 200 and session_rows(workspace, "hana") == 1
        token = hana.cookies["bs-session"]
        from annotator.review import claims
        from annotator.web.sessions import session_id

        engine = workspace.store.engine
        claims.reserve(engine, "hana", "item", "secret-001", session=session_id(token))  # an item she was editing
        assert claims.holder(engine, "item", "secret-001").user == "hana"
        done = hana.post("logout", headers={"Origin": url.rstrip("/")})
        assert done.status_code == 200 and "Max-Age=0" in done.headers["set-cookie"]
        assert session_rows(workspace, "hana") == 0
        assert claims.holder(engine, "item", "secret-001") is None  # logging out releases what that login held
        with client(url, "127.0.0.11") as replay:  # the old cookie, kept by someone, is worth nothing
            replay.cookies.set("bs-session", token)
            assert replay.get("config").status_code == 401


def test_sessions_expire_after_the_idle_time_set_in_benchsmith_toml(tmp_path):
    workspace = _workspace(tmp_path / "ws", LONG_BACKOFF + "session_idle_minutes = 0.02\n")  # 1.2 s
    with running_server(workspace) as url, client(url, "127.0.0.12") as bob:
        assert log_in(bob, "bob").status_code == 200 and bob.get("config").status_code == 200
        time.sleep(2.0)  # longer than the idle time, no request meanwhile
        assert bob.get("config").status_code == 401
        assert session_rows(workspace, "bob") == 0  # the ended session's row is gone


def test_sessions_end_with_the_password_deactivation_idle_time_and_logout_on_both_stores(store_url):
    from annotator.review.tables import ensure_tables
    from annotator.web.sessions import Sessions
    from curation.core.store import Store

    engine = Store(store_url, create=True).engine
    ensure_tables(engine)
    auth.add_user(engine, "kim", "annotator", "password-kim")
    live = Sessions(engine, idle_s=3600, max_s=7200)
    token = live.start("kim")
    assert live.user(token) == "kim" and live.user(token + "x") is None
    auth.add_user(engine, "kim", "annotator", "password-kim-2", replace=True)
    assert live.user(token) is None
    token = live.start("kim")
    auth.set_active(engine, "kim", False)
    assert live.user(token) is None
    auth.set_active(engine, "kim", True)
    token = live.start("kim")
    live.end(token)
    assert live.user(token) is None
    token = live.start("kim")
    with engine.begin() as conn:  # an hour and a second without a request
        conn.execute(sessions.update().values(seen_at=sessions.c.seen_at - 3601))
    assert live.user(token) is None
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(sessions)).scalar_one() == 0


def test_the_annotator_settings_are_read_and_bad_ones_refused(tmp_path):
    from annotator.web.settings import read_settings
    from curation.core.errors import BenchsmithError

    config = tmp_path / CONFIG_NAME
    config.write_text("[annotator]\nsession_idle_minutes = -1\n", encoding="utf-8")
    with pytest.raises(BenchsmithError, match="session_idle_minutes must be a positive number"):
        read_settings(config)
    config.write_text("[annotator]\nsession_max_hours = 2\nlogin_backoff_seconds = 0.5\n", encoding="utf-8")
    settings = read_settings(config)
    assert (settings.session_idle_s, settings.session_max_s, settings.login_backoff_s) == (12 * 3600, 7200, 0.5)
    assert read_settings(config, session_idle_minutes=5).session_idle_s == 300


# -- hole 6: cross-origin requests refused, no CORS for other origins, SameSite cookies ----

def test_requests_from_another_origin_are_refused_and_write_nothing(app):
    url, workspace = app
    own = url.rstrip("/")
    before = written(workspace)
    with client(url, "127.0.0.13") as bob:
        logged_in = log_in(bob, "bob")
        cookie = logged_in.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "SameSite=none" not in cookie.lower()
        read = bob.get("config", headers={"Origin": FOREIGN})  # a page on another port reading /config
        assert read.status_code == 403 and "access-control-allow-origin" not in read.headers
        preflight = bob.options("gradio_api/call/save_item", headers={
            "Origin": FOREIGN, "Access-Control-Request-Method": "POST"})
        assert preflight.status_code == 403 and "access-control-allow-credentials" not in preflight.headers
        save = {"data": ["item", "sample-001", 1, json.dumps({"stem": "바뀐 문제"}), "reject", "CSRF"]}
        draft = {"queue": "item", "item_id": "sample-001", "rev": 1, "path": "stem", "value": "바뀐 문제"}
        forged = [("gradio_api/call/save_item", {"Origin": FOREIGN}, save),
                  ("gradio_api/call/save_item", {"Referer": FOREIGN + "/attack.html"}, save),  # no Origin
                  ("gradio_api/call/save_item", {"Origin": "null"}, save),  # a sandboxed frame
                  ("gradio_api/queue/join", {"Origin": FOREIGN}, {"data": [], "fn_index": 0, "session_hash": "x"}),
                  ("gradio_api/run/predict", {"Origin": FOREIGN}, {"data": [], "fn_index": 0}),
                  ("bs/draft", {"Origin": FOREIGN, "X-Benchsmith": "1"}, draft)]
        for path, headers, body in forged:
            response = bob.post(path, headers=headers, json=body)
            assert response.status_code == 403, (path, headers)
            assert "access-control-allow-origin" not in response.headers
        with client(url, "127.0.0.14") as forger:
            login = forger.post("login", data={"username": "bob", "password": PASSWORDS["bob"]},
                                headers={"Origin": FOREIGN})
        assert login.status_code == 403 and "set-cookie" not in login.headers  # login CSRF
        assert written(workspace) == before and workspace.store.get("sample-001").rev == 1

        # the same call from the app's own page goes through, without CORS headers
        own_call = bob.post("gradio_api/call/get_item", headers={"Origin": own}, json={"data": ["sample-001"]})
        assert own_call.status_code == 200 and "event_id" in own_call.json()
        assert "access-control-allow-origin" not in own_call.headers
