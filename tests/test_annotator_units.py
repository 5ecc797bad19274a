"""Users and logins, scoring tasks and scores, the LaTeX preview, the CLI's refusals."""

import math

import pytest

from annotator.review import auth, blinding, scoring, stats
from annotator.review.sample import MODEL_RATIONALES, load_sample, sample_scoring
from annotator.review.tables import ensure_tables
from annotator.screens.preview import LITERAL_DOLLAR, to_markdown
from curation.core.errors import ConflictError

from .conftest import run_cli


@pytest.fixture
def engine(workspace):
    ensure_tables(workspace.store.engine)
    return workspace.store.engine


def test_passwords_are_salted_scrypt_and_checked(engine):
    auth.add_user(engine, "김연구", "expert", "correct horse")
    stored = auth.hash_password("correct horse")
    assert stored.startswith("scrypt$") and "correct horse" not in stored and stored != auth.hash_password("correct horse")
    assert auth.check_login(engine, "김연구", "correct horse")
    assert not auth.check_login(engine, "김연구", "wrong password")
    assert not auth.check_login(engine, "nobody", "correct horse")
    auth.set_active(engine, "김연구", False)
    assert not auth.check_login(engine, "김연구", "correct horse")  # deactivated
    auth.set_active(engine, "김연구", True)
    assert auth.check_login(engine, "김연구", "correct horse")


def test_login_backoff_doubles_per_client_and_spares_clients_that_have_not_failed(store_url):
    from annotator.web.throttle import LoginThrottle, backoff_message, unlock
    from curation.core.store import Store

    engine = Store(store_url, create=True).engine
    ensure_tables(engine)
    throttle, t0 = LoginThrottle(engine), 1_000_000.0
    for n in range(5):  # five free failures from one client, on five names
        assert throttle.wait_s(f"name{n}", "10.0.0.1", at=t0 + n) is None
        throttle.record(f"name{n}", "10.0.0.1", False, at=t0 + n)
    # the fifth failure (at t0+4) makes the client wait 1 s, whatever name it tries next
    assert throttle.wait_s("anyone", "10.0.0.1", at=t0 + 4.25) == pytest.approx(0.75)
    assert throttle.wait_s("anyone", "10.0.0.1", at=t0 + 5.5) is None
    throttle.record("anyone", "10.0.0.1", False, at=t0 + 5.5)  # the sixth: 2 s
    assert throttle.wait_s("anyone", "10.0.0.1", at=t0 + 6.5) == pytest.approx(1.0)

    for n in range(6):  # six failures on "admin", one from each of six clients
        throttle.record("admin", f"10.0.1.{n}", False, at=t0 + 10 + n)
    # a client that failed on admin waits 2 s after the last failure; one that has not goes on
    assert throttle.wait_s("admin", "10.0.1.0", at=t0 + 16) == pytest.approx(1.0)
    assert throttle.wait_s("admin", "10.0.9.9", at=t0 + 16) is None
    throttle.record("admin", "10.0.9.9", True, at=t0 + 16)  # the admin got in: the name's count restarts
    assert throttle.wait_s("admin", "10.0.1.0", at=t0 + 16.5) is None
    assert throttle.wait_s("anyone", "10.0.0.1", at=t0 + 15 * 60 + 10) is None  # the window passed

    throttle.record("anyone", "10.0.0.1", False, at=t0 + 7)
    assert unlock(engine, "anyone") == 2 and unlock(engine, client="10.0.0.1") == 5
    assert throttle.wait_s("anyone", "10.0.0.1", at=t0 + 7.5) is None
    assert "30 seconds" in backoff_message(30) and "5 minutes" in backoff_message(300)


@pytest.mark.parametrize(("name", "role", "password", "message"), [
    ("alice", "boss", "password-1", "role"),
    ("alice", "admin", "short", "too short"),
    ("../x", "admin", "password-1", "user name"),
])
def test_bad_users_are_refused(engine, name, role, password, message):
    with pytest.raises(auth.AuthError, match=message):
        auth.add_user(engine, name, role, password)
    assert auth.list_users(engine) == []


def test_rationales_load_once_and_experts_see_them_blind_in_their_own_order(workspace, engine, tmp_path):
    load_sample(workspace)
    rationales, judge = sample_scoring()
    assert scoring.load_rationales(engine, rationales, set(workspace.store.ids())).added == 3
    assert scoring.load_rationales(engine, rationales).unchanged == 3
    tasks = scoring.tasks(engine)
    secret = blinding.workspace_secret(engine)
    assert blinding.workspace_secret(engine) == secret and len(secret) == 32  # made once, kept
    experts = [f"e{n}" for n in range(1, 9)]
    orders = {expert: [t.model for t in scoring.blind_order(tasks, expert, secret)] for expert in experts}
    assert all(sorted(order) == sorted(MODEL_RATIONALES) for order in orders.values())
    assert len({tuple(order) for order in orders.values()}) > 1  # shuffled per expert
    assert orders["e1"] == [t.model for t in scoring.blind_order(tasks, "e1", secret)]  # stable
    # another key gives other orders: without the workspace's secret the order cannot be recomputed
    other = [[t.model for t in scoring.blind_order(tasks, expert, b"another secret")] for expert in experts]
    assert other != list(orders.values())


def test_blind_labels_run_past_z():
    assert [blinding.label(n) for n in (0, 1, 25, 26, 27, 51, 52)] == ["A", "B", "Z", "AA", "AB", "AZ", "BA"]


def test_rationales_of_unknown_items_and_missing_verdicts_are_reported(workspace, engine):
    load_sample(workspace)
    tasks, verdicts = sample_scoring()
    stranger = scoring.RationaleTask("no-such-item", "m", "풀이", "run")
    report = scoring.load_rationales(engine, [*tasks, stranger], set(workspace.store.ids()))
    assert report.added == 3 and report.errors == ["item 'no-such-item' is not in the store"]
    missing = verdicts[0].model_copy(update={"status": "missing", "scores": None})
    judged = scoring.load_judge(engine, [missing, *verdicts[1:]])
    assert judged.added == 2 and "missing" in judged.errors[0]


def test_scores_are_validated_and_compare_and_swap(workspace, engine, tmp_path):
    load_sample(workspace)
    rationales, judge = sample_scoring()
    scoring.load_rationales(engine, rationales)
    task = scoring.tasks(engine)[0]
    values = {"factuality": 5, "logic": 4, "depth": 3, "clarity": "4"}
    with pytest.raises(scoring.ScoringError, match="not a score 1–5"):
        scoring.save_score(engine, task.id, "e1", {**values, "depth": 6}, "", 0)
    assert scoring.save_score(engine, task.id, "e1", values, "좋음", 0) == 1
    with pytest.raises(ConflictError):
        scoring.save_score(engine, task.id, "e1", values, "다른 탭", 0)
    assert scoring.get_score(engine, task.id, "e1").comment == "좋음"


def test_stats_agreement_between_experts_and_with_the_judge(workspace, engine, tmp_path):
    load_sample(workspace)
    rationales, judge = sample_scoring()
    scoring.load_rationales(engine, rationales)
    for n, task in enumerate(scoring.tasks(engine)):
        for expert, shift in (("e1", 0), ("e2", 1 if n == 0 else 0)):
            scoring.save_score(engine, task.id, expert, {a: 2 + n + (shift if a == "logic" else 0) for a in scoring.AXES}, "", 0)
    rows = {(r.raters, r.axis): r for r in stats.agreement_rows(engine)}
    assert rows[("experts", "factuality")].alpha_interval == pytest.approx(1.0)
    assert rows[("experts", "logic")].alpha_interval < 1.0 and rows[("experts", "logic")].units == 3
    assert ("experts + judge", "factuality") not in rows
    scoring.load_judge(engine, judge)
    rows = {(r.raters, r.axis): r for r in stats.agreement_rows(engine)}
    assert not math.isnan(rows[("experts + judge", "factuality")].icc_2_1)
    assert [r["decided"] for r in stats.progress_rows(engine) if r["queue"] == "score"] == [3, 3]


@pytest.mark.parametrize(("text", "expected"), [
    ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
    ("기온 $T_d < T$", "기온 $T_d &lt; T$"),
    ("비용 \\$5 와 $x^2$", f"비용 {LITERAL_DOLLAR}5 와 $x^2$"),
    ("lone $ sign", f"lone {LITERAL_DOLLAR} sign"),
    ("\\(\\frac{a}{b}\\) *강조* # 제목", "\\(\\frac{a}{b}\\) \\*강조\\* \\# 제목"),
    ("[3점] [ I = 3000 / t ] a\\b", "&#91;3점&#93; &#91; I = 3000 / t &#93; a&#92;b"),
])
def test_preview_escapes_text_and_keeps_math(text, expected):
    assert to_markdown(text) == expected


def test_serving_a_public_host_without_users_is_refused(workspace):
    result = run_cli("annotate", "-w", str(workspace.root), "--host", "0.0.0.0", "--port", "7999")
    assert result.returncode == 1 and "refusing to serve on 0.0.0.0 with no users" in result.stderr


def test_users_cli_adds_with_a_password_from_stdin(workspace):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "benchsmith.cli", "users", "add", "kim", "--role", "expert",
                           "--password-stdin", "-w", str(workspace.root)], input="password-kim\n",
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    listed = run_cli("users", "list", "-w", str(workspace.root))
    assert "kim\texpert" in listed.stdout
    again = subprocess.run([sys.executable, "-m", "benchsmith.cli", "users", "add", "kim", "--role", "expert",
                            "--password-stdin", "-w", str(workspace.root)], input="password-kim\n",
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "exists" in again.stderr


def test_guidelines_start_from_the_shipped_default_and_refuse_bad_input(tmp_path):
    from annotator.review.guidelines import DEFAULTS, MAX_CHARS, read_guidelines, write_guidelines
    from curation.core.errors import BenchsmithError

    assert read_guidelines(tmp_path, "korea") == (DEFAULTS / "korea.md").read_text(encoding="utf-8")
    write_guidelines(tmp_path, "korea", "### 우리 팀 지침")
    assert read_guidelines(tmp_path, "korea") == "### 우리 팀 지침"
    assert read_guidelines(tmp_path, "item") == (DEFAULTS / "item.md").read_text(encoding="utf-8")
    with pytest.raises(BenchsmithError, match="at most"):
        write_guidelines(tmp_path, "korea", "x" * (MAX_CHARS + 1))
    assert read_guidelines(tmp_path, "korea") == "### 우리 팀 지침"  # the refused text changed nothing
    with pytest.raises(BenchsmithError, match="queue 'nope'"):
        read_guidelines(tmp_path, "nope")


def test_progress_keeps_the_queue_size_between_recounts_and_counts_decisions_at_once(workspace, engine, monkeypatch):
    import threading

    from annotator.review import queues
    from annotator.screens import progress
    from curation.core.item import parse_item

    load_sample(workspace)
    bars = progress.ProgressBars(engine)
    size = queues.count(engine, "korea", queues.Filters())
    assert f'data-total="{size}"' in bars.html("korea", "kim")
    extra = {"id": "korea-extra", "source": {"exam": "시험"}, "stem": "우리나라의 수도는?",
             "options": [{"text": "서울"}, {"text": "부산"}], "answer": 1, "flags": {"korea_reasons": ["우리나라"]}}
    workspace.store.save_items([parse_item(extra)], author="test", stage="import")
    queues.record_review(engine, "korea", "korea-extra", "kim", "confirm", 1)
    bars.decided("korea")  # a decision: counted at once, the size is not recounted
    shown = bars.html("korea", "kim")
    assert f'data-total="{size}"' in shown and 'data-done="1"' in shown
    monkeypatch.setattr(progress, "TOTAL_TTL_S", 0.0)
    bars.decided("korea")
    assert f'data-total="{size}"' in bars.html("korea", "kim")  # the old size while it is recounted
    for thread in threading.enumerate():
        if thread.name == "count-korea":
            thread.join()
    bars.decided("korea")
    monkeypatch.setattr(progress, "TOTAL_TTL_S", 1e9)
    assert f'data-total="{size + 1}"' in bars.html("korea", "kim")
    bars.changed("korea")  # bulk actions and assignment recount everything
    assert f'data-total="{size + 1}"' in bars.html("korea", "kim")


@pytest.mark.parametrize("answer, keys", [(2, {2}), ([1, 3], {1, 3}), ("1, 3", {1, 3}), ("", set()), (None, set()),
                                          ("x", set()), ({"format": "choice", "options": [1, 3]}, {1, 3}),
                                          ({"format": "numeric", "value": "3"}, set())])
def test_key_numbers_read_stored_and_edited_answers(answer, keys):
    from annotator.screens.views import key_numbers

    assert key_numbers(answer) == keys


def test_the_queue_walked_drops_an_item_id_but_keeps_search_text(workspace):
    from annotator.review.queues import Filters, walked

    load_sample(workspace)
    engine = workspace.store.engine
    assert walked(engine, Filters(exam="x", search=" sample-002 ")) == Filters(exam="x")
    assert walked(engine, Filters(search="sample-00")) == Filters(search="sample-00")  # text, not an id
