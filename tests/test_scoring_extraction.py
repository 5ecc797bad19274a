"""The final answer an open-answer response states (scoring/portable/extraction.py): replies
written for these tests in the styles seen in real Korean exam runs."""

from __future__ import annotations

import pytest

from scoring.portable.extraction import boxed_all, final_answer, last_boxed, loop_start, nfkc, strip_label

# (reply, expected answer text, expected method); None: no final answer
CASES: list[tuple[str, str | None, str | None]] = [
    # boxed, braces nested, the last one winning
    ("따라서 \\boxed{\\frac{1}{2}} 이다.", "\\frac{1}{2}", "boxed"),
    ("\\boxed{\\sqrt{\\frac{2keQ}{mR}}}", "\\sqrt{\\frac{2keQ}{mR}}", "boxed"),
    ("처음엔 \\boxed{3} 이라 했지만 다시 계산하면 \\boxed{4}", "4", "boxed"),
    ("집합은 \\boxed{\\{1, 2\\}}", "\\{1, 2\\}", "boxed"),
    ("정답: $\\boxed{0.5}$", "0.5", "boxed"),
    ("\\boxed{ㄱ, ㄹ}", "ㄱ, ㄹ", "boxed"),
    ("\\fbox{7}", "7", "boxed"),
    # statements, the last one winning
    ("정답: 42", "42", "statement"),
    ("계산하면 다음과 같다.\n정답은 30 m이다.", "30 m", "statement"),
    ("정답은 미토콘드리아입니다.", "미토콘드리아", "statement"),
    ("답: 0.5", "0.5", "statement"),
    ("**정답:** ㄱ, ㄷ", "ㄱ, ㄷ", "statement"),
    ("Answer: 12", "12", "statement"),
    ("The final answer is 7.", "7", "statement"),
    ("최종 답: $x^2$", "$x^2$", "statement"),
    ("먼저 정답: 3 이라고 썼으나 틀렸다.\n정답: 5", "5", "statement"),
    ("정답:\n16: 내가 그들을 때린다.\n17: 우리가 나를 때린다.\n\n참고: 해석은 다양하다.",
     "16: 내가 그들을 때린다.\n17: 우리가 나를 때린다", "statement"),
    ("정답은 다음과 같다.\n(1) 4\n\n(2) 5\n\n이상이다.", "(1) 4\n(2) 5", "statement"),
    ("### 최종 답변\n\n**ㄴ, ㄷ, ㄹ**", "ㄴ, ㄷ, ㄹ", "statement"),
    ("정답 해설: 보기를 차례로 본다.\n정답: 2", "2", "statement"),
    # JSON with an answer key
    ('{"풀이": "계산", "정답": "0.5"}', "0.5", "json"),
    ('```json\n{"answer": ["ㄱ", "ㄹ"]}\n```', "ㄱ, ㄹ", "json"),
    # a reply that is only the answer
    ("42", "42", "bare"),
    ("$\\frac{1}{2}$", "\\frac{1}{2}", "bare"),
    ("MYETERNALLIFE", "MYETERNALLIFE", "bare"),
    # nothing stated
    ("", None, None),
    ("문제의 조건을 정리하면 여러 경우가 있다. " * 20, None, None),
]


@pytest.mark.parametrize(("reply", "expected", "method"), CASES, ids=[f"case{i:02d}" for i in range(len(CASES))])
def test_final_answer(reply: str, expected: str | None, method: str | None) -> None:
    stated = final_answer(reply)
    if expected is None:
        assert stated is None, stated
    else:
        assert stated is not None, reply
        assert stated.text == expected
        assert stated.method == method


def test_boxed_braces_nest_and_unclosed_boxes_are_skipped() -> None:
    assert [content for _, content in boxed_all("\\boxed{\\frac{a}{b}} 그리고 \\boxed{x^{2}}")] == [
        "\\frac{a}{b}", "x^{2}"]
    assert last_boxed("\\boxed{\\frac{1}{2}") is None
    assert last_boxed("\\boxed{1} \\boxed{\\frac{1}{2") == "1"


def test_a_loop_that_never_commits_has_no_answer() -> None:
    chunk = "- 즉, 10월 구매로 적립된 포인트가 10월 동안 사용한 포인트보다 크다는 의미\n"
    looping = "표를 보면 다음과 같다.\n" + chunk * 40
    assert loop_start(looping) is not None
    assert final_answer(looping) is None
    assert final_answer(looping, tail=1500) is None  # not even a judge's tail
    # the loop's statements do not count: the model never committed
    stuck = "계산을 시작한다.\n" + "그러나 정답은 3일 수도 있고 아닐 수도 있다. 다시 생각해 보자.\n" * 30
    assert final_answer(stuck) is None


def test_an_answer_stated_before_a_loop_counts() -> None:
    reply = "정답: 7\n" + "검산: 3 + 4 = 7 이므로 맞다. 다시 검산한다.\n" * 30
    stated = final_answer(reply)
    assert stated is not None and stated.text == "7"


def test_a_long_reply_without_a_loop_is_not_a_loop() -> None:
    prose = " ".join(f"{n}번째 단계에서 값은 {n * 7}이다." for n in range(200))
    assert loop_start(prose) is None


def test_the_tail_is_what_a_judge_reads_when_nothing_is_stated() -> None:
    reply = "서론. " + "가" * 3000 + " 결론은 세포벽이 있다는 것."
    stated = final_answer(reply, tail=1500)
    assert stated is not None and stated.method == "tail" and len(stated.text) == 1500
    assert stated.text.endswith("결론은 세포벽이 있다는 것.")
    assert final_answer(reply) is None


def test_nfkc_keeps_jamo_and_reads_circled_numbers() -> None:
    assert nfkc("㉠, ㄹ") == "ㄱ, ㄹ"
    assert nfkc("①③") == "13"
    assert nfkc("$\\textcircled{2}$") == "2"


@pytest.mark.parametrize(("text", "expected"), [("(1) 3.2", "3.2"), ("a) x", "x"), ("A: 농협", "농협"), ("3.2", "3.2")])
def test_strip_label(text: str, expected: str) -> None:
    assert strip_label(text) == expected
