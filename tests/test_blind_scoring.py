"""Blind scoring over HTTP, as an expert (or anyone with a login) can call it: the order of an item's
responses comes from a per-workspace server secret, and nothing served to an expert — the page,
its config, every handler of the scoring and rationale tabs, the scripts' API, error messages —
names a model, the run or a task id. Annotators are refused the experts' agreement statistics."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import uuid

import pytest
from sqlalchemy import select

from annotator.review.tables import server_secrets

from . import blind_support as support

pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")
httpx = pytest.importorskip("httpx")


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory):
    """Two workspaces with identical data (each makes its own secret), each served."""
    root = tmp_path_factory.mktemp("blind")
    first, second = support.build(root / "one"), support.build(root / "two")
    with support.serving(first) as url_one, support.serving(second) as url_two:
        yield (url_one, first), (url_two, second)


class PageSession:
    """A logged-in browser session driven by raw HTTP: the page's own event calls (/run/predict
    with a dependency's fn_index and the session's server-side state) and the scripts' API."""

    def __init__(self, url: str, name: str):
        self.url = url
        self.http = httpx.Client(base_url=url, headers={"Origin": url.rstrip("/")}, timeout=60)
        login = self.http.post("login", data={"username": name, "password": support.PASSWORDS[name]})
        assert login.status_code == 200, login.text
        self.session_hash = uuid.uuid4().hex[:11]
        self.bodies: list[str] = []
        self.config = self.get("config").json()
        self.components = {c["id"]: c for c in self.config["components"]}

    def get(self, path: str) -> httpx.Response:
        response = self.http.get(path)
        self.bodies.append(response.text)
        return response

    def elem_id(self, component_id: int) -> str:
        return (self.components.get(component_id, {}).get("props") or {}).get("elem_id") or ""

    def handlers(self, *prefixes: str) -> list[dict]:
        """The dependencies triggered by a component whose elem_id starts with one of `prefixes`."""
        return [d for d in self.config["dependencies"]
                if any(self.elem_id(target).startswith(prefixes) for target, _ in d["targets"])]

    def handler(self, elem_id: str, event: str) -> dict:
        return next(d for d in self.config["dependencies"]
                    if any(self.elem_id(t) == elem_id and e == event for t, e in d["targets"]))

    def call(self, dependency: dict, values: dict[str, object] | None = None) -> httpx.Response:
        """Fire a page event: inputs from `values` by elem_id, else the component's value (state: None)."""
        values = values or {}
        data = []
        for component_id in dependency["inputs"]:
            component = self.components[component_id]
            elem = self.elem_id(component_id)
            data.append(values[elem] if elem in values else
                        None if component["type"] == "state" else (component.get("props") or {}).get("value"))
        response = self.http.post("gradio_api/run/predict", json={
            "data": data, "fn_index": dependency["id"], "session_hash": self.session_hash,
            "trigger_id": dependency["targets"][0][0], "event_data": None})
        self.bodies.append(response.text)
        return response

    def api(self, name: str, *args: object) -> str:
        """A scripts' endpoint through the plain HTTP API; the raw event stream it answers with."""
        event = self.http.post(f"gradio_api/call/{name}", json={"data": list(args)})
        assert event.status_code == 200, event.text
        stream = self.http.get(f"gradio_api/call/{name}/{event.json()['event_id']}").text
        self.bodies.append(stream)
        return stream

    def api_result(self, name: str, *args: object) -> dict:
        stream = self.api(name, *args)
        lines = stream.splitlines()
        complete = lines.index("event: complete")
        return json.loads(lines[complete + 1].removeprefix("data: "))[0]

    def close(self) -> None:
        self.http.close()


def _secret(workspace) -> bytes:
    with workspace.store.engine.connect() as conn:
        return bytes.fromhex(conn.execute(select(server_secrets.c.value)).scalar_one())


def _labels(session: PageSession, item: str) -> dict[str, str]:
    """label → model, read off the texts the expert is shown (the test knows which text is whose)."""
    whose = {support.response_text(item, model): model for model in support.MODELS}
    return {r["label"]: whose[r["rationale"]] for r in session.api_result("score_responses", item)["responses"]}


def test_the_order_comes_from_the_workspaces_secret_and_is_stable_per_expert(two_servers):
    (url_one, one), (url_two, two) = two_servers
    orders = {}
    for url, workspace in ((url_one, one), (url_two, two)):
        for expert in ("bob", "erin"):
            first, again = PageSession(url, expert), PageSession(url, expert)  # a reload: a new session
            orders[url, expert] = {item: _labels(first, item) for item in support.ITEMS}
            assert {item: _labels(again, item) for item in support.ITEMS} == orders[url, expert]
            first.close(), again.close()
            # the order is the HMAC of (secret, expert, item, task): computed here from its definition
            for item in support.ITEMS:
                def key(model, item=item, expert=expert, secret=_secret(workspace)):
                    message = f"{expert}\0{item}\0{support.task_id(item, model)}".encode()
                    return hmac.new(secret, message, hashlib.sha256).digest()
                expected = sorted(support.MODELS, key=key)
                assert [orders[url, expert][item][label] for label in "ABCD"] == expected
    assert _secret(one) != _secret(two)  # made by each workspace on first use
    for expert in ("bob", "erin"):
        assert orders[url_one, expert] != orders[url_two, expert]  # identical data, different secrets
    # per item and per expert: load order (the task ids) does not map to one label
    bob = orders[url_one, "bob"]
    assert len({tuple(labels.values()) for labels in bob.values()}) > 1
    assert bob != orders[url_one, "erin"]
    # the old order, sha256(expert, item) with no secret, is not what the expert sees
    import random

    def unsalted(item: str) -> list[str]:
        group = list(support.MODELS)
        random.Random(int.from_bytes(hashlib.sha256(f"bob\0{item}".encode()).digest()[:8], "big")).shuffle(group)
        return group

    assert any(list(bob[item].values()) != unsalted(item) for item in support.ITEMS)


def test_nothing_served_to_an_expert_names_a_model_the_run_or_a_task(two_servers):
    (url, workspace), _ = two_servers
    page = PageSession(url, "erin")
    page.get("")
    page.get("gradio_api/info")
    page.call(next(d for d in page.config["dependencies"] if any(e == "load" for _, e in d["targets"])))
    for tab in ("tab-score", "tab-rationale", "tab-stats"):
        assert page.call(page.handler(tab, "select")).status_code == 200, page.bodies[-1]
    assert "응답 A" in page.bodies[-3] and "응답 D" in page.bodies[-3]  # the scoring tab: all four, side by side
    # every handler of the two tabs, with scores chosen on every response shown
    scores = {f"score-{n}-{axis}": "4" for n in range(1, 7) for axis in ("factuality", "logic", "depth", "clarity")}
    for dependency in page.handlers("score-", "rationale-"):
        page.call(dependency, scores)
    save = page.handler("score-save", "click")
    saved = page.call(save, scores)
    assert saved.status_code == 200
    # a conflict: another tab of the same expert saves first
    other = PageSession(url, "erin")
    shown = page.call(page.handler("score-next", "click")).text
    item = support.ITEMS[int(re.search(r"<span>(\d+) / 5</span>", shown)[1]) - 1]  # one screen per item, in id order
    first = other.api_result("score_responses", item)["responses"][0]
    assert other.api_result("save_score", item, first["label"], first["rev"], 5, 5, 5, 5, "")["status"] == "saved"
    stale = other.api_result("save_score", item, first["label"], first["rev"], 1, 1, 1, 1, "")
    assert stale["status"] == "conflict"
    conflict = page.call(save, scores)
    assert "Saved elsewhere first" in conflict.text and f"응답 {first['label']}" in conflict.text
    other.api_result("get_item", support.DRAFTED, "item")
    other.api("save_score", item, "Q", 0, 1, 1, 1, 1, "")  # no such response: the error names no task
    bodies = page.bodies + other.bodies
    assert any(support.response_text(support.DRAFTED, support.MODELS[0]) in body for body in bodies)
    secret = _secret(workspace).hex()
    for body in bodies:
        for name in [*support.secrets_served(workspace), secret, "task-", "task_id"]:
            assert name not in body, (name, body[:2000])
    page.close(), other.close()


def test_an_admin_sees_who_drafted_the_rationale(two_servers):
    (url, workspace), _ = two_servers
    from annotator.review import claims

    for name in support.PASSWORDS:  # items the tests above opened are reserved: the tab would pass them over
        claims.release(workspace.store.engine, name)
    admin = PageSession(url, "alice")
    assert admin.api_result("get_item", support.DRAFTED, "item")["item"]["rationale"]["author"] == support.MODELS[0]
    admin.call(admin.handler("tab-rationale", "select"))
    assert f"rationale drafted by {support.MODELS[0]}" in admin.bodies[-1]
    admin.close()


def test_annotators_get_no_stats_and_no_scoring(two_servers):
    (url, _), _ = two_servers
    carol = PageSession(url, "carol")
    for elem_id, event in (("tab-stats", "select"), ("stats-refresh", "click")):
        refused = carol.call(carol.handler(elem_id, event))
        assert refused.status_code == 500 and "experts and admins only" in refused.text
        assert "agreement" not in refused.text.lower()
    assert "may not use the score queue" in carol.api("score_responses", "sample-001")
    assert "may not use the score queue" in carol.api("save_score", "sample-001", "A", 0, 3, 3, 3, 3, "")
    expert = PageSession(url, "bob")
    assert "Scoring agreement" in expert.call(expert.handler("tab-stats", "select")).text
    carol.close(), expert.close()
