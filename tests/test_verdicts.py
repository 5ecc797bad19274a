"""The Verdicts queue without a browser: loading a run's responses in tiers, reviewers' verdicts with
overlap and the lead's adjudication, the verdict as a revision of the run's score that survives
rescore, reruns and re-imports while the response is unchanged, error categories in the report, and
the agreement figures (`verdicts stats --json`) equal to values computed here from the verdicts."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotator.review import auth, claims
from annotator.review.queue_specs import NotAllowed
from annotator.review.verdicts import (
    AUDIT,
    DISAGREEMENT,
    JUDGED,
    VerdictDesk,
    VerdictError,
    audit_rank,
    get_task,
    ordered_ids,
    votes,
)
from evaluation.human_verdicts import VERDICTS_FILE, read_verdicts
from evaluation.records import AnswerRecord, read_jsonl_records
from evaluation.runlog import RESPONSES
from tests.conftest import run_cli

from . import verdicts_support as support


@pytest.fixture
def ws(tmp_path):
    return support.build(tmp_path / "ws")


def _load(ws, *extra: str) -> dict:
    done = run_cli("annotate", "load-verdicts", support.RUN_ID, "--json", "-w", str(ws.root), *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _records(ws, run_id: str = support.RUN_ID) -> dict[str, AnswerRecord]:
    return read_jsonl_records(ws.runs_dir / run_id / RESPONSES, AnswerRecord)


def _user(ws, name: str) -> auth.User:
    return auth.get_user(ws.store.engine, name)


def _task_of(ws, item_id: str) -> int:
    return next(task for task in ordered_ids(ws.store.engine) if get_task(ws.store.engine, task).item_id == item_id)


def _log_sizes(ws) -> tuple[int, int]:
    run = ws.runs_dir / support.RUN_ID
    return tuple(len((run / name).read_bytes()) if (run / name).is_file() else 0 for name in (RESPONSES, VERDICTS_FILE))


def test_a_run_is_loaded_disagreements_first_then_judged_then_a_seeded_audit_sample(ws):
    loaded = _load(ws, "--audit", "2")
    run = loaded["runs"][0]
    assert run["added"] == {"disagreements": 1, "judged": 1, "audit": 2} and run["audit_pool"] == 4
    assert run["formats"] == {"choice": {"responses": 5, "judged": 0}, "judged": {"responses": 1, "judged": 0}}
    engine = ws.store.engine
    tasks = [get_task(engine, task) for task in ordered_ids(engine)]
    pool = sorted(("v01", "v03", "v04", "v05"), key=lambda item: audit_rank(0, support.RUN_ID, item))
    assert [(t.item_id, t.tier) for t in tasks] == [("v02", DISAGREEMENT), ("v06", JUDGED),
                                                    *sorted((item, AUDIT) for item in pool[:2])]
    assert tasks[0].score.outcome == "wrong" and tasks[0].external["is_correct"] is True

    again = _load(ws, "--audit", "3")["runs"][0]  # a larger sample keeps the smaller one's
    assert again["added"] == {"audit": 1} and again["already"] == 4
    assert {get_task(engine, t).item_id for t in ordered_ids(engine)} == {"v02", "v06", *pool[:3]}
    # the default size is the workspace's [verdicts] audit
    other = support.build(ws.root.parent / "other", audit=1)
    done = run_cli("annotate", "load-verdicts", support.RUN_ID, "--json", "-w", str(other.root))
    assert json.loads(done.stdout)["runs"][0]["added"] == {"disagreements": 1, "judged": 1, "audit": 1}


def test_two_reviewers_differ_the_lead_settles_and_the_score_is_a_revision_with_both(ws):
    _load(ws, "--audit", "0")
    assigned = run_cli("annotate", "assign", "--queue", "verdicts", "--users", "bob,erin", "--overlap", "2",
                       "-w", str(ws.root))
    assert assigned.returncode == 0 and "verdicts: 2 items, 4 new assignments" in assigned.stdout
    desk = VerdictDesk(ws)
    engine = ws.store.engine
    v02, v06 = _task_of(ws, "v02"), _task_of(ws, "v06")
    before = _records(ws)["v02"]

    first = desk.decide(_user(ws, "bob"), v02, "correct", True, None, "3번은 정답과 같은 뜻")
    assert first.outcome == "" and "1/2 reviewers" in first.message
    second = desk.decide(_user(ws, "erin"), v02, "incorrect", True, "reasoning_depth", "전선과 무관")
    assert second.outcome == "disputed"
    assert _records(ws)["v02"] == before  # nothing applied while they differ
    with pytest.raises(VerdictError, match="wait for the lead"):
        desk.decide(_user(ws, "bob"), v02, "incorrect", True, "reasoning_depth")
    with pytest.raises(NotAllowed):  # an expert may not settle it
        desk.adjudicate(_user(ws, "erin"), v02, "incorrect", True, "reasoning_depth")
    with pytest.raises(claims.Claimed, match="assigned to bob, erin"):  # an expert not assigned to it
        auth.add_user(engine, "hana", "expert", "password-hana")
        desk.decide(_user(ws, "hana"), v06, "correct")

    settled = desk.adjudicate(_user(ws, "alice"), v02, "incorrect", True, "reasoning_depth", "해설서 확인")
    assert settled.outcome == "adjudicated" and settled.applied == "applied"
    record = _records(ws)["v02"]
    score = record.typed_score()
    assert (record.outcome, score.decided_by, score.value) == ("wrong", "human", 0.0)
    human = score.details["human"]
    assert (human["by"], human["how"], human["reason"], human["reviewers"]) == (
        "alice", "adjudicated", "해설서 확인", ["bob", "erin"])
    assert human["error_category"] == "reasoning_depth" and human["at"]
    assert score.details["before"] == {"outcome": "wrong", "decided_by": "checker", "judge_model": None}
    assert score.extracted == 3 and score.checker == "choice"  # what the checker read, kept
    logged = list(read_verdicts(ws.runs_dir / support.RUN_ID).values())
    assert [(v.item_id, v.verdict, [r.user for r in v.reviewers], [r.verdict for r in v.reviewers])
            for v in logged] == [("v02", "incorrect", ["bob", "erin"], ["correct", "incorrect"])]
    with pytest.raises(VerdictError, match="settled already"):
        desk.decide(_user(ws, "bob"), v02, "correct")

    # the same verdict, reading and category from both: agreed, applied once, both named
    desk.decide(_user(ws, "bob"), v06, "correct", None, None, "정체 전선")
    agreed = desk.decide(_user(ws, "erin"), v06, "correct", None, None, "")
    assert agreed.outcome == "agreed" and agreed.applied == "applied"
    v06_score = _records(ws)["v06"].typed_score()
    assert (v06_score.outcome, v06_score.details["human"]["by"], v06_score.details["human"]["how"]) == (
        "correct", "bob+erin", "agreed")
    assert [vote.outcome for vote in votes(engine, v06)] == ["agreed", "agreed"]
    assert desk.apply_all() == {"already": 2}  # applying again changes nothing
    assert len((ws.runs_dir / support.RUN_ID / VERDICTS_FILE).read_text(encoding="utf-8").splitlines()) == 2


def test_the_role_the_values_and_the_assignment_are_checked_and_a_refusal_writes_nothing(ws):
    _load(ws, "--audit", "0")
    desk = VerdictDesk(ws)
    v02 = _task_of(ws, "v02")
    sizes, records = _log_sizes(ws), _records(ws)
    for args, error in (((_user(ws, "carol"), v02, "correct"), NotAllowed),  # an annotator
                        ((_user(ws, "bob"), v02, "maybe"), VerdictError),
                        ((_user(ws, "bob"), v02, "correct", True, "reasoning_depth"), VerdictError),  # a category on correct
                        ((_user(ws, "bob"), v02, "incorrect", True, "not-a-category"), VerdictError),
                        ((_user(ws, "bob"), 999, "correct"), Exception)):
        with pytest.raises(error):
            desk.decide(*args)
    with pytest.raises(NotAllowed):
        desk.adjudicate(_user(ws, "carol"), v02, "correct")
    with pytest.raises(VerdictError, match="nothing to adjudicate"):
        desk.adjudicate(_user(ws, "alice"), v02, "correct")
    assert votes(ws.store.engine, v02) == [] and _log_sizes(ws) == sizes and _records(ws) == records

    # no assignment: one expert's verdict settles it at once
    single = desk.decide(_user(ws, "bob"), v02, "correct", False, None, "③을 골랐다고 읽었지만 본문은 ②")
    assert single.outcome == "single" and _records(ws)["v02"].typed_score().details["human"]["how"] == "single"


def test_the_verdict_survives_rescore_and_reruns_while_the_response_is_unchanged(workspace):
    from annotator.review.tables import ensure_tables
    from tests.eval_support import seed_items
    from tests.fault_server import ServerConfig, ServerThread

    seed_items(workspace, n_text=3, n_image=0)  # keys 2, 3, 4
    ensure_tables(workspace.store.engine)
    auth.add_user(workspace.store.engine, "bob", "expert", "password-bob")
    root = str(workspace.root)
    with ServerThread(ServerConfig(responder=lambda prompt, body: "정답: 2")) as server:
        command = ("run", "-m", f"openai-compatible:m@{server.url}/v1", "--json", "--no-progress", "-w", root)
        done = run_cli(*command)
        assert done.returncode == 0, done.stderr
        run_id = json.loads(done.stdout)["run_id"]
        assert json.loads(run_cli("annotate", "load-verdicts", run_id, "--audit", "3", "--json", "-w", root).stdout
                          )["runs"][0]["added"] == {"audit": 3}
        item = "eval-text-001"  # key 2: the checker says correct; the person does not
        desk = VerdictDesk(workspace)
        task = next(t for t in ordered_ids(workspace.store.engine) if get_task(workspace.store.engine, t).item_id == item)
        desk.decide(auth.get_user(workspace.store.engine, "bob"), task, "incorrect", True, "domain_standards", "단위")

        def score():
            return _records(workspace, run_id)[item].typed_score()

        assert (score().outcome, score().decided_by) == ("wrong", "human")
        sent = server.stats.requests
        assert run_cli(*command).returncode == 0 and server.stats.requests == sent  # nothing re-sent: kept
        assert score().decided_by == "human"
        rescored = json.loads(run_cli("rescore", run_id, "--json", "-w", root).stdout)["runs"][0]
        assert rescored["kept_verdicts"] == 1 and rescored["rescored"] == 0 and score().decided_by == "human"

        stored = workspace.store.get(item)
        workspace.store.update_fields(item, {"stem": stored.item.stem + " (고침)"}, expect_rev=stored.rev,
                                      author="bob", stage="test", reason="stem edited")
        assert run_cli(*command).returncode == 0 and server.stats.requests == sent + 1  # asked again: new content
        assert (score().outcome, score().decided_by) == ("correct", "checker")  # the verdict was on the old content
        stored = workspace.store.get(item)
        workspace.store.update_fields(item, {"stem": stored.item.stem.removesuffix(" (고침)")}, expect_rev=stored.rev,
                                      author="bob", stage="test", reason="edit undone")
        assert run_cli(*command).returncode == 0  # re-sent (answered from the cache): the same response
        assert (score().outcome, score().decided_by) == ("wrong", "human")
        assert score().details["human"]["error_category"] == "domain_standards"

    # a later checker line on the same response (a log written by an older version, say): rescore gives it back
    log = workspace.runs_dir / run_id / RESPONSES
    last = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
    checker = dict(last, outcome="correct", score=last["score"]["details"] and {
        **last["score"], "outcome": "correct", "value": 1.0, "decided_by": "checker", "details": {}})
    log.write_text(log.read_text(encoding="utf-8") + json.dumps(checker, ensure_ascii=False) + "\n", encoding="utf-8")
    assert score().decided_by == "checker"
    rescored = json.loads(run_cli("rescore", run_id, "--json", "-w", root).stdout)["runs"][0]
    assert rescored["restored_verdicts"] == 1 and (score().outcome, score().decided_by) == ("wrong", "human")


def test_a_reimport_of_the_same_file_keeps_the_verdict(ws):
    from evaluation.imported_runs import import_run

    _load(ws, "--audit", "0")
    VerdictDesk(ws).decide(_user(ws, "bob"), _task_of(ws, "v06"), "incorrect", None, "local_knowledge", "")
    path = next(ws.root.parent.glob(f"*{support.MODEL}-1-llm-judge.csv"))
    summary = import_run(ws, path, support.MODEL, run_id=support.RUN_ID)
    assert summary.written == 0 and _records(ws)["v06"].typed_score().decided_by == "human"
    # a later line without the verdict (an import made elsewhere, say): importing again gives it back
    log = ws.runs_dir / support.RUN_ID / RESPONSES
    human = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
    before = human["score"]["details"]["before"]
    lost = dict(human, outcome=before["outcome"], score={**human["score"], "outcome": before["outcome"], "value": 0.0,
                                                          "decided_by": before["decided_by"], "details": {}})
    log.write_text(log.read_text(encoding="utf-8") + json.dumps(lost, ensure_ascii=False) + "\n", encoding="utf-8")
    assert _records(ws)["v06"].outcome == "undecided"
    summary = import_run(ws, path, support.MODEL, run_id=support.RUN_ID)
    assert summary.written == 1 and _records(ws)["v06"].typed_score().details["human"]["error_category"] == "local_knowledge"


def _wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_the_report_breaks_errors_down_by_category_and_subject_with_intervals(ws, tmp_path):
    _load(ws, "--audit", "4")
    desk = VerdictDesk(ws)
    bob = _user(ws, "bob")
    given = {"v01": ("incorrect", "convention_to_label"), "v02": ("incorrect", "convention_to_label"),
             "v03": ("no_answer", None), "v04": ("correct", None), "v05": ("incorrect", "reasoning_depth"),
             "v06": ("incorrect", None)}
    for item_id, (verdict, category) in given.items():
        desk.decide(bob, _task_of(ws, item_id), verdict, None, category)
    out = tmp_path / "report"
    done = run_cli("report", support.RUN_ID, "--out", str(out), "--paper", "--no-charts", "-w", str(ws.root))
    assert done.returncode == 0, done.stderr
    rows = [line.split(",") for line in (out / "errors.csv").read_text(encoding="utf-8").splitlines()[1:]]
    overall = {row[3]: row for row in rows if row[2] == "all"}
    assert {name: (int(row[4]), int(row[5])) for name, row in overall.items()} == {
        "convention_to_label": (2, 4), "symbol_induction": (0, 4), "local_knowledge": (0, 4),
        "domain_standards": (0, 4), "reasoning_depth": (1, 4), "untagged": (1, 4)}
    low, high = _wilson(2, 4)
    assert (float(overall["convention_to_label"][7]), float(overall["convention_to_label"][8])) == (
        round(low, 4), round(high, 4))
    by_subject = {(row[2], row[3]): (int(row[4]), int(row[5])) for row in rows if row[2] != "all" and int(row[4])}
    assert by_subject == {("기상학", "convention_to_label"): (2, 3), ("기상학", "reasoning_depth"): (1, 3),
                          ("기후학", "untagged"): (1, 1)}
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Errors by category (people's verdicts)" in report
    table = (out / "paper" / "error_categories.md").read_text(encoding="utf-8")
    assert f"50.0 [{100 * low:.1f}, {100 * high:.1f}] (2)" in table and "| 4 |" in table
    assert (out / "paper" / "error_categories.tex").is_file()
    accuracy = {row.split(",")[3]: row.split(",") for row in (out / "accuracy.csv").read_text().splitlines()[1:]}
    assert accuracy["overall"][5] == "1"  # only v04 correct now (v01 was correct by the checker)


def test_agreement_figures_equal_the_values_computed_from_the_verdicts(ws):
    from scipy.stats import bootstrap

    from tests.fault_server import ServerConfig, ServerThread
    from tests.runs_import_support import is_judge_request, judge_reply

    judge = "openai-compatible:judge-m"
    with ServerThread(ServerConfig(responder=lambda prompt, body: judge_reply(prompt) if is_judge_request(prompt)
                                   else "1")) as server:
        done = run_cli("runs", "judge", support.RUN_ID, "--judge", f"{judge}@{server.url}/v1", "--judge-all",
                       "-w", str(ws.root))
        assert done.returncode == 0, done.stderr
    _load(ws, "--audit", "4")
    desk = VerdictDesk(ws)
    given = {"v01": "correct", "v02": "correct", "v03": "no_answer", "v04": "incorrect", "v05": "incorrect",
             "v06": "correct"}
    for item_id, verdict in given.items():
        desk.decide(_user(ws, "erin"), _task_of(ws, item_id), verdict, item_id != "v04")
    done = run_cli("verdicts", "stats", "--json", "-w", str(ws.root))
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["verdicts"] == 6

    # what each decider said, from the run's records before the verdicts (the tasks keep them)
    pairs: dict[tuple[str, str], list[tuple[bool, bool]]] = {}
    records = {item: get_task(ws.store.engine, _task_of(ws, item)) for item in given}
    for item_id, task in records.items():
        people = given[item_id] == "correct"
        said = []
        score = task.score
        if score.decided_by == "checker" and score.outcome != "undecided":
            said.append(("checker:choice", score.outcome == "correct"))
        if score.decided_by == "judge":
            said.append((f"judge:{judge}", score.outcome == "correct"))
        elif "judge" in score.details:
            said.append((f"judge:{judge}", score.details["judge"]["verdict"]))
        said.append(("external:kmmmu-judge", task.external["is_correct"]))
        for decider, accepts in said:
            for fmt in (task.answer_format, "all"):
                pairs.setdefault((fmt, decider), []).append((accepts, people))
    shown = {(row["format"], row["decider"]): row for row in figures["deciders"]}
    assert set(shown) == set(pairs)
    for key, values in pairs.items():
        row = shown[key]
        decider, people = np.array([a for a, _ in values]), np.array([b for _, b in values])
        assert row["n"] == len(values) and row["agree"] == int((decider == people).sum())
        assert row["false_accepts"] == int((decider & ~people).sum())
        assert row["false_rejects"] == int((~decider & people).sum())
        if len(set(decider) | set(people)) == 1:  # one value from both: chance agreement is total
            assert row["kappa"] is None
            continue
        assert row["kappa"] == pytest.approx(cohen_kappa_score(decider, people))
        if len(values) < 2:
            continue

        def kappa(a, b):
            return np.nan if len(set(a) | set(b)) == 1 else cohen_kappa_score(a, b)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = bootstrap((decider.astype(float), people.astype(float)), kappa, paired=True, vectorized=False,
                               n_resamples=2000, method="percentile", rng=np.random.default_rng(0))
        distribution = result.bootstrap_distribution[~np.isnan(result.bootstrap_distribution)]
        assert row["kappa_ci"] == pytest.approx(list(np.quantile(distribution, [0.025, 0.975])))
    checker = shown[("choice", "checker:choice")]
    assert (checker["extraction_checked"], checker["extraction_right"]) == (5, 4)
    formats = {row["format"]: row for row in figures["formats"]}
    assert formats["judged"]["responses"] == 1 and formats["judged"]["judged"] == 1
    assert formats["judged"]["share_judged"] == 1.0 and formats["choice"]["share_judged"] == 0.0



def test_a_repeated_loop_is_folded_and_marked_and_the_text_escaped():
    from annotator.screens.response_view import find_loops, response_html

    unit = "다시 보면 <b>답</b>은 ③이 아니라 "
    text = "풀이: " + unit * 12 + "끝."
    [loop] = find_loops(text)
    assert (loop.unit, loop.copies) == (len(unit), 12)  # the unit (or a rotation of it), twelve times
    html = response_html(text)
    assert 'data-repeats="11"' in html and "repeated 11 more times" in html
    assert "<b>답</b>" not in html and "&lt;b&gt;답&lt;/b&gt;" in html
    assert html.count("&lt;b&gt;") == 12  # nothing lost: the repeats are in the fold
    assert find_loops("정답은 ③입니다. " * 2) == [] and find_loops("가나다라마바사아자차카타파하 " * 20)  # short vs long


def test_the_workspace_sets_the_audit_size_and_the_error_taxonomy(tmp_path):
    from curation.core.errors import BenchsmithError
    from evaluation.human_verdicts import DEFAULT_ERROR_CATEGORIES, verdict_settings

    config = tmp_path / "benchsmith.toml"
    assert verdict_settings(tmp_path).error_categories == DEFAULT_ERROR_CATEGORIES  # KMMMU's by default
    config.write_text('[verdicts]\naudit = 5\nerror_categories = ["units", "misread_figure"]\n', encoding="utf-8")
    settings = verdict_settings(tmp_path)
    assert settings.audit == 5 and settings.category_names == ("units", "misread_figure")
    config.write_text('[verdicts.error_categories]\nunits = "단위 · Units"\n', encoding="utf-8")
    assert verdict_settings(tmp_path).label("units") == "단위 · Units"
    for bad, message in (("audit = -1", "verdicts.audit"), ("error_categories = []", "error_categories"),
                         ('error_categories = ["a", "a"]', "twice")):
        config.write_text(f"[verdicts]\n{bad}\n", encoding="utf-8")
        with pytest.raises(BenchsmithError, match=message):
            verdict_settings(tmp_path)
