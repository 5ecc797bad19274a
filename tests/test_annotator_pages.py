"""The app's two pages (annotator/screens/pages.py): each page's HTML carries only its own components and
events, and the expert page, like the review page, is served to sessions only."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("gradio", reason="gradio is not installed (extra: annotator)")
httpx = pytest.importorskip("httpx")

from annotator.review import auth  # noqa: E402
from annotator.review.sample import load_sample  # noqa: E402
from curation.core.workspace import init_workspace  # noqa: E402

from .annotator_support import running_server  # noqa: E402

PASSWORD = "password-carol"
REVIEW_IDS = ("item-next", "korea-confirm", "rationale-save")  # one per review tab
EXPERT_PREFIXES = ("score-", "suspects-", "adjudicate-", "admin-", "stats", "tab-score", "tab-admin")
EXPERT_TITLES = ("전문가 채점", "Expert scoring", "의심 문항", "관리 · Admin", "통계 · Stats")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    workspace = init_workspace(tmp_path_factory.mktemp("pages") / "ws")
    load_sample(workspace)
    auth.add_user(workspace.store.engine, "carol", "annotator", PASSWORD)
    with running_server(workspace) as url:
        yield url


def page_config(html: str) -> dict:
    found = re.search(r"window\.gradio_config = (\{.*?\});\s*</script>", html, re.S)
    assert found, "the page embeds Gradio's config"
    return json.loads(found.group(1))


def elem_ids(config: dict) -> set[str]:
    return {c["props"]["elem_id"] for c in config["components"] if c.get("props", {}).get("elem_id")}


def test_the_review_page_serves_none_of_the_expert_pages_components(served):
    with httpx.Client(base_url=served, timeout=60) as http:
        assert http.post("login", data={"username": "carol", "password": PASSWORD}).status_code == 200
        review_html, expert_html = http.get(""), http.get("expert")
        whole = http.get("config").json()  # every page's components: what the one-page app served
    assert review_html.status_code == expert_html.status_code == 200
    review, expert = page_config(review_html.text), page_config(expert_html.text)

    review_ids, expert_ids = elem_ids(review), elem_ids(expert)
    assert set(REVIEW_IDS) <= review_ids and {"score-save", "admin-users", "adjudicate-apply"} <= expert_ids
    assert not [i for i in review_ids if i.startswith(EXPERT_PREFIXES)]
    assert not [i for i in expert_ids if i.startswith(("item-", "korea-", "rationale-"))]
    review_text = json.dumps(review, ensure_ascii=False)
    assert not [title for title in EXPERT_TITLES if title in review_text]
    assert {"whoami", "logout"} <= review_ids & expert_ids  # each page has its own header

    components = {c["id"] for c in review["components"]}, {c["id"] for c in expert["components"]}
    assert not components[0] & components[1]
    assert len(components[0]) + len(components[1]) == len(whole["components"])
    events = {d["id"] for d in review["dependencies"]}, {d["id"] for d in expert["dependencies"]}
    assert not events[0] & events[1] and len(events[0]) < len(whole["dependencies"])
    assert len(review_text) < len(json.dumps(whole, ensure_ascii=False))  # smaller than the whole app's


def test_the_expert_page_needs_a_session(served):
    with httpx.Client(base_url=served, timeout=60) as anonymous:
        refused = anonymous.get("expert")
        assert refused.status_code == 401 and "gradio_config" not in refused.text
        assert anonymous.get("expert/", follow_redirects=True).status_code == 401
        assert anonymous.post("login", data={"username": "carol", "password": PASSWORD}).status_code == 200
        assert anonymous.get("expert").status_code == 200  # an annotator's session gets the page (no tab on it)
        assert anonymous.post("logout").status_code == 200
        assert anonymous.get("expert").status_code == 401
