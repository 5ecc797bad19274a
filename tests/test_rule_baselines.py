"""The rule stand-ins for models: `baseline:overlap` writes rationales through the real runner and
`baseline:rubric-checks` judges them through the real `benchsmith judge`, each saying it is not a model."""

from __future__ import annotations

import asyncio
import json

import pytest

from curation.core.item import parse_item
from evaluation.backends.base import ChatRequest, Message
from evaluation.backends.baseline import baseline_backend
from evaluation.judge import judge_request, parse_verdict
from evaluation.judge_sections import judge_sections
from evaluation.models import resolve_model
from evaluation.records import AnswerRecord, JudgeVerdict, read_jsonl_records
from evaluation.sender import InvalidResponse
from tests.conftest import run_cli
from tests.eval_support import seed_items, text_record

REFERENCE = "시베리아 고기압이 발달하면 기압 경도가 커져 북서풍이 강해진다."


def _judge(item_record: dict, rationale: str):
    request = judge_request(parse_item(item_record), rationale)
    completion = asyncio.run(baseline_backend(resolve_model("baseline:rubric-checks")).complete(request))
    return parse_verdict(completion.text), completion.text


def test_judge_sections_read_back_what_judge_request_wrote():
    item = parse_item(text_record(1, answer=3, rationale=REFERENCE))
    rationale = "③ 이 답이다.\n[정답]\n1 (a rationale quoting the headers stays whole)"
    sections = judge_sections(judge_request(item, rationale).messages[-1].text())
    assert sections == {"문제": item.stem, "선택지": "\n".join(f"{n}. {o.text}" for n, o in enumerate(item.options, 1)),
                        "정답": "3", "참고 해설": REFERENCE, "평가 대상 풀이": rationale}
    assert judge_sections("정답은?") is None
    other = ChatRequest((Message("user", ("정답은?",)),))
    completion = asyncio.run(baseline_backend(resolve_model("baseline:rubric-checks")).complete(other))
    assert completion.text.endswith("채점 요청이 아닙니다 · not a judge request")


def test_rubric_checks_score_the_facts_of_a_rationale():
    record = text_record(1, answer=1, rationale=REFERENCE)
    # names the key ①, cites 겨울철, 북서, 계절풍 of the stem; shares 4 of the reference's 8 words; 34 characters
    good, text = _judge(record, "① 시베리아 고기압이 발달하면 겨울철 북서 계절풍이 강해진다.")
    assert (good.factuality, good.logical_soundness, good.depth, good.clarity) == (5, 5, 4, 3)
    assert good.factual_errors == [] and "not a model" in json.loads(text)["note"]
    wrong, text = _judge(record, "3번: 적도 저압대가 이동하기 때문이다. 다른 보기는 관계가 없다.")
    assert (wrong.factuality, wrong.logical_soundness, wrong.depth) == (1, 1, 1)
    assert wrong.factual_errors and "not a model" in json.loads(text)["note"]
    silent, _ = _judge(record, "잘 모르겠다.")
    assert (silent.factuality, silent.logical_soundness, silent.clarity) == (2, 2, 1)


def test_rubric_checks_answer_other_requests_with_no_verdict():
    completion = asyncio.run(baseline_backend(resolve_model("baseline:rubric-checks")).complete(
        ChatRequest((Message("user", ("[문제]\n무엇인가?",)),))))
    with pytest.raises(InvalidResponse):
        parse_verdict(completion.text)


def test_overlap_run_judged_by_rubric_checks_through_the_cli(workspace):
    seed_items(workspace, n_text=4, n_image=1, rationale=True)
    ws = str(workspace.root)
    ran = run_cli("run", "-m", "baseline:overlap", "--prompt", "reasoning", "-w", ws)
    assert ran.returncode == 0, ran.stderr
    (run_dir,) = [p for p in workspace.runs_dir.iterdir() if p.name.startswith("baseline-overlap-reasoning")]
    judged = run_cli("judge", run_dir.name, "--judge", "baseline:rubric-checks", "-w", ws)
    assert judged.returncode == 0, judged.stderr
    answers = read_jsonl_records(run_dir / "responses.jsonl", AnswerRecord)
    verdicts = read_jsonl_records(run_dir / "judge-baseline-rubric-checks.jsonl", JudgeVerdict)
    assert len(answers) == 4  # the image item is skipped: the rule is text-only
    assert all("not a model" in (record.rationale or "") for record in answers.values())
    assert {record.outcome for record in answers.values()} == {"correct", "wrong"}
    assert set(verdicts) == set(answers) and all(v.status == "ok" and "not a model" in v.text for v in verdicts.values())
    for item_id, verdict in verdicts.items():  # the rule names the option it chose: the key exactly when correct
        correct = answers[item_id].outcome == "correct"
        assert (verdict.scores.factuality >= 3) == correct and (not verdict.factual_errors) == correct


def test_echo_answers_short_answer_items_through_the_runner_and_the_option_baselines_skip_them(workspace):
    from evaluation.backends.echo import echo_answer

    assert echo_answer("고도 2 km에서의 기온(℃)을 구하시오.") == "2" and echo_answer("현상의 이름을 쓰시오.") == "쓰시오"
    seed_items(workspace, n_text=2, n_image=0)
    short = [{"id": "short-numeric", "source": {"exam": "기상기사", "number": 27}, "points": 4,
              "stem": "풍속 10 m/s로 부는 바람을 따라 공기가 60 km를 이동하는 데 걸리는 시간(분)을 구하시오.",
              "answer": {"format": "numeric", "value": "100"}},
             {"id": "short-echoed", "source": {"exam": "기상기사", "number": 28}, "stem": "1 더하기 2는 몇인지 구하시오.",
              "answer": {"format": "numeric", "value": "2"}},
             {"id": "short-text", "source": {"exam": "기상기사", "number": 29}, "stem": "지면 가까이 떠 있는 물방울 현상을 쓰시오.",
              "answer": {"format": "text", "accepted": ["안개"]}}]
    workspace.store.save_items([parse_item(record) for record in short], author="test", stage="test")
    ws = str(workspace.root)
    for model in ("baseline:echo", "baseline:longest"):
        ran = run_cli("run", "-m", model, "-w", ws)
        assert ran.returncode == 0, ran.stderr
    (echo,) = [p for p in workspace.runs_dir.iterdir() if p.name.startswith("baseline-echo")]
    answers = read_jsonl_records(echo / "responses.jsonl", AnswerRecord)
    assert {item_id: record.outcome for item_id, record in answers.items() if item_id.startswith("short")} == {
        "short-numeric": "wrong", "short-echoed": "correct", "short-text": "undecided"}  # a text key not strict: a judge decides
    assert all("not a model" in record.text for item_id, record in answers.items() if item_id.startswith("short"))
    assert {record.outcome for item_id, record in answers.items() if not item_id.startswith("short")} <= {"correct", "wrong"}
    (longest,) = [p for p in workspace.runs_dir.iterdir() if p.name.startswith("baseline-longest")]
    assert set(read_jsonl_records(longest / "responses.jsonl", AnswerRecord)) == {
        item_id for item_id in answers if not item_id.startswith("short")}  # option-only: choice items alone
