"""The questions of the sample exam, written for this project (기상기사 style, not copied from any paper).

A stem or option is a list of pieces: plain text, or a `Formula` that the typesetter draws with
raised/lowered smaller spans and the ground truth writes as LaTeX. The correct option is always
listed first here; the generator shuffles options with the seed and records where it went.
Every question has its 배점 (`points`), printed in the key table. The short-answer questions
(단답형, at the end of the paper) have no options: their key is a number or a word, as printed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

OptionLayout = Literal["row", "grid", "lines"]
FigureKind = Literal["chart", "diagram", "formula_image"]


@dataclass(frozen=True)
class Formula:
    """Inline formula: `runs` are (text, "" | "sup" | "sub") as printed; `latex` is the truth."""

    runs: tuple[tuple[str, str], ...]
    latex: str


Piece = str | Formula
Rich = tuple[Piece, ...]


@dataclass(frozen=True)
class QuestionSpec:
    stem: Rich
    options: tuple[Rich, ...]
    layout: OptionLayout = "lines"
    bogi: tuple[str, ...] = ()
    figure: FigureKind | None = None
    image_options: bool = False
    review: tuple[str, ...] = field(default=())
    table: tuple[tuple[str, ...], ...] = ()  # a ruled table under the stem (first row: header)
    points: int = 2  # 배점


@dataclass(frozen=True)
class ShortAnswerSpec:
    """A short-answer question: no options; the key table prints `answer`, a number (`numeric`)
    or a word (`text`)."""

    stem: Rich
    answer: str
    format: Literal["numeric", "text"]
    points: int = 4


@dataclass(frozen=True)
class SubjectSpec:
    number: int
    name: str
    questions: tuple[QuestionSpec, ...]


def _as_rich(value: str | Rich) -> Rich:
    return value if isinstance(value, tuple) else (value,)


def _q(stem: str | Rich, options: list[str | Rich], **kwargs) -> QuestionSpec:
    as_rich = _as_rich
    return QuestionSpec(as_rich(stem), tuple(as_rich(option) for option in options), **kwargs)


OMEGA = Formula((("7.29×10", ""), ("-5", "sup"), (" s", ""), ("-1", "sup")), r"7.29\times 10^{-5}\,\mathrm{s^{-1}}")
CORIOLIS = Formula((("1.03×10", ""), ("-4", "sup"), (" s", ""), ("-1", "sup")), r"1.03\times 10^{-4}\,\mathrm{s^{-1}}")
CORIOLIS_B = Formula((("7.29×10", ""), ("-5", "sup"), (" s", ""), ("-1", "sup")), r"7.29\times 10^{-5}\,\mathrm{s^{-1}}")
CORIOLIS_C = Formula((("1.46×10", ""), ("-4", "sup"), (" s", ""), ("-1", "sup")), r"1.46\times 10^{-4}\,\mathrm{s^{-1}}")
CORIOLIS_D = Formula((("5.15×10", ""), ("-5", "sup"), (" s", ""), ("-1", "sup")), r"5.15\times 10^{-5}\,\mathrm{s^{-1}}")
DEWPOINT = Formula((("T", ""), ("d", "sub")), r"T_{d}")
SURFACE_P = Formula((("p", ""), ("0", "sub")), r"p_{0}")

SUBJECTS: tuple[SubjectSpec, ...] = (
    SubjectSpec(1, "기상학개론", (
        _q("대류권에서 고도가 높아질수록 기온이 낮아지는 평균적인 비율로 가장 가까운 것은?",
           ["약 6.5 ℃/km", "약 1.0 ℃/km", "약 9.8 ℃/km", "약 0.5 ℃/km"], layout="grid"),
        _q("다음 중 대기의 성층 가운데 오존층이 주로 위치하는 곳은?",
           ["성층권", "대류권", "중간권", "열권"], layout="row"),
        _q("구름의 생성과 관련된 설명으로 옳은 것을 모두 고른 것은?",
           ["ㄱ, ㄴ", "ㄱ", "ㄴ, ㄷ", "ㄱ, ㄴ, ㄷ"], layout="row",
           bogi=("ㄱ. 공기가 단열 상승하면 냉각되어 상대습도가 높아진다.",
                 "ㄴ. 응결핵이 있으면 과포화가 작아도 응결이 시작된다.",
                 "ㄷ. 이슬점온도가 기온보다 높을 때 구름이 소멸한다."), points=3),
        _q("상대습도에 대한 설명으로 가장 옳은 것은?",
           ["현재 수증기압을 그 온도의 포화수증기압으로 나눈 백분율이다.",
            "단위 부피의 공기에 들어 있는 수증기의 질량이다.",
            "건조공기 1 kg에 포함된 수증기의 질량이다.",
            "공기가 포화될 때까지 냉각해야 하는 온도이다."], layout="lines"),
        _q("그림은 어느 관측소에서 측정한 기온의 연직 분포이다. 기온 역전층이 나타나는 고도 구간으로 가장 알맞은 것은?",
           ["0.5~1.0 km", "0~0.5 km", "1.5~2.0 km", "2.5~3.0 km"], layout="grid", figure="chart", points=3),
        _q("해륙풍에 대한 설명으로 옳지 않은 것은?",
           ["해풍은 주로 밤에 육지에서 바다 쪽으로 분다.",
            "낮에는 육지가 바다보다 빨리 가열된다.",
            "해륙풍은 국지 순환의 한 종류이다.",
            "맑고 바람이 약한 날에 잘 나타난다."], layout="lines"),
    )),
    SubjectSpec(2, "일기분석및예보법", (
        _q("지상 일기도에서 등압선 간격이 좁은 지역에 대한 설명으로 옳은 것은?",
           ["기압경도력이 커서 바람이 강하다.", "기압경도력이 작아 바람이 약하다.",
            "항상 고기압의 중심이다.", "강수가 전혀 나타나지 않는다."], layout="lines"),
        _q("겨울철 한반도에 영향을 주는 대표적인 기단은?",
           ["시베리아 기단", "북태평양 기단", "적도 기단", "오호츠크해 기단"], layout="grid"),
        _q("그림과 같은 연직 단면을 갖는 전선으로 가장 알맞은 것은?",
           ["한랭전선", "온난전선", "정체전선", "폐색전선"], layout="row", figure="diagram", points=3),
        _q("기상청 단기예보에서 강수확률 70 %의 의미로 가장 옳은 것은?",
           ["같은 예보 조건에서 10번 중 약 7번 강수가 있었다.", "예보 구역의 70 %에 비가 온다.",
            "하루 중 70 %의 시간 동안 비가 온다.", "강수량이 70 mm 이상이다."], layout="lines"),
        _q("태풍의 진행 방향 오른쪽 반원을 위험반원이라 부르는 까닭과 관계가 깊은 것을 모두 고른 것은?",
           ["ㄱ, ㄷ", "ㄱ", "ㄴ", "ㄴ, ㄷ"], layout="row",
           bogi=("ㄱ. 태풍 자체의 바람과 이동 속도가 더해진다.",
                 "ㄴ. 왼쪽 반원보다 기압이 항상 높다.",
                 "ㄷ. 바람이 강해 해상에서 파고가 높아진다."), points=3),
    )),
    SubjectSpec(3, "기상관측법", (
        _q("우리나라 지상기상관측에서 기온을 측정하는 백엽상 또는 통풍식 센서의 설치 높이로 가장 알맞은 것은?",
           ["지상 1.5 m", "지상 0.5 m", "지상 3.0 m", "지상 10 m"], layout="grid"),
        _q("다음 일기기호 가운데 안개를 나타내는 것은?",
           ["fog", "rain", "snow", "thunder"], layout="row", image_options=True),
        _q("풍향을 기록하는 방법으로 옳은 것은?",
           ["바람이 불어오는 방향을 기록한다.", "바람이 불어가는 방향을 기록한다.",
            "구름이 이동하는 방향만 기록한다.", "등압선의 방향을 기록한다."], layout="lines"),
        _q("기상 레이더가 강수 입자의 양을 추정할 때 주로 이용하는 값은?",
           ["반사도", "일사량", "운고", "시정"], layout="row"),
        (_q(("관측한 기온이 25 ℃이고 이슬점온도 ", DEWPOINT, "가 25 ℃일 때 상대습도는?"),
            ["100 %", "50 %", "75 %", "25 %"], layout="row")),
    )),
    SubjectSpec(4, "대기역학", (
        _q(("지구 자전 각속도를 ", OMEGA, "라 할 때 위도 45°에서 코리올리 인자에 가장 가까운 값은?"),
           [(CORIOLIS,), (CORIOLIS_B,), (CORIOLIS_C,), (CORIOLIS_D,)], layout="grid", points=3),
        _q("지균풍에 대한 설명으로 옳은 것은?",
           ["기압경도력과 전향력이 평형을 이룬 바람이다.", "마찰력과 원심력이 평형을 이룬 바람이다.",
            "지표 부근에서만 부는 바람이다.", "등압선을 직각으로 가로질러 분다."], layout="lines"),
        _q("다음 식으로 나타내는 대기의 기본 방정식은?",
           ["정역학 방정식", "연속 방정식", "열역학 제1법칙", "상태 방정식"], layout="grid",
           figure="formula_image", review=("formula image: LaTeX still to transcribe",)),
        _q(("해면기압을 ", SURFACE_P, "라 할 때 고도가 높아지면 기압은 어떻게 변하는가?"),
           ["지수적으로 감소한다.", "일정하게 유지된다.", "선형으로 증가한다.", "지수적으로 증가한다."],
           layout="grid"),
        _q("건조단열감률에 가장 가까운 값은?",
           ["9.8 ℃/km", "6.5 ℃/km", "3.0 ℃/km", "12.0 ℃/km"], layout="grid"),
    )),
    SubjectSpec(5, "기후학", (
        _q("쾨펜의 기후 구분에서 가장 따뜻한 달의 평균기온이 10 ℃ 미만인 기후는?",
           ["한대 기후", "열대 기후", "건조 기후", "온대 기후"], layout="grid"),
        _q("엘니뇨 시기의 특징에 해당하는 것을 모두 고른 것은?",
           ["ㄱ, ㄴ", "ㄱ", "ㄷ", "ㄴ, ㄷ"], layout="row",
           bogi=("ㄱ. 적도 동태평양의 해수면 온도가 평년보다 높다.",
                 "ㄴ. 무역풍이 평년보다 약해진다.",
                 "ㄷ. 페루 연안의 용승이 강해진다."), points=3),
        _q("온실효과에 가장 크게 기여하는 자연 대기의 기체는?",
           ["수증기", "질소", "아르곤", "산소"], layout="row"),
        _q("도시 열섬 현상에 대한 설명으로 옳지 않은 것은?",
           ["바람이 강한 날에 가장 뚜렷하게 나타난다.", "도시 중심부의 기온이 교외보다 높다.",
            "인공 열 배출이 원인 가운데 하나이다.", "맑고 바람이 약한 밤에 잘 나타난다."], layout="lines"),
        _q("우리나라 장마의 시작과 관련이 깊은 전선은?",
           ["정체전선", "한랭전선", "온난전선", "폐색전선"], layout="grid"),
    )),
)

# The passage variant: a reading passage with ㉠/㉡/㉢ and [A]/[B] markers shared by two questions.
PASSAGE = ("[A] 장마철에는 ㉠ 정체전선이 한반도 부근에 오래 머물며 많은 비를 내린다. 전선의 북쪽에는 ㉡ 차고 습한 "
           "기단이, 남쪽에는 덥고 습한 기단이 자리한다. [B] 장마가 끝나면 북태평양 고기압이 확장하여 ㉢ 무더위가 "
           "이어진다.")
PASSAGE_QUESTIONS: tuple[QuestionSpec, ...] = (
    _q("윗글의 ㉠에 대한 설명으로 가장 옳은 것은?",
       ["두 기단의 세력이 비슷하여 거의 움직이지 않는다.", "찬 기단이 더운 기단 밑으로 빠르게 파고든다.",
        "고기압의 중심에서 만들어진다.", "겨울철에만 나타난다."], layout="lines"),
    _q("[B]에서 ㉢의 원인이 되는 기단은?",
       ["북태평양 기단", "시베리아 기단", "오호츠크해 기단", "양쯔강 기단"], layout="grid"),
)

# The table variant: a question whose stem holds a ruled table.
TABLE_QUESTION = _q("다음 표는 세 관측소에서 같은 날 관측한 최고기온과 최저기온이다. 일교차가 가장 큰 관측소는?",
                    ["대전", "서울", "부산", "세 곳이 같다"], layout="grid",
                    table=(("관측소", "최고기온(℃)", "최저기온(℃)"), ("서울", "31.2", "22.5"),
                           ("대전", "33.0", "21.8"), ("부산", "29.4", "24.1")))

# The short-answer questions (단답형) that end the paper: three numbers and a word.
SHORT_ANSWERS: tuple[ShortAnswerSpec, ...] = (
    ShortAnswerSpec(("어느 관측소의 1월 평균기온이 -2.5 ℃이고 8월 평균기온이 26.3 ℃일 때 기온의 연교차(℃)를 구하시오.",),
                    "28.8", "numeric"),
    ShortAnswerSpec(("지상 기온이 20 ℃이고 기온감률이 6.5 ℃/km로 일정할 때 고도 2 km에서의 기온(℃)을 구하시오.",),
                    "7", "numeric"),
    ShortAnswerSpec(("풍속 10 m/s로 부는 바람을 따라 공기가 36 km를 이동하는 데 걸리는 시간(분)을 구하시오.",),
                    "60", "numeric", points=3),
    ShortAnswerSpec(("지표 부근의 수증기가 응결한 작은 물방울이 떠 있어 수평 시정이 1 km 미만이 되는 현상의 이름을 쓰시오.",),
                    "안개", "text", points=3),
)
