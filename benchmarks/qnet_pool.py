"""A generated pool shaped like a user's Q-Net CSVs, for the dedup and pipeline benchmarks.

30 exams (a field × 기사/산업기사/기능사), sessions of 20 questions per subject, stems from
shared templates with exam vocabulary, shared option sets (laws, numbers with units), and the
reuse real papers show: questions asked again in later sessions (verbatim, spacing changed,
options permuted, a number or a word changed), the same question in a sibling exam, and
10% of rows marking a question image. Deterministic for a seed.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterator
from pathlib import Path

from curation.importers import make_item_id

FIELDS = ["건설안전", "산업안전", "방재", "인간공학", "소방설비", "전기", "가스", "위험물", "대기환경", "수질환경"]
LEVELS = ["기사", "산업기사", "기능사"]
SUBJECTS = ["안전관리론", "인간공학 및 시스템안전", "기계위험방지기술", "전기위험방지기술", "화학설비위험방지기술"]
LAWS = ["산업안전보건법령", "재난 및 안전관리 기본법", "건설기술 진흥법", "소방시설법", "위험물안전관리법", "대기환경보전법"]
NOUNS = ["안전보건표지", "작업발판", "비계", "거푸집", "굴착면", "방호장치", "안전대", "보호구", "국소배기장치", "가스누출경보기",
         "피뢰설비", "접지극", "누전차단기", "방폭구조", "저장탱크", "방유제", "집진장치", "침사지", "소화설비", "유도등",
         "안전검사", "위험성평가", "작업환경측정", "특별교육", "관리감독자", "안전보건위원회", "재해조사", "산업재해율",
         "풍수해", "재난관리기금", "긴급구조", "대피시설", "침수흔적도", "하천제방", "사면안정", "지진가속도"]
PROPS = ["설치 기준", "점검 주기", "허용 한계", "최소 높이", "최대 간격", "정격 전류", "절연 저항", "유효 기간"]
UNITS = ["m", "cm", "mm", "MPa", "kPa", "kg", "A", "MΩ", "℃", "%", "㎛", "lux", "dB"]
ASKS = ["옳은 것은?", "옳지 않은 것은?", "해당하지 않는 것은?", "가장 적절한 것은?", "틀린 것은?"]
TEMPLATES = [
    "{law}상 {noun}에 관한 설명으로 {ask}",
    "{law}에 따른 {noun}의 {prop}으로 {ask}",
    "{noun}의 {prop}이 {n}{unit}일 때 {noun2}의 {prop2}은 약 얼마인가?",
    "다음 중 {noun}과 {noun2}에 대한 설명으로 {ask}",
    "{noun}을 {n}{unit} 이상 설치하여야 하는 경우로 {ask}",
    "{noun}의 종류 중 {noun2}에 해당하는 것은?",
    "{law}상 {noun}을 실시하여야 하는 사업장의 기준으로 {ask}",
    "{n}{unit}의 {noun}에서 {prop}을 구하면? (단, {noun2}은 {m}{unit2}이다.)",
]


def exam_names() -> list[str]:
    return [f"{field}{level}" for field in FIELDS for level in LEVELS]


PREFIXES = ["가설", "이동식", "고정식", "임시", "상설", "옥외", "옥내", "지하", "고소", "밀폐", "비상", "정밀", "정기", "수시",
            "특수", "일반", "자동", "수동", "대형", "소형", "중량", "경량", "방폭형", "내진", "간이"]
VERBS = ["설치하여야 한다", "점검하여야 한다", "기록하여야 한다", "보고하여야 한다", "교체하여야 한다", "측정한다",
         "표시한다", "제거한다", "보관한다", "교육한다", "평가한다", "유지한다"]


def _term(rng: random.Random) -> str:
    return f"{rng.choice(PREFIXES)} {rng.choice(NOUNS)}"


def _fill(rng: random.Random) -> dict[str, object]:
    return {"law": rng.choice(LAWS), "noun": _term(rng), "noun2": _term(rng), "prop": rng.choice(PROPS),
            "prop2": rng.choice(PROPS), "ask": rng.choice(ASKS), "n": rng.randint(1, 500), "m": rng.randint(1, 99),
            "unit": rng.choice(UNITS), "unit2": rng.choice(UNITS)}


def _new_question(rng: random.Random) -> tuple[str, list[str], int]:
    slots = _fill(rng)
    stem = rng.choice(TEMPLATES).format(**slots)
    roll = rng.random()
    if roll < 0.04:
        options = rng.sample(LAWS, 4)  # a shared option set
    elif roll < 0.12:
        unit, base = rng.choice(UNITS), rng.randint(1, 50)
        options = [f"{base * k}{unit}" for k in (1, 2, 3, 4)]
    else:
        options = [f"{_term(rng)}의 {rng.choice(PROPS)}은 {rng.randint(1, 300)}{rng.choice(UNITS)} 이상으로 "
                   f"{rng.choice(VERBS)}" for _ in range(4)]
    return stem, options, rng.randint(1, 4)


def _reuse(stem: str, options: list[str], answer: int, rng: random.Random) -> tuple[str, list[str], int]:
    kind = rng.random()
    options = list(options)
    if kind < 0.35:
        return stem, options, answer  # asked again verbatim
    if kind < 0.55:
        return stem.replace(" ", "  ", 1).replace("?", " ?"), [o.replace(" ", "") for o in options], answer
    if kind < 0.75:
        order = list(range(4))
        rng.shuffle(order)
        return stem, [options[k] for k in order], order.index(answer - 1) + 1
    if kind < 0.97:  # same template, a word and an option changed: a different question
        words = stem.split()
        words[rng.randrange(len(words))] = _term(rng)
        options[rng.randrange(4)] = f"{_term(rng)} {rng.randint(1, 99)}{rng.choice(UNITS)}"
        return " ".join(words), options, rng.randint(1, 4)
    return stem, options, answer % 4 + 1  # the same question with another key (a typo in the key)


def generate_records(n: int, seed: int = 7, reuse: float = 0.3, sibling: float = 0.01) -> list[dict]:
    """`n` benchsmith item records in paper order (exam, year, session, subject, number)."""
    rng = random.Random(seed)
    exams = exam_names()
    asked: dict[str, list[tuple[str, list[str], int]]] = {exam: [] for exam in exams}
    records: list[dict] = []
    per_paper = 20 * len(SUBJECTS)
    paper = 0
    while len(records) < n:
        exam = exams[paper % len(exams)]
        year, session = 2005 + (paper // len(exams)) // 3, (paper // len(exams)) % 3 + 1
        for k in range(min(per_paper, n - len(records))):
            subject = SUBJECTS[k // 20]
            roll = rng.random()
            # papers reuse their own exam's questions, now and then a sibling exam's
            source = exam if rng.random() < 0.97 else rng.choice(exams)
            if asked[source] and roll < reuse:
                stem, options, answer = _reuse(*rng.choice(asked[source]), rng)
            else:
                stem, options, answer = _new_question(rng)
                asked[exam].append((stem, options, answer))
            image = f"{exam}_{year}_{session}_{k + 1}.png" if rng.random() < 0.1 else ""
            records.append({"id": make_item_id(exam, year, session, subject, f"{k % 20 + 1:03d}"),
                            "source": {"exam": exam, "session": f"{year}-{session}", "subject": subject,
                                       "number": k % 20 + 1},
                            "stem": stem, "options": [{"text": o} for o in options], "answer": answer,
                            "extra": {"question_image": image} if image else {}})
            if rng.random() < sibling and len(records) < n:  # the same question in a sibling exam's paper
                sibling_exam = exams[(exams.index(exam) + 1) % len(exams)]
                copy = {**records[-1], "id": f"{records[-1]['id']}-{sibling_exam}",
                        "source": {**records[-1]["source"], "exam": sibling_exam}}
                records.append(copy)
        paper += 1
    return records[:n]


QNET_HEADER = ["Test Name", "Year", "Session", "Subject", "Number", "Question", "Question_image",
               "Option 1", "Option 2", "Option 3", "Option 4", "Answer"]


def qnet_rows(records: list[dict]) -> Iterator[tuple[str, list[str]]]:
    """(file name, CSV row) per record: one file per exam paper, as Q-Net exports come."""
    for record in records:
        source = record["source"]
        year, session = source["session"].split("-")
        file_name = f"{source['exam']}-{year}-{session}.csv"
        yield file_name, [source["exam"], year, session, source["subject"], str(source["number"]), record["stem"],
                          record["extra"].get("question_image", ""), *(o["text"] for o in record["options"]),
                          str(record["answer"])]


def write_qnet_csvs(records: list[dict], folder: Path) -> list[Path]:
    """The records as Q-Net CSV files (one per paper); sibling-exam copies go to their own file."""
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, list[list[str]]] = {}
    for file_name, row in qnet_rows(records):
        files.setdefault(file_name, []).append(row)
    paths = []
    for file_name, rows in files.items():
        path = folder / file_name
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(QNET_HEADER)
            writer.writerows(rows)
        paths.append(path)
    return paths
