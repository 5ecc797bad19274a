"""Helpers for the `runs import` tests and bench: store items made from a KMMMU-shaped CSV (a small
stand-in for the KMMMU importer: options split off the question, a key per question type), a
KMMMU-shaped CSV writer, and a judge that answers the answer judge's requests."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

from curation.core.item import parse_item
from curation.core.workspace import Workspace

CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"
_OPTION = re.compile(r"^\s*(?:\((\d{1,2})\)|([①-⑩])|(\d{1,2})[.)])\s+(.+)$")
KMMMU_HEADER = ["", "question", "answer", "image_link", "response", "is_correct", "subject_macro", "visual_type",
                "question_type", "is_korean_specific"]


def split_options(question: str) -> tuple[str, list[str]]:
    """(stem, options) when the question ends with options numbered 1..n (n ≥ 2); else (question, [])."""
    lines = question.rstrip().split("\n")
    options: list[str] = []
    start = len(lines)
    for index in range(len(lines) - 1, -1, -1):
        match = _OPTION.match(lines[index])
        if match is None:
            break
        number = match.group(1) or match.group(3)
        value = int(number) if number else CIRCLED.index(match.group(2)) + 1
        options.insert(0, match.group(4).strip())
        start = index
        if value == 1:
            break
    if len(options) < 2:
        return question, []
    stem = re.sub(r"\n*\s*선택지\s*:?\s*$", "", "\n".join(lines[:start]).rstrip()).rstrip()
    return (stem, options) if stem else (question, [])


def _numbers(answer: str, n_options: int) -> list[int] | None:
    numbers = []
    for token in (t.strip("().번 ") for t in re.split(r"[,/\s]+", answer.strip()) if t.strip()):
        if token in CIRCLED:
            numbers.append(CIRCLED.index(token) + 1)
        elif token.isdigit():
            numbers.append(int(token))
        else:
            return None
    ok = numbers and len(set(numbers)) == len(numbers) and all(1 <= n <= n_options for n in numbers)
    return numbers if ok else None


def kmmmu_key(answer: str, question_type: str, options: list[str]) -> dict[str, Any]:
    answer = answer.strip()
    if options and question_type.startswith("객관식"):
        numbers = _numbers(answer, len(options))
        if numbers is not None:
            return {"format": "choice", "options": numbers, "require_all": len(numbers) > 1}
    if re.fullmatch(r"[ㄱ-ㅎ](\s*,\s*[ㄱ-ㅎ])*", answer):
        return {"format": "set", "members": [m.strip() for m in answer.split(",")]}
    if question_type.startswith("주관식(수치") and re.fullmatch(r"-?[\d.,/]+", answer.replace(" ", "")):
        return {"format": "numeric", "value": answer.replace(" ", "")}
    return {"format": "text", "accepted": [answer]}


def kmmmu_item_records(path: Path) -> list[dict[str, Any]]:
    """Store items for the rows of a KMMMU CSV: the unnamed index column is the id."""
    records = []
    with path.open(newline="", encoding="utf-8-sig") as handle:
        for row in csv.DictReader(handle):
            question_type = row.get("question_type") or ""
            stem, options = split_options(row["question"]) if question_type.startswith("객관식") else (row["question"], [])
            key = kmmmu_key(row["answer"], question_type, options)
            if key["format"] != "choice":  # the options stay in the question
                stem, options = row["question"], []
            records.append({"id": row[""], "source": {"exam": "KMMMU", "subject": row.get("subject_macro") or None},
                            "stem": stem, "options": [{"text": text} for text in options], "answer": key,
                            "status": "extracted"})
    return records


def add_kmmmu_items(workspace: Workspace, path: Path) -> int:
    items = [parse_item(record) for record in kmmmu_item_records(path)]
    workspace.store.save_items(items, author="test", stage="import")
    return len(items)


def write_kmmmu_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=KMMMU_HEADER)
        writer.writeheader()
        for row in rows:
            writer.writerow({name: row.get(name, "") for name in KMMMU_HEADER})
    return path


# -- a judge on the local server ---------------------------------------------------------------
JUDGE_SYSTEM_START = "당신은 시험 채점자입니다."


def is_judge_request(prompt_text: str) -> bool:
    return prompt_text.startswith(JUDGE_SYSTEM_START)


def _section(text: str, name: str) -> str:
    match = re.search(rf"\[{re.escape(name)}\]\n(.*?)(?=\n\n\[|\Z)", text, re.S)
    return match.group(1).strip() if match else ""


def judge_reply(prompt_text: str) -> str:
    """`true` when the response's last line names the key's first line (a judge that reads the
    answer as a person would), else `false`."""
    key = _section(prompt_text, "정답").splitlines()[0]
    response = _section(prompt_text, "응답").strip().splitlines()
    last = response[-1] if response else ""
    return "true" if key and key.replace(" ", "") in last.replace(" ", "") else "false"


def broken_judge_reply(prompt_text: str) -> str:
    return "음, 판단하기 어렵습니다. 아마도?"
