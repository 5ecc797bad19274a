"""Model-using curation steps through the real runners against a real local HTTP server."""

import json

import pytest

from curation.steps.korea import KoreaLexicon
from curation.steps.model_steps import detect_korea, draft_rationales, paraphrase_items
from curation.steps.terms import missing_terms
from evaluation.generation import client_factory
from tests.fault_server import ServerConfig, ServerThread

from .conftest import run_cli
from .eval_support import seed_items


@pytest.fixture
def server():
    with ServerThread(ServerConfig(seed=3)) as running:
        yield running


def _client(workspace, server):
    return client_factory(f"openai-compatible:fake@{server.url}/v1", workspace)


def _items(workspace, n=12):
    seed_items(workspace, n_text=n, n_image=0)
    return [stored.item for stored in workspace.store.iter_items()]


def test_paraphrase_keeps_terms_retries_violations_and_keeps_the_original(workspace, server):
    items = _items(workspace)
    result = paraphrase_items(items, _client(workspace, server), max_tries=4)
    accepted = {i: item for i, item in result.changed.items() if item.paraphrase}
    assert accepted, "some paraphrases pass the term check"
    for item_id, item in accepted.items():
        original = next(i for i in items if i.id == item_id)
        assert item.paraphrase.original == original.stem and item.stem == original.stem
        assert missing_terms(original.stem, item.paraphrase.text) == []
        assert "paraphrase to review" in item.flags.review_reasons
    assert any(tries > 1 for tries in result.tries.values()), "the server drops a number on some seeds: retried"
    rejected = [item for item in result.changed.values() if not item.paraphrase]
    assert all(any("paraphrase rejected" in r for r in item.flags.review_reasons) for item in rejected)
    # a second run is served from the run log and cache: the server sees nothing new
    before = server.stats.requests
    again = paraphrase_items(items, _client(workspace, server), max_tries=4)
    assert server.stats.requests == before
    assert {k: v.paraphrase for k, v in again.changed.items()} == {k: v.paraphrase for k, v in result.changed.items()}


def test_llm_korea_detector_needs_a_reason_and_unites_with_the_lexicon(workspace, server):
    items = _items(workspace, 6)
    result = detect_korea(items, [_client(workspace, server)], KoreaLexicon())
    for item in result.changed.values():
        assert any(r.startswith("lexicon: 우리나라") for r in item.flags.korea_reasons)  # every stem says 우리나라
        llm = [r for r in item.flags.korea_reasons if r.startswith("llm ")]
        assert all(r.split(": ", 1)[1] for r in llm)  # a 'yes' always comes with its reason


def test_rationale_drafts_are_regenerated_until_they_reach_the_gold_answer(workspace, server):
    items = _items(workspace, 8)
    result = draft_rationales(items, _client(workspace, server), max_tries=6)
    for item_id, item in result.changed.items():
        assert item.rationale.status == "draft" and item.rationale.text
        assert f"try {result.tries[item_id]}" in item.rationale.notes
    assert set(result.changed) | set(result.failures) == {item.id for item in items}
    assert any(tries > 1 for tries in result.tries.values())


def test_paraphrase_command_writes_revisions_and_an_unreachable_server_is_one_line(workspace, server):
    _items(workspace, 4)
    done = run_cli("paraphrase", "-m", f"openai-compatible:fake@{server.url}/v1", "-w", str(workspace.root))
    assert done.returncode == 0, done.stderr
    history = [r.stage for r in workspace.store.history("eval-text-001")]
    assert history[-1] == "paraphrase"
    down = run_cli("rationale", "draft", "-m", "openai-compatible:fake@http://127.0.0.1:9/v1", "-w", str(workspace.root))
    assert down.returncode != 0 and "Traceback" not in down.stderr
    assert len(down.stderr.strip().splitlines()) == 1, down.stderr
    assert json.loads(run_cli("items", "stats", "--json", "-w", str(workspace.root)).stdout)["items"] == 4


def test_an_edited_item_is_paraphrased_again_and_only_it(workspace, server):
    items = _items(workspace, 6)
    paraphrase_items(items, _client(workspace, server), max_tries=1)
    before = server.stats.requests
    edited = items[2].model_copy(update={"stem": items[2].stem.replace("원인으로", "까닭으로")})
    again = paraphrase_items([*items[:2], edited, *items[3:]], _client(workspace, server), max_tries=1)
    assert server.stats.requests - before == 1  # the request key changed for the edited stem only
    assert again.changed[edited.id].paraphrase is None or again.changed[edited.id].paraphrase.original == edited.stem
