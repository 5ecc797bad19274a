"""Model-using curation steps through the real runners against a real local HTTP server."""

import json
import re

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
    rejected = {i: item for i, item in result.changed.items() if not item.paraphrase}
    assert set(rejected) == set(result.failures)  # every failure is reported and only failures are
    assert set(accepted) | set(rejected) == {item.id for item in items}
    for item_id, item in rejected.items():
        reason = f"paraphrase rejected after 4 tries ({result.failures[item_id]})"
        assert reason in item.flags.review_reasons
    # a second run is served from the run log and cache: the server sees nothing new
    before = server.stats.requests
    again = paraphrase_items(items, _client(workspace, server), max_tries=4)
    assert server.stats.requests == before
    assert {k: v.paraphrase for k, v in again.changed.items()} == {k: v.paraphrase for k, v in result.changed.items()}


def _planted_verdict(number: int) -> str:
    """The detector's answer planted per item number: yes with a reason, no, or yes without a reason."""
    kind = number % 3
    if kind == 0:
        return json.dumps({"korea_specific": True, "reason": f"planted reason {number}"}, ensure_ascii=False)
    if kind == 1:
        return json.dumps({"korea_specific": False, "reason": ""})
    return json.dumps({"korea_specific": True, "reason": ""})  # a 'yes' without a reason is invalid


def _korea_responder(prompt: str, body: dict) -> str:
    return _planted_verdict(int(re.search(r"문항 (\d+):", prompt).group(1)))


def test_llm_korea_detector_needs_a_reason_and_unites_with_the_lexicon(workspace):
    items = _items(workspace, 6)
    numbers = {item.id: int(item.id.rsplit("-", 1)[1]) for item in items}
    with ServerThread(ServerConfig(responder=_korea_responder)) as planted:
        model = _client(workspace, planted)
        result = detect_korea(items, [model], KoreaLexicon(), max_tries=3)
    said_yes = {item_id for item_id, n in numbers.items() if n % 3 == 0}
    no_reason = {item_id for item_id, n in numbers.items() if n % 3 == 2}
    assert len(said_yes) == 2 and len(no_reason) == 2  # items 3, 6 and 2, 5 of 1..6
    # every stem says 우리나라, so the lexicon marks every item and every item changes
    assert set(result.changed) == set(numbers)
    for item_id, item in result.changed.items():
        assert any(r.startswith("lexicon: 우리나라") for r in item.flags.korea_reasons)
        llm = [r for r in item.flags.korea_reasons if r.startswith("llm ")]
        expected = [f"llm {model.name}: planted reason {numbers[item_id]}"] if item_id in said_yes else []
        assert llm == expected, item_id
    # a 'yes' without a reason is retried and, never fixed, reported; nothing else fails
    assert result.failures == {f"{model.name}:{item_id}": "invalid verdict (no JSON, or yes without a reason)"
                               for item_id in no_reason}


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
