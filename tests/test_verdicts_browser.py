"""The Verdicts queue in a real Chromium against the annotator server: two experts assigned the
same responses (overlap 2) give different verdicts on the checker–judge disagreement, the response
waits unchanged for the lead, the admin settles it, the run's score and the report change with it,
and the history shows both reviewers' verdicts and the lead's. A looping response is shown folded
and marked. Skips as tests/test_annotator_browser.py does."""

from __future__ import annotations

import csv

import pytest

from . import verdicts_support as support
from .annotator_support import running_server
from .conftest import run_cli
from .test_adjudication_browser import open_tab
from .test_annotator_browser import browser, choose, expect, field, login, open_page  # noqa: F401  (the Chromium fixture)

REASON = "3번은 정체 전선: 열쇠와 같은 뜻"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from annotator.review import queues
    from annotator.review.verdicts import load_verdict_tasks, task_keys
    from evaluation.metrics import load_run

    workspace = support.build(tmp_path_factory.mktemp("verdicts-browser") / "ws")
    load_verdict_tasks(workspace.store.engine, load_run(workspace.runs_dir / support.RUN_ID, workspace), audit=4)
    queues.assign(workspace.store.engine, "verdicts", ["bob", "erin"], 2, item_ids=task_keys(workspace.store.engine))
    with running_server(workspace) as url:
        yield url, workspace


def _accuracy(workspace, out) -> dict[str, str]:
    done = run_cli("report", support.RUN_ID, "--out", str(out), "--no-charts", "-w", str(workspace.root))
    assert done.returncode == 0, done.stderr
    with (out / "accuracy.csv").open(encoding="utf-8") as handle:
        return next(row for row in csv.DictReader(handle) if row["subset"] == "overall")


def _record(workspace, item_id: str):
    from evaluation.records import AnswerRecord, read_jsonl_records
    from evaluation.runlog import RESPONSES

    return read_jsonl_records(workspace.runs_dir / support.RUN_ID / RESPONSES, AnswerRecord)[item_id]


def _open_verdicts(browser, url: str, name: str):  # noqa: F811
    context, page = login(browser, url, name)
    open_page(page, "Experts")
    open_tab(page, "Verdicts")
    expect(page.locator("#verdicts-progress")).to_contain_text("Queue done", timeout=30_000)  # the tab has opened
    return context, page


def _verdict(page, verdict_label: str, reading: str | None = None, category: str | None = None,
             reason: str = "") -> None:
    page.locator(f"#verdicts-verdict label:has-text('{verdict_label}')").click()
    if reading:
        page.locator(f"#verdicts-extraction label:has-text('{reading}')").click()
    if category:
        choose(page, "verdicts-category", category)
    field(page, "verdicts-reason").fill(reason)


def test_two_experts_differ_the_lead_settles_and_the_score_and_report_follow(served, browser, tmp_path):  # noqa: F811
    url, workspace = served
    before = _accuracy(workspace, tmp_path / "before")
    checker = _record(workspace, "v02")
    assert (checker.outcome, checker.typed_score().decided_by) == ("wrong", "checker")

    context, page = _open_verdicts(browser, url, "bob")
    status = page.locator("#verdicts-status")
    expect(status).to_contain_text("v02")  # the checker–judge disagreement comes first
    expect(page.locator("#verdicts-response")).to_contain_text("정답: 3")
    deciders = page.locator("#verdicts-deciders")
    for text in ("kmmmu-judge", "correct", "wrong", "choice", "the checker and a judge disagree"):
        expect(deciders).to_contain_text(text)
    expect(page.locator("#verdicts-question")).to_contain_text("정체")  # the options, with the key marked
    assert support.MODEL not in page.content() and support.RUN_ID not in page.content()
    _verdict(page, "정답 · correct", "맞게 읽음 · read right", reason=REASON)
    page.locator("#verdicts-save").click()
    expect(status).to_contain_text("1/2 reviewers", timeout=30_000)

    page.locator("#verdicts-mine").click()  # the next response for bob: the judged-key one
    expect(status).to_contain_text("v06", timeout=30_000)
    page.locator("#verdicts-next").click()
    loop = page.locator("#verdicts-response .bs-loop")  # v03 loops: folded and marked
    for _ in range(4):
        if loop.count():
            break
        page.locator("#verdicts-next").click()
        page.wait_for_timeout(500)
    expect(loop).to_be_visible(timeout=30_000)
    expect(loop.locator("summary")).to_contain_text("repeated 29 more times")
    assert loop.get_attribute("open") is None
    context.close()

    context, page = _open_verdicts(browser, url, "erin")
    expect(page.locator("#verdicts-status")).to_contain_text("v02")
    _verdict(page, "오답 · incorrect", "맞게 읽음 · read right", "Reasoning depth", "장마와 무관한 답")
    page.locator("#verdicts-save").click()
    expect(page.locator("#verdicts-status")).to_contain_text("The reviewers differ", timeout=30_000)
    context.close()
    assert _record(workspace, "v02") == checker  # nothing applied while they differ

    context, page = _open_verdicts(browser, url, "alice")  # not assigned: nothing for her to decide
    expect(page.locator("#verdicts-status")).to_contain_text("1 waiting for the lead")
    page.locator("#verdicts-disputed").click()
    expect(page.locator("#verdicts-status")).to_contain_text("v02", timeout=30_000)
    case = page.locator("#verdicts-case")
    for text in ("bob", "erin", "correct", "incorrect", REASON, "Reasoning depth"):
        expect(case).to_contain_text(text)
    _verdict(page, "정답 · correct", "맞게 읽음 · read right", reason="두 검토 의견 확인: 3번이 정답과 같다")
    page.locator("#verdicts-settle").click()
    expect(page.locator("#verdicts-status")).to_contain_text("The lead's verdict is applied", timeout=30_000)

    record = _record(workspace, "v02")
    score = record.typed_score()
    assert (record.outcome, score.decided_by, score.details["human"]["by"], score.details["human"]["how"]) == (
        "correct", "human", "alice", "adjudicated")
    assert score.details["human"]["reviewers"] == ["bob", "erin"]
    after = _accuracy(workspace, tmp_path / "after")
    assert int(after["correct"]) == int(before["correct"]) + 1 and after["n"] == before["n"]
    assert float(after["accuracy"]) > float(before["accuracy"])

    page.locator("#verdicts-history-box").click()
    history = page.locator("#verdicts-history")
    for text in ("bob", "erin", REASON, "장마와 무관한 답", "Settled: correct", "alice (adjudicated)",
                 "score revised", "Before people: wrong by checker"):
        expect(history).to_contain_text(text, timeout=30_000)
    assert history.locator(".bs-vote").count() == 2
    context.close()
