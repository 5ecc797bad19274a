"""The suspects' consensus on open items: a numeric key seeded wrong (17 where the right answer is
42), the three strongest of six models answering 42 on a local OpenAI-compatible server and the
weaker ones scattering; `analyze suspects` through the CLI names it first, with the answers by
value, and the Suspects queue fixes the key to the consensus answer."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import run_cli
from tests.fault_server import ServerConfig, ServerThread

ITEMS, MODELS, STRONG = 16, 6, (3, 4, 5)
MISKEYED, RIGHT, STORED = "q06", "42", "17"
WEAK_ANSWERS = {0: "30", 1: "31", 2: "32"}  # what the weaker models say on the mis-keyed item


def _numeric(n: int) -> bool:
    return n % 2 == 0


def right_answers() -> dict[str, int | str]:
    rng = np.random.default_rng(5)
    return {f"q{n:02d}": (str(10 + n) if _numeric(n) else int(rng.integers(1, 5))) for n in range(1, ITEMS + 1)}


def records() -> list[dict]:
    rows = []
    for item_id, right in right_answers().items():
        if isinstance(right, str):
            key = {"format": "numeric", "value": STORED if item_id == MISKEYED else right}
            rows.append({"id": item_id, "source": {"exam": "주관식 모의"}, "stem": f"[{item_id}] 값을 구하시오.",
                         "options": [], "answer": key, "points": 4})
        else:
            rows.append({"id": item_id, "source": {"exam": "주관식 모의"}, "stem": f"[{item_id}] 옳은 것은?",
                         "options": [{"text": f"{item_id} 보기 {k}"} for k in range(1, 5)], "answer": right})
    return rows


def responder(prompt: str, body: dict) -> str:
    """Model mK: stronger with K; right with a chance that falls with the item's number, else a
    wrong option or number (seeded by model and item). On the mis-keyed item the three strongest
    say the right answer, the others one value each."""
    right = right_answers()
    m = int(body["model"].rsplit("m", 1)[1])
    item_id = next(i for i in right if f"[{i}]" in prompt)
    n = int(item_id[1:])
    draw = np.random.default_rng([m, n])
    if item_id == MISKEYED:
        said = RIGHT if m in STRONG else WEAK_ANSWERS[m]
        return f"풀이 …\n\\boxed{{{said}}}"
    hit = draw.random() < 0.3 + 0.1 * m + 0.25 * (1 - n / ITEMS)
    answer = right[item_id]
    if isinstance(answer, str):
        return f"풀이 …\n\\boxed{{{answer if hit else int(answer) + 1 + int(draw.integers(0, 3))}}}"
    option = answer if hit else int((answer + draw.integers(0, 3)) % 4 + 1)
    return json.dumps({"정답": option})


@pytest.fixture
def suspected(tmp_path):
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records()), encoding="utf-8")
    done = run_cli("items", "import", str(pool), "-w", str(ws))
    assert done.returncode == 0, done.stderr
    with ServerThread(ServerConfig(responder=responder)) as server:
        specs = [x for m in range(MODELS) for x in ("-m", f"openai-compatible:m{m}@{server.url}/v1")]
        done = run_cli("run", *specs, "--no-progress", "-w", str(ws))
        assert done.returncode == 0, done.stderr
    done = run_cli("analyze", "suspects", "--json", "--bootstrap", "5", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    return ws, json.loads(done.stdout)


def test_strong_models_agreeing_on_another_value_put_a_numeric_key_in_doubt(suspected):
    _, result = suspected
    first = result["suspects"][0]
    assert first["item_id"] == MISKEYED
    assert (first["key_answer"], first["consensus_answer"], first["answer_format"]) == (STORED, RIGHT, "numeric")
    assert first["key"] is None and first["consensus_option"] is None and first["option_counts"] == {}
    assert first["answer_counts"] == {RIGHT: len(STRONG), **{said: 1 for said in WEAK_ANSWERS.values()}}
    assert first["key_wrong_posterior"] > 0.9
    assert any(f"the answer '{RIGHT}'" in reason and f"the key says '{STORED}'" in reason for reason in first["reasons"])


def test_the_suspects_queue_fixes_an_open_key_to_the_answer_given(suspected):
    from annotator.review.suspects import SuspectDesk, SuspectError
    from annotator.review.tables import ensure_tables
    from curation.core.workspace import open_workspace
    from scoring.keys import NumericKey

    ws, _ = suspected
    workspace = open_workspace(ws)
    ensure_tables(workspace.store.engine)
    desk = SuspectDesk(workspace.store, workspace.root)
    loaded = desk.file.load()
    assert loaded is not None
    rev = workspace.store.get(MISKEYED).rev
    with pytest.raises(SuspectError, match="is the key already"):
        desk.decide("rev", MISKEYED, rev, loaded.fingerprint, "fix_key", "strong models agree", STORED)
    with pytest.raises(SuspectError, match="not a numeric answer"):
        desk.decide("rev", MISKEYED, rev, loaded.fingerprint, "fix_key", "strong models agree", "마흔둘")
    outcome = desk.decide("rev", MISKEYED, rev, loaded.fingerprint, "fix_key", "strong models agree", RIGHT)
    stored = workspace.store.get(MISKEYED)
    assert outcome.rev == stored.rev == rev + 1
    assert stored.item.answer == NumericKey(value=RIGHT)
    assert stored.item.points == 4  # the rest of the item as it was


def test_the_suspects_tab_shows_an_open_items_answers_by_value_and_offers_them_as_the_new_key():
    from annotator.screens.suspects_tab import _key_choices, evidence_html
    from evaluation.filter_records import Suspect

    suspect = Suspect(item_id=MISKEYED, score=0.99, evidence=5.0, reasons=["consensus"], answer_format="numeric",
                      key_answer=STORED, consensus_answer=RIGHT, consensus_posterior=0.99,
                      answer_counts={RIGHT: 3, "30": 1}, answer_counts_strong={RIGHT: 2})
    html = evidence_html(suspect, 0, None)
    assert f'data-answer="{STORED}"' in html and f'data-answer="{RIGHT}"' in html and "data-option" not in html
    assert f"{RIGHT} (posterior 0.99)" in html
    assert _key_choices(suspect, 0) == [(RIGHT, RIGHT), ("30", "30")]
    choice = Suspect(item_id="c", score=0.5, evidence=1.0, reasons=["r"], key=1, consensus_option=2)
    assert _key_choices(choice, 4) == [(str(n), str(n)) for n in range(1, 5)]


def test_an_open_consensus_on_no_named_answer_is_said_so_not_an_index_error():
    """With only the key's answer given by name, the consensus reads a second code for "something
    else" (KMMMU's set and parts items: models wrong in ways no checker normalises to one value)."""
    from filtering.irt.suspects import _named

    assert _named(["ㄱ, ㄴ"], 1) == "the answer 'ㄱ, ㄴ'"
    assert _named(["ㄱ, ㄴ"], 2) == "an answer other than the key's (none given by name)"
