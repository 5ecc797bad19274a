"""Answer parsing, table-driven: realistic model replies (written for this project, in the
styles seen in real Korean exam runs) and what must come out of them."""

from __future__ import annotations

import pytest

from scoring.portable.choice_parsing import parse_response, split_thinking, to_option

# (reply, number of options, expected answer, expected method)
CASES: list[tuple[str, int, int | list[int] | None, str | None]] = [
    # JSON, the format the prompts ask for
    ('{"정답": 3}', 4, 3, "json"),
    ('{"정답": "3"}', 4, 3, "json"),
    ('{"정답": "③"}', 5, 3, "json"),
    ('{"정답": "2번"}', 4, 2, "json"),
    ("{'정답': 4}", 4, 4, "json"),
    ("{'정답': '1번', '이유': '정의에 따라'}", 4, 1, "json"),
    ('```json\n{"정답": 2}\n```', 4, 2, "json"),
    ('```\n{"정답": 5}\n```\n위와 같이 답합니다.', 5, 5, "json"),
    ('풀이를 정리하면 다음과 같다.\n{"생성된_추론_근거": "등압선 간격이 좁을수록 풍속이 크다.", "정답": 1}', 4, 1, "json"),
    ('{"answer": "C"}', 4, 3, "json"),
    ('{"answer": 2, "confidence": 0.7}', 4, 2, "json"),
    ('{"정답": [1, 3]}', 5, [1, 3], "json"),
    ('{"정답": "1, 4"}', 5, [1, 4], "json"),
    ('{"최종_정답": 4}', 4, 4, "json"),
    ('먼저 {"정답": 1}이라고 생각했지만 다시 보니\n{"정답": 2}', 4, 2, "json"),
    ('{ "정답" : 3 , }', 4, 3, "json"),  # a trailing comma is tolerated
    ('{"풀이": "{괄호}가 들어간 설명", "정답": 2}', 4, 2, "json"),
    # Korean answer statements
    ("정답: ③", 5, 3, "text"),
    ("정답 : ②", 4, 2, "text"),
    ("정답은 3번입니다.", 4, 3, "text"),
    ("따라서 정답은 4번이다.", 4, 4, "text"),
    ("답: 3", 4, 3, "text"),
    ("답 : (1)", 4, 1, "text"),
    ("정답: (3) 화살표 반대 방향으로 목길이 7mm 용접", 4, 3, "text"),
    ("따라서 정답은 **(4) 래치(latch)**입니다.", 4, 4, "text"),
    ("**정답: ②** 보기의 설명 중 대류권만 해당한다.", 4, 2, "text"),
    ("각 보기를 검토하면 ①은 틀리고 ③이 맞다.\n\n정답: ③", 4, 3, "text"),
    ("최종 답: 2", 4, 2, "text"),
    ("최종 정답은 ⑤입니다.", 5, 5, "text"),
    ("3번이 정답입니다.", 4, 3, "text"),
    ("②가 정답이다.", 4, 2, "text"),
    ("(4)가 정답입니다. 나머지는 모두 조건에 어긋난다.", 4, 4, "text"),
    ("따라서, 올바른 선택지는 **(3)** 입니다.", 4, 3, "text"),
    ("옳은 것은 2번이다.", 4, 2, "text"),
    ("적절한 것은 ④이다.", 4, 4, "text"),
    ("정답은 3번이 아니라 4번입니다.", 4, 4, "text"),
    ("정답은 ①, ③입니다.", 5, [1, 3], "text"),
    ("정답: 2, 4", 5, [2, 4], "text"),
    ("1번은 기압이 높은 곳이므로 틀렸고, 정답은 2번입니다. 3번은 옳지 않다.", 4, 2, "text"),
    ("정답: ③\n\n해설: 선택지 ③의 조건이 그림과 일치한다. 선택지 (2)는 방향이 반대다.", 4, 3, "text"),
    # English forms
    ("Answer: C", 4, 3, "text"),
    ("The answer is B.", 4, 2, "text"),
    ("Final answer: 4", 4, 4, "text"),
    ("After checking each option, the correct answer is (A).", 4, 1, "text"),
    ("answer: d", 4, None, None),  # a lowercase letter is not read as an option
    # a reply that is only an option
    ("(3)", 4, 3, "bare"),
    ("③", 5, 3, "bare"),
    ("2", 4, 2, "bare"),
    ("4번", 4, 4, "bare"),
    ("B", 4, 2, "bare"),
    ("  ② .", 4, 2, "bare"),
    # thinking blocks: kept apart, the answer read after them
    ("<think>1번은 아닌 것 같다. 3번?</think>\n정답: 2", 4, 2, "text"),
    ('<think>계산: 30 ÷ 6 = 5</think>{"정답": 1}', 4, 1, "json"),
    ("등압선을 비교한다.</think>\n\n정답은 4번입니다.", 4, 4, "text"),
    # rejected options are never returned
    ("3번은 옳지 않다.", 4, None, None),
    ("정답은 2번이 아닙니다.", 4, None, None),
    ("정답은 1번이 아니다. 2번도 틀렸다.", 4, None, None),
    ("Answer: 2 is not correct because the front moves east.", 4, None, None),
    # numbers that are not option numbers
    ("정답: 50.0", 4, None, None),
    ("정답: 3개", 5, None, None),
    ("정답은 2011년이다.", 4, None, None),
    ("정답: 7", 4, None, None),  # out of range
    ('{"정답": 9}', 4, None, None),
    ("정답: ㄱ, ㄹ", 5, None, None),
    # no answer at all
    ("문제의 조건만으로는 판단하기 어렵습니다.", 4, None, None),
    ("", 4, None, None),
    ("즉, 10월 적립 포인트가 사용 포인트보다 크다는 의미\n" * 20, 4, None, None),
    ("이 선택지는 올바릅니다. 이 선택지는 불가능합니다.", 4, None, None),
    ("정답 해설을 작성하기 위해 다음을 고려한다.", 4, None, None),
]


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize(("reply", "n_options", "expected", "method"), CASES, ids=[f"case{i:02d}" for i in range(len(CASES))])
def test_parse(reply: str, n_options: int, expected, method) -> None:
    parsed = parse_response(reply, n_options)
    assert parsed.answer == expected, reply
    assert parsed.method == method


def test_thinking_is_kept_and_unclosed_thinking_is_truncation() -> None:
    closed = parse_response("<think>기압 경도를 비교한다.</think>정답: 1", 4)
    assert closed.thinking == "기압 경도를 비교한다." and not closed.truncated and closed.answer == 1
    cut = parse_response("<think>1번을 보면 정답: 3 같은데 계속 생각해 보면", 4)
    assert cut.truncated and cut.answer is None and "계속 생각해" in cut.thinking
    visible, thinking, truncated = split_thinking("<thinking>a</thinking>b<think>c</think>d")
    assert (visible, thinking, truncated) == ("bd", "a\n\nc", False)


def test_reasoning_json_keeps_the_rationale() -> None:
    parsed = parse_response('{"생성된_추론_근거": "온난 전선 앞에서는 층운형 구름이 나타난다.", "정답": "②"}', 4)
    assert parsed.answer == 2 and parsed.rationale.startswith("온난 전선")


def test_refusal_is_recognised() -> None:
    assert parse_response("죄송하지만 이 질문에는 답변을 드릴 수 없습니다.", 4).refusal
    assert parse_response("I'm sorry, but I can't help with that.", 4).refusal
    assert not parse_response("죄송하지만 정답은 2번입니다.", 4).refusal


@pytest.mark.parametrize(("token", "expected"), [("③", 3), ("(2)", 2), ("4번", 4), ("E", 5), (True, None), (2.0, 2),
                                                 ("0", None), ("ㄱ", None)])
def test_to_option(token, expected) -> None:
    assert to_option(token, 5) == expected
