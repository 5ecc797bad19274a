"""Each checker against replies written here: what it accepts, what it rejects, and what it leaves
to a judge. Every case asserts an outcome, so a checker that accepts everything fails."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from scoring.portable import FORMATS, check_answer, score_response
from scoring.portable import mathverify as mv


def numeric(value: str, unit: str | None = None, tolerance: float | None = None,
            relative: float | None = None) -> dict[str, Any]:
    return {"format": "numeric", "value": value, "unit": unit, "tolerance": tolerance, "relative_tolerance": relative}


def outcome(key: dict[str, Any], reply: str, options: list[str] | None = None, finish_reason: str | None = None) -> str:
    return score_response(key, reply, options=options or [], finish_reason=finish_reason).outcome


# --- numeric ------------------------------------------------------------------------------------

NUMERIC_CASES: list[tuple[dict[str, Any], str, str]] = [
    # the key's written precision decides
    (numeric("0.012"), "정답: 0.0120", "correct"),
    (numeric("0.012"), "정답: 0.012", "correct"),
    (numeric("0.012"), "정답: 0.013", "wrong"),
    (numeric("0.012"), "\\boxed{1.2 \\times 10^{-2}}", "correct"),
    (numeric("50.0"), "정답: 50", "correct"),
    (numeric("50.0"), "정답: 50.4", "wrong"),
    (numeric("11"), "정답: 11", "correct"),
    (numeric("11"), "정답: 11.4", "wrong"),
    (numeric("11"), "정답: 12", "wrong"),
    (numeric("2.72 \\times 10^{-6}"), "\\boxed{2.72e-6}", "correct"),
    (numeric("2.72 \\times 10^{-6}"), "정답: $2.72 \\times 10^{-7}$", "wrong"),
    (numeric("1,000"), "정답: 1000", "correct"),
    # fractions, decimals, LaTeX
    (numeric("1/2"), "정답: 0.5", "correct"),
    (numeric("1/2"), "\\boxed{\\frac{1}{2}}", "correct"),
    (numeric("1/2"), "\\boxed{\\dfrac{2}{4}}", "correct"),
    (numeric("1/2"), "\\boxed{0.6}", "wrong"),
    (numeric("0.5"), "\\boxed{\\frac{1}{2}}", "correct"),
    (numeric("1/3"), "정답: 0.333", "correct"),
    (numeric("1/3"), "정답: 0.3", "wrong"),  # one significant digit is not the key rounded
    (numeric("$\\frac{4}{\\sqrt{7}}$"), "\\boxed{\\frac{4\\sqrt{7}}{7}}", "correct"),
    (numeric("$\\frac{4}{\\sqrt{7}}$"), "정답: 1.51", "correct"),
    (numeric("$\\frac{4}{\\sqrt{7}}$"), "정답: 1.6", "wrong"),
    (numeric("7/10"), "정답: $\\textcircled{7}$", "wrong"),
    # forms of statement
    (numeric("79.2"), "최대 세포 농도는 약 79.2 g/L입니다.", "correct"),
    (numeric("3.2"), "정답: v = 2t = 3.2 m/s", "correct"),
    (numeric("-4.45"), "정답: M ≈ −4.45", "correct"),
    (numeric("12", unit="%"), "정답: 12%", "correct"),
    (numeric("0.12"), "정답: 12%", "correct"),
    (numeric("0.12"), "정답: 13%", "wrong"),
    (numeric("30"), "정답: 모름", "wrong"),
    # units
    (numeric("1.0", unit="mm"), "정답: 1.0 mm", "correct"),
    (numeric("1.0", unit="mm"), "정답: 0.1 cm", "correct"),
    (numeric("1.0", unit="mm"), "정답: 1.0 m", "wrong"),  # mm vs m with a different number
    (numeric("1.0", unit="mm"), "정답: 1.0 kg", "wrong"),  # another dimension
    (numeric("1.0", unit="mm"), "정답: 1.0", "correct"),  # no unit: the number decides
    (numeric("0.4", unit="미터"), "정답: 0.4 m", "correct"),
    (numeric("0.4", unit="m"), "정답: 0.4미터", "correct"),
    (numeric("0.4", unit="m"), "정답: 40 센티미터", "correct"),
    (numeric("2", unit="s"), "정답: 2 min", "wrong"),
    # tolerances
    (numeric("9.8", tolerance=0.1), "정답: 9.75", "correct"),
    (numeric("9.8", tolerance=0.1), "정답: 9.65", "wrong"),
    (numeric("100", relative=0.01), "정답: 100.9", "correct"),
    (numeric("100", relative=0.01), "정답: 102", "wrong"),
]


@pytest.mark.parametrize(("key", "reply", "expected"), NUMERIC_CASES,
                         ids=[f"numeric{i:02d}" for i in range(len(NUMERIC_CASES))])
def test_numeric(key: dict[str, Any], reply: str, expected: str) -> None:
    verdict = score_response(key, reply)
    assert verdict.outcome == expected, verdict.explanation
    assert verdict.checker == "numeric" and verdict.checker_version == "numeric-3"


def test_numeric_key_is_parsed_once() -> None:
    from scoring.portable.formats import numeric as module

    module.target.cache_clear()
    for reply in ("정답: 0.5", "정답: 0.6", "정답: 1/2"):
        score_response(numeric("1/2"), reply)
    info = module.target.cache_info()
    assert info.misses == 1 and info.hits >= 2


# --- text ---------------------------------------------------------------------------------------

TEXT = {"format": "text", "accepted": ["미토콘드리아", "mitochondria"], "normalise": "default", "strict": False}


@pytest.mark.parametrize(("key", "reply", "expected"), [
    (TEXT, "정답: 미토콘드리아", "correct"),
    (TEXT, "정답은 미토콘드리아입니다.", "correct"),
    (TEXT, "\\boxed{Mitochondria}", "correct"),
    (TEXT, "정답: **미토 콘드리아**", "correct"),
    (TEXT, "정답: 미토콘드리아 (mitochondria)", "correct"),
    (TEXT, "ＭＩＴＯＣＨＯＮＤＲＩＡ", "correct"),
    (TEXT, "정답: 엽록체", "undecided"),
    ({**TEXT, "strict": True}, "정답: 엽록체", "wrong"),
    ({**TEXT, "strict": True}, "정답: 미토콘드리아", "correct"),
    ({**TEXT, "normalise": "exact"}, "정답: Mitochondria", "undecided"),
    ({**TEXT, "normalise": "exact", "strict": True}, "정답: mitochondria", "correct"),
])
def test_text(key: dict[str, Any], reply: str, expected: str) -> None:
    assert outcome(key, reply) == expected


# --- set ----------------------------------------------------------------------------------------

SET = {"format": "set", "members": ["ㄱ", "ㄹ"]}


@pytest.mark.parametrize(("reply", "expected"), [
    ("정답: ㄱ, ㄹ", "correct"),
    ("정답: ㄹ,ㄱ", "correct"),
    ("정답: ㄱㄹ", "correct"),
    ("정답: ㄱ ㄹ", "correct"),
    ("정답은 ㄱ과 ㄹ이다.", "correct"),
    ("정답: ㄱ 및 ㄹ", "correct"),
    ("정답: (ㄱ), (ㄹ)", "correct"),
    ("\\boxed{ㄹ, ㄱ}", "correct"),
    ('{"정답": ["ㄹ", "ㄱ"]}', "correct"),
    ("정답: ㉠, ㉣", "correct"),  # circled jamo: ㉣ is ㄹ
    ("정답: ㄱ, ㄹ (ㄴ은 틀림)", "correct"),
    ("정답: ㄱ", "wrong"),
    ("정답: ㄱ, ㄴ, ㄹ", "wrong"),
    ("정답: ㄴ, ㄷ", "wrong"),
    ("정답: 없음", "wrong"),
])
def test_set_of_jamo(reply: str, expected: str) -> None:
    assert outcome(SET, reply) == expected


def test_set_of_circled_numbers_and_labels() -> None:
    numbers = {"format": "set", "members": ["①", "③"]}
    assert outcome(numbers, "정답: 1, 3") == "correct"
    assert outcome(numbers, "정답: ③①") == "correct"
    assert outcome(numbers, "정답: 1번과 3번") == "correct"
    assert outcome(numbers, "정답: 1, 2, 3") == "wrong"
    labels = {"format": "set", "members": ["A", "C"]}
    assert outcome(labels, "정답: C and A") == "correct"
    assert outcome(labels, "정답: a, c") == "correct"
    assert outcome(labels, "정답: A, B") == "wrong"


def test_set_answered_by_an_option_number() -> None:
    options = ["ㄱ, ㄴ", "ㄱ, ㄹ", "ㄴ, ㄷ"]
    assert outcome(SET, "정답: ②", options) == "correct"
    assert outcome(SET, "정답: ③", options) == "wrong"


# --- expression ---------------------------------------------------------------------------------

def expression(latex: str) -> dict[str, Any]:
    return {"format": "expression", "latex": latex}


@pytest.mark.parametrize(("key", "reply", "expected"), [
    (expression("\\frac{1}{2}"), "\\boxed{\\frac{1}{2}}", "correct"),
    (expression("\\frac{1}{2}"), "\\boxed{0.5}", "correct"),
    (expression("\\frac{1}{2}"), "정답: 1/2", "correct"),
    (expression("\\frac{1}{2}"), "\\boxed{\\frac{1}{3}}", "wrong"),
    (expression("\\sqrt{2dg}"), "정답: v_min = √(2 g d)", "correct"),
    (expression("\\sqrt{2dg}"), "\\boxed{\\sqrt{2gd}}", "correct"),
    (expression("\\sqrt{2dg}"), "\\boxed{\\sqrt{gd}}", "wrong"),
    (expression("\\frac{4}{\\sqrt{7}}"), "\\boxed{\\frac{4\\sqrt{7}}{7}}", "correct"),
    (expression("\\frac{4}{\\sqrt{7}}"), "정답: 4/√7", "correct"),
    (expression("\\frac{4}{\\sqrt{7}}"), "\\boxed{\\frac{3\\sqrt{5}}{5}}", "wrong"),
    (expression("(x+1)^2"), "\\boxed{x^2 + 2x + 1}", "correct"),
    (expression("(x+1)^2"), "\\boxed{x^2 + 1}", "wrong"),
    (expression("\\frac { 4 } { 2 3 }"), "\\boxed{4/23}", "correct"),
    (expression("\\sqrt{\\frac{2keQ}{mR}}"), "정답: v = sqrt(2kQe/(mR))", "correct"),
    (expression("\\sqrt{2}"), "정답: 모르겠다", "wrong"),
])
def test_expression(key: dict[str, Any], reply: str, expected: str) -> None:
    verdict = score_response(key, reply)
    assert verdict.outcome == expected, verdict.explanation


def test_expression_fast_paths_come_before_sympy() -> None:
    same = check_answer(expression("\\sqrt{2dg}"), "\\sqrt{2dg}")
    assert same.outcome == "correct" and same.details["method"] == "string"
    numbers = check_answer(expression("0.5"), "\\frac{1}{2}")
    assert numbers.outcome == "correct" and numbers.details["method"] == "number"
    symbolic = check_answer(expression("(x+1)^2"), "x^2+2x+1")
    assert symbolic.outcome == "correct" and symbolic.details["method"] == "math-verify"


def test_pathological_answers_do_not_hang() -> None:
    key = expression("2^{10}")
    started = time.perf_counter()
    tower = check_answer(key, "2^{2^{2^{100}}}")
    huge = check_answer(key, "9^{99999999}")
    factorial = check_answer(key, "100000!")
    long = check_answer(key, "x+" * 2000 + "1")
    assert time.perf_counter() - started < 5
    for verdict in (tower, huge, factorial, long):
        assert verdict.outcome == "undecided", verdict.explanation
    assert "long" in long.explanation
    assert check_answer(numeric("1024"), "2^{2^{2^{100}}}").outcome == "undecided"


def test_expressions_are_checked_outside_the_main_thread() -> None:
    found: list[str] = []
    worker = threading.Thread(target=lambda: found.append(
        check_answer(expression("(x+1)^2"), "x^2+2x+1").outcome))
    worker.start()
    worker.join(30)
    assert found == ["correct"]


def test_without_math_verify_the_check_is_undecided_never_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    from scoring.portable.formats import expression as expression_format

    monkeypatch.setitem(mv._state, "module", None)
    expression_format._gold.cache_clear()
    try:
        verdict = check_answer(expression("(x+1)^2"), "x^2+2x+1")
        assert verdict.outcome == "undecided" and "pip install math-verify" in verdict.explanation
        # the stdlib fast paths still decide
        assert check_answer(expression("\\frac{1}{2}"), "0.5").outcome == "correct"
        assert check_answer(expression("\\frac{1}{2}"), "0.6").outcome == "wrong"
        latex_key = check_answer(numeric("$\\frac{4}{\\sqrt{7}}$"), "1.51")
        assert latex_key.outcome == "undecided" and "pip install math-verify" in latex_key.explanation
        assert check_answer(numeric("0.5"), "\\sqrt{2}").outcome == "undecided"
        assert check_answer(numeric("0.5"), "0.5").outcome == "correct"
    finally:
        expression_format._gold.cache_clear()


# --- judged -------------------------------------------------------------------------------------

JUDGED = {"format": "judged", "reference": "세포벽이 있다.", "rubric": "세포벽을 말하면 정답"}


def test_judged_is_always_undecided_but_empty_and_loops_stay_unparseable() -> None:
    stated = score_response(JUDGED, "풀이를 쓴다.\n정답: 세포벽이 있기 때문이다.")
    assert stated.outcome == "undecided" and stated.extracted == "세포벽이 있기 때문이다."
    long = score_response(JUDGED, " ".join(f"{n}단계 설명." for n in range(400)))
    assert long.outcome == "undecided" and len(long.extracted) == 1500 and long.details["method"] == "tail"
    assert outcome(JUDGED, "") == "unparseable"
    assert outcome(JUDGED, "그러나 다시 생각해 보면 세포벽이 있을 수도 있고 없을 수도 있다.\n" * 40) == "unparseable"


# --- parts --------------------------------------------------------------------------------------

PARTS = {"format": "parts", "labels": ["(1)", "(2)"],
         "parts": [numeric("-4.45"), {"format": "set", "members": ["ㄴ", "ㄷ"]}]}


@pytest.mark.parametrize(("reply", "expected", "value"), [
    ("정답: (1) -4.45 (2) ㄴ, ㄷ", "correct", 1.0),
    ("정답:\n(1) -4.45\n(2) ㄷ, ㄴ", "correct", 1.0),
    ("정답: 1) -4.45, 2) ㄴ, ㄷ", "correct", 1.0),
    ("(1) 계산하면 답: -4.45 이다.\n\n(2) 보기를 보면 답: ㄴ, ㄷ", "correct", 1.0),
    ("(1) \\boxed{-4.45} (2) \\boxed{ㄴ, ㄷ}", "correct", 1.0),
    ("정답: (1) -4.45 (2) ㄱ", "wrong", 0.5),
    ("정답: (1) 3 (2) ㄱ", "wrong", 0.0),
    ("정답: (1) -4.45", "wrong", 0.5),  # the second part is not answered
])
def test_parts(reply: str, expected: str, value: float) -> None:
    verdict = score_response(PARTS, reply)
    assert (verdict.outcome, verdict.value) == (expected, value), verdict.explanation
    assert len(verdict.details["parts"]) == 2


def test_parts_with_an_undecided_part() -> None:
    key = {"format": "parts", "labels": ["A:", "B:"],
           "parts": [{"format": "text", "accepted": ["농협"]}, {"format": "text", "accepted": ["수협"]}]}
    assert outcome(key, "정답: A: 농협, B: 수협") == "correct"
    mixed = score_response(key, "정답: A: 농협, B: 신협")
    assert mixed.outcome == "undecided" and mixed.value == 0.5
    assert [part["outcome"] for part in mixed.details["parts"]] == ["correct", "undecided"]
    assert outcome(key, "정답: A는 농협, B는 수협") == "correct"
    letters = {"format": "parts", "labels": ["(a)", "(b)"], "parts": [numeric("2"), numeric("3")]}
    assert outcome(letters, "정답: (a) 2 (b) 3") == "correct"
    assert outcome(letters, "정답: (A) 2 (B) 4") == "wrong"
    in_order = {"format": "parts", "parts": [numeric("2"), numeric("3")]}
    assert outcome(in_order, "정답: 2; 3") == "correct"


# --- choice -------------------------------------------------------------------------------------

CHOICE = {"format": "choice", "options": [1], "require_all": False}
OPTIONS = ["D 플립플롭", "RS 플립플롭", "T 플립플롭", "래치(latch)"]


@pytest.mark.parametrize(("reply", "expected"), [
    ("정답: D 플립플롭", "correct"),  # the option's text, not option D (4)
    ("정답은 **D 플립플롭**입니다.", "correct"),
    ("D 플립플롭", "correct"),
    ("정답: RS 플립플롭", "wrong"),
    ("정답: 1", "correct"),
    ("정답: ①", "correct"),
    ("\\boxed{1}", "correct"),
    ("정답: (1) D 플립플롭", "correct"),
    ("정답: 1, 3", "wrong"),  # two options for a single-answer item
    ("정답은 ①과 ③입니다.", "wrong"),
    ("\\boxed{1, 2}", "wrong"),
    ("정답: 4", "wrong"),
    ("따라서 D 플립플롭과 같은 동작을 한다. 최종 답: 이 회로는 D 플립플롭", "correct"),
])
def test_choice(reply: str, expected: str) -> None:
    verdict = score_response(CHOICE, reply, options=OPTIONS)
    assert verdict.outcome == expected, verdict.explanation
    assert verdict.checker_version == "choice-3"


SHAPES = ["A", "B", "C", "D"]
STEPS = ["시료를 건조한다", "시료를 가열한다", "시료를 냉각한다", "시료를 분쇄한다"]


@pytest.mark.parametrize(("reply", "options", "expected"), [
    # a reply that copies an option: its marker is the answer (choice-3)
    ("(3) C", SHAPES, 3),
    ("(2) $\\text{시료를}~\\text{가열}$한다", STEPS, 2),  # the option's text rewritten: the marker decides
    ("③ 시료를 냉각한다", STEPS, 3),
    ("2) 시료를 가열한다", STEPS, 2),
    ("### 최종 답변\n(4) 시료를 분쇄한다", STEPS, 4),
    ("(3) 시료를 건조한다", STEPS, None),  # marker and text name different options: no answer
    ("(1) 시료를 건조한다\n(2) 시료를 가열한다", STEPS, None),  # a list of options is no one answer
    ("(7) 시료를 굽는다", STEPS, None),  # no such option
    # "옳은 설명은 …" states an answer like "옳은 것은 …"
    ("각 보기를 검토하였다.\n\n따라서 옳은 설명은:\n\n**(2) 시료를 가열한다**\n\n입니다.", STEPS, 2),
    # a word that starts with an option letter is not that option
    ("SCAN이 아니라 C-SCAN을 써야 한다. 이동 거리를 다시 구하면 380이다.", SHAPES, None),
])
def test_choice_reads_a_reply_as_a_person_does(reply: str, options: list[str], expected: int | None) -> None:
    verdict = score_response({"format": "choice", "options": [3], "require_all": False}, reply, options=options)
    assert verdict.extracted == expected, verdict.explanation
    assert verdict.outcome == ("unparseable" if expected is None else "correct" if expected == 3 else "wrong")


def test_a_choice_response_that_loops_between_options_never_commits() -> None:
    key = {"format": "choice", "options": [4], "require_all": False}
    cycle = "".join(f"정답은 ({n}) {STEPS[n - 1]}입니다.\n\n그러나 이 과정은 조건에 맞지 않습니다.\n\n" for n in (1, 2, 3, 4))
    reply = "풀이를 시작합니다.\n\n따라서 정답은 (4) 시료를 분쇄한다입니다.\n\n" + cycle * 6
    verdict = score_response(key, reply, options=STEPS)
    assert verdict.outcome == "unparseable"  # it states (4) first, then cycles through every option
    settled = "풀이를 시작합니다.\n\n" + "따라서 정답은 (4) 시료를 분쇄한다입니다.\n\n다시 확인합니다.\n\n" * 30
    assert score_response(key, settled, options=STEPS).outcome == "correct"  # one answer, again and again


def test_choice_requiring_all_options() -> None:
    key = {"format": "choice", "options": [2, 4], "require_all": True}
    options = ["가", "나", "다", "라", "마"]
    assert outcome(key, "정답: 2, 4", options) == "correct"
    assert outcome(key, "정답: 2", options) == "wrong"
    assert outcome(key, "정답: 2, 3, 4", options) == "wrong"


# --- a concluding last sentence (the shared extraction's last resort) ------------------------------

_LONG = "그림의 선분을 하나씩 따라가며 만나는 점을 표시하고, 겹치는 도형을 빼며 다시 센다. " * 4


@pytest.mark.parametrize(("key", "reply", "expected", "read"), [
    (numeric("12"), "그림을 보면 가로줄이 세 개, 세로줄이 네 개 있다.\n\n따라서, 찾을 수 있는 삼각형은 모두 **12개**입니다.",
     "correct", "모두 12개"),
    (numeric("12"), "각 변을 세어 보았다. 따라서 삼각형은 모두 9개이다.", "wrong", "모두 9개"),
    ({"format": "set", "members": ["ㄴ", "ㄹ"]},
     "ㄱ. 기압이 높다. ㄴ. 바람이 약하다. ㄷ. 비가 온다. 따라서 옳지 않은 것은 ㄴ, ㄹ입니다.", "correct", ["ㄴ", "ㄹ"]),
    ({"format": "set", "members": ["ㄴ", "ㄹ"]}, "검토를 마쳤다.\n그러므로 옳은 것은 ㄱ, ㄷ이다.", "wrong", ["ㄱ", "ㄷ"]),
    # not a conclusion (and too long to be a bare answer): no connective, not the last line, or
    # no "X은/는 …이다" shape
    (numeric("12"), _LONG + "삼각형은 모두 12개입니다.", "unparseable", None),
    (numeric("12"), _LONG + "따라서 삼각형은 모두 12개입니다.\n\n추가 설명: 변의 수를 센 방법은 위와 같습니다", "unparseable", None),
    (numeric("12"), _LONG + "따라서 확정하기 어렵다", "unparseable", None),
])
def test_a_concluding_last_sentence_states_the_answer(key: dict[str, Any], reply: str, expected: str,
                                                      read: Any) -> None:
    verdict = score_response(key, reply)
    assert (verdict.outcome, verdict.extracted) == (expected, read), verdict.explanation


def test_a_set_answer_written_one_member_per_line() -> None:
    key = {"format": "set", "members": ["ㄱ", "ㄷ"]}
    reply = ("각 보기를 검토하였다.\n\n### 최종 답변\n**ㄱ. 기압이 높아지면 바람이 약해진다.**  \n"
             "**ㄷ. 전선이 지나가면 기온이 바뀐다.**\n\n→ 틀린 설명은 ㄱ, ㄷ.")
    verdict = score_response(key, reply)
    assert (verdict.outcome, verdict.extracted, verdict.checker_version) == ("correct", ["ㄱ", "ㄷ"], "set-2")
    one_line = "정답: ㄱ. 기압이 높아지면 ㄴ도 성립한다"  # one line: its leading member only, as before
    assert score_response(key, one_line).extracted == ["ㄱ"]
    mixed = "### 최종 답변\nㄱ. 기압이 높아지면 바람이 약해진다.\n그리고 ㄷ도 맞다."  # a line not opening with a member
    assert score_response(key, mixed).extracted == ["ㄱ"]


# --- the scorer's shared rules ------------------------------------------------------------------

ALL_KEYS = [CHOICE, numeric("0.5"), TEXT, SET, expression("\\frac{1}{2}"), JUDGED, PARTS]


@pytest.mark.parametrize("key", ALL_KEYS, ids=[key["format"] for key in ALL_KEYS])
def test_truncated_responses_are_errors(key: dict[str, Any]) -> None:
    cut = score_response(key, "정답: 1", options=OPTIONS, finish_reason="length")
    assert (cut.outcome, cut.error_kind) == ("error", "truncated")
    unclosed = score_response(key, "<think>풀이를 계속하면 정답: 1 이고", options=OPTIONS)
    assert (unclosed.outcome, unclosed.error_kind) == ("error", "truncated")
    closed = score_response(key, "<think>생각</think>", options=OPTIONS)
    assert closed.outcome == "unparseable"


@pytest.mark.parametrize("key", ALL_KEYS, ids=[key["format"] for key in ALL_KEYS])
def test_refusals_are_errors(key: dict[str, Any]) -> None:
    for reply in ("죄송하지만 이 질문에는 답변을 드릴 수 없습니다.", "I'm sorry, but I can't help with that."):
        verdict = score_response(key, reply, options=OPTIONS)
        assert (verdict.outcome, verdict.error_kind) == ("error", "refusal"), reply
    assert score_response(key, "답", options=OPTIONS, finish_reason="content_filter").error_kind == "refusal"


@pytest.mark.parametrize("key", ALL_KEYS, ids=[key["format"] for key in ALL_KEYS])
def test_a_response_that_loops_without_committing_is_unparseable(key: dict[str, Any]) -> None:
    loop = "풀이: " + "그러나 보기를 다시 살펴보면 조건이 성립하는지 확인해야 한다.\n" * 50
    assert outcome(key, loop, OPTIONS) == "unparseable"


def test_every_format_declares_its_instruction_text_and_key_reading() -> None:
    assert set(FORMATS) == {"choice", "numeric", "text", "set", "expression", "judged", "parts"}
    for name, fmt in FORMATS.items():
        assert fmt.name == name and fmt.version.startswith(f"{name}-")
        key = next(key for key in ALL_KEYS if key["format"] == name)
        instruction = fmt.instruction(key)
        assert instruction == "" if name == "choice" else "\\boxed" in instruction or "정답" in instruction
        assert fmt.answer_text(key)
    assert FORMATS["numeric"].answer_text(numeric("1.0", unit="mm")) == "1.0 mm"
    assert FORMATS["set"].answer_text(SET) == "ㄱ, ㄹ"
    assert FORMATS["parts"].answer_text(PARTS) == "(1) -4.45 (2) ㄴ, ㄷ"


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("set", "ㄴ, ㄷ, ㄹ", {"members": ["ㄴ", "ㄷ", "ㄹ"]}),
    ("set", "ㄱㄹ", {"members": ["ㄱ", "ㄹ"]}),
    ("numeric", "50.0", {"value": "50.0", "unit": None}),
    ("numeric", "1.0 mm", {"value": "1.0", "unit": "mm"}),
    ("numeric", "$2.72 \\times 10^{-6}\\ \\text{m/s}$", {"unit": "m/s"}),
    ("numeric", "c) $X = 0.5 + 0.4(200) = 80.5 \\ \\text{g/L}$", {"value": "80.5", "unit": "g/L"}),
    ("expression", "$\\frac{4}{\\sqrt{7}}$", {"latex": "\\frac{4}{\\sqrt{7}}"}),
    ("choice", "③", {"options": [3]}),
    ("choice", "2,4", {"options": [2, 4]}),
    ("text", "hydrogen bonding 또는 ion-dipole", {"accepted": ["hydrogen bonding", "ion-dipole"]}),
    ("judged", "긴 서술형\n답안", {"reference": "긴 서술형\n답안"}),
])
def test_parse_key_text(name: str, text: str, expected: dict[str, Any]) -> None:
    key = FORMATS[name].parse_key_text(text)
    assert key["format"] == name
    for field, value in expected.items():
        assert key[field] == value


@pytest.mark.parametrize(("name", "text"), [("set", "50.0"), ("numeric", "ㄱ, ㄴ"), ("numeric", "2:5"),
                                            ("numeric", "큰 별: 0.012 AU, 작은 별: 0.036 AU"),
                                            ("choice", "A: 농협"), ("parts", "(1) -4.45")])
def test_parse_key_text_refuses_what_is_not_its_format(name: str, text: str) -> None:
    with pytest.raises(ValueError):
        FORMATS[name].parse_key_text(text)


def test_parts_key_text() -> None:
    key = FORMATS["parts"].parse_key_text("(1) -4.45 (2) ㄴ, ㄷ (3) 미토콘드리아")
    assert key["labels"] == ["(1)", "(2)", "(3)"]
    assert [part["format"] for part in key["parts"]] == ["numeric", "set", "text"]
    assert outcome(key, "정답: (1) -4.45 (2) ㄴ,ㄷ (3) 미토콘드리아") == "correct"
