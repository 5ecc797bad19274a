"""KMMMU's real material (`../shared/realdata/kmmmu_judge`: 100 items × 4 models' responses, each
with the published judge's `is_correct`) against the labels a person made by reading the 400
responses (`tests/data/kmmmu_labels.csv`, README beside it), for the agreement tests, the end-to-end
test and `benchmarks/kmmmu_agreement.py`.

How an outcome is compared with a label (`label` is correct | incorrect | no_answer):

- **checker decision** (the rows a checker decides: outcome correct, wrong, unparseable or error):
  correct ↔ correct, wrong ↔ incorrect, unparseable or error ↔ no_answer (`checker_agrees`). An
  `undecided` row is not a checker decision: it is counted as "needs a judge".
- **credit** (what accuracy counts: correct or not; the published judge's true/false says no more):
  agree when (outcome is correct) == (label is correct) (`credit_agrees`). An outcome still
  `undecided` after the judge agrees only with a no_answer label (the response committed to nothing
  and got no credit); against correct or incorrect it is a disagreement, never a free agreement.
- **published judge alone**: `is_correct` true ↔ correct, false ↔ incorrect or no_answer.

The CSVs number their rows differently (the gpt-5-mini file's index column names other rows than
the other three files'), so a record is joined to its label through the row it was imported from
(`external.row` → that file's index column → the label's `item_id`), never by item id across files.

Two local servers speak the OpenAI chat-completions API for the tests (`tests/fault_server.py`):
`PublishedJudge` answers the answer judge's requests (`evaluation/answer_judge.py`'s prompt) with
the published `is_correct` of the response the request quotes; `ReplayedModels` answers `run`'s
requests with the real response of the model the request names, to the question the prompt carries.
"""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MODELS = ("gpt-5-mini", "qwen3-VL-2b-it", "qwen3-VL-30b-it", "varco2-14b")
LABELS = Path(__file__).resolve().parent / "data" / "kmmmu_labels.csv"
DECIDED = ("correct", "wrong", "unparseable", "error")
_AS_LABEL = {"correct": "correct", "wrong": "incorrect", "unparseable": "no_answer", "error": "no_answer"}


def judge_csv(realdata: Path, model: str) -> Path:
    return realdata / "kmmmu_judge" / f"{model}-1-llm-judge.csv"


def judge_csvs(realdata: Path) -> list[Path]:
    return [judge_csv(realdata, model) for model in MODELS]


def nfc(text: str | None) -> str:
    return unicodedata.normalize("NFC", text or "")


def fold(text: str | None) -> str:
    """NFC, whitespace runs as one space, ends stripped."""
    return " ".join(nfc(text).split())


def read_csv_rows(path: Path) -> list[dict[str, str]]:
    """A KMMMU judge CSV's rows in file order, NFC (responses run to 18,000 characters)."""
    csv.field_size_limit(1 << 30)
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return [{name: nfc(value) for name, value in row.items()} for row in csv.DictReader(handle)]


@dataclass(frozen=True)
class Label:
    model: str
    file_id: str  # the source file's index column
    question_type: str
    label: str  # correct | incorrect | no_answer
    final_answer: str
    published: bool  # the published judge's is_correct, copied beside the label
    note: str


def read_labels(path: Path = LABELS) -> dict[tuple[str, str], Label]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {(row["model"], row["item_id"]): Label(row["model"], row["item_id"], row["question_type"], row["label"],
                                                      row["final_answer"], row["judge"].strip() == "True", row["note"])
                for row in csv.DictReader(handle)}


# -- comparing outcomes with labels ---------------------------------------------------------------

def checker_agrees(outcome: str, label: str) -> bool:
    """A checker's decision against the label (correct/correct, wrong/incorrect, unparseable or error/no_answer)."""
    return _AS_LABEL.get(outcome) == label


def credit_agrees(outcome: str, label: str) -> bool:
    """Credit given or not, as the label gives it; `undecided` agrees only with no_answer."""
    if outcome == "undecided":
        return label == "no_answer"
    return (outcome == "correct") == (label == "correct")


def published_agrees(verdict: bool, label: str) -> bool:
    return verdict == (label == "correct")


@dataclass
class OutcomeRow:
    """One imported response: its outcome (now, and the checker's before any judge) beside its label."""

    model: str
    file_id: str
    item_id: str
    format: str
    outcome: str
    checker_outcome: str
    decided_by: str
    published: bool
    label: Label
    extracted: Any = None
    explanation: str = ""

    @property
    def question_type(self) -> str:
        return self.label.question_type


def outcome_rows(ws: Path, summaries: Iterable[dict[str, Any]]) -> list[OutcomeRow]:
    """Each imported record of the runs (`runs import --json`'s summaries) joined to its label."""
    from curation.core.workspace import open_workspace
    from evaluation.records import AnswerRecord, read_jsonl_records
    from evaluation.runlog import RESPONSES

    labels = read_labels()
    workspace = open_workspace(ws)
    rows: list[OutcomeRow] = []
    for summary in summaries:
        path = Path(summary["file"])
        model = next(name for name in MODELS if path.name.startswith(f"{name}-1-"))
        file_ids = [row[""] for row in read_csv_rows(path)]
        records = read_jsonl_records(Path(summary["run_dir"]) / RESPONSES, AnswerRecord)
        items = {item_id: stored.item for item_id, stored in workspace.store.get_many(list(records)).items()}
        for item_id, record in records.items():
            file_id = file_ids[record.external["row"] - 1]
            score = record.typed_score()
            checker = score.details.get("checker_outcome", score.outcome) if score.decided_by == "judge" else score.outcome
            rows.append(OutcomeRow(model, file_id, item_id, items[item_id].answer_format or "", score.outcome, checker,
                                   score.decided_by, bool(record.external["is_correct"]), labels[(model, file_id)],
                                   score.extracted, score.explanation or ""))
    return rows


@dataclass
class Tally:
    rows: int = 0
    decided: int = 0  # by a checker (correct, wrong, unparseable, error)
    decided_agree: int = 0  # checker decision = label (checker_agrees)
    decided_credit: int = 0  # … counting credit only (credit_agrees)
    undecided: int = 0  # left for a judge

    def add(self, row: OutcomeRow) -> None:
        self.rows += 1
        if row.checker_outcome in DECIDED:
            self.decided += 1
            self.decided_agree += checker_agrees(row.checker_outcome, row.label.label)
            self.decided_credit += credit_agrees(row.checker_outcome, row.label.label)
        else:
            self.undecided += 1

    @property
    def agreement(self) -> float:
        return self.decided_agree / self.decided if self.decided else float("nan")

    @property
    def credit(self) -> float:
        return self.decided_credit / self.decided if self.decided else float("nan")


def checker_tallies(rows: Iterable[OutcomeRow], by: Callable[[OutcomeRow], str]) -> dict[str, Tally]:
    tallies: dict[str, Tally] = defaultdict(Tally)
    for row in rows:
        tallies[by(row)].add(row)
        tallies["all"].add(row)
    return dict(tallies)


def checker_table(rows: list[OutcomeRow]) -> str:
    """The checkers against the labels, per answer format and per model."""
    lines = [f"{'':24} {'rows':>5} {'decided':>8} {'agree':>14} {'credit agree':>14} {'need a judge':>13}"]
    for title, by in (("format", lambda r: r.format), ("model", lambda r: r.model)):
        lines.append(f"by {title}")
        tallies = checker_tallies(rows, by)
        for name in [*sorted(set(tallies) - {"all"}), "all"]:
            t = tallies[name]
            lines.append(f"  {name:22} {t.rows:5} {t.decided:8} {t.decided_agree:5} ({t.agreement:6.1%}) "
                         f"{t.decided_credit:5} ({t.credit:6.1%}) {t.undecided:5} ({t.undecided / t.rows:5.1%})")
    return "\n".join(lines)


def disagreements(rows: Iterable[OutcomeRow]) -> list[OutcomeRow]:
    """Rows a checker decided otherwise than the label."""
    return [row for row in rows if row.checker_outcome in DECIDED and not checker_agrees(row.checker_outcome,
                                                                                          row.label.label)]


def describe(row: OutcomeRow) -> str:
    shown = json.dumps(row.extracted, ensure_ascii=False) if row.extracted is not None else "-"
    return (f"{row.model} #{row.file_id} ({row.format}): {row.checker_outcome} → {row.outcome}, label {row.label.label}"
            f" [{row.label.final_answer[:40]!r}]; read {shown[:50]}; {row.label.note[:70]}")


@dataclass
class FinalFigures:
    rows: int
    judged: int  # responses the judge was asked about
    credit_agree: int  # final outcome vs label (credit_agrees)
    strict_agree: int  # final outcome vs label, three ways (correct / incorrect / no_answer)
    published_agree: int  # the published judge alone vs label
    left_undecided: int
    misses: list[OutcomeRow] = field(default_factory=list)

    def line(self) -> str:
        n = self.rows
        return (f"checkers + judge {self.credit_agree}/{n} ({self.credit_agree / n:.1%}; three ways "
                f"{self.strict_agree / n:.1%}), judge asked {self.judged}/{n} ({self.judged / n:.1%}), "
                f"left undecided {self.left_undecided}; published judge alone {self.published_agree}/{n} "
                f"({self.published_agree / n:.1%})")


def final_figures(rows: list[OutcomeRow], judged: int) -> FinalFigures:
    credit = [credit_agrees(row.outcome, row.label.label) for row in rows]
    strict = [checker_agrees(row.outcome, row.label.label) or (row.outcome == "undecided"
                                                               and row.label.label == "no_answer") for row in rows]
    return FinalFigures(len(rows), judged, sum(credit), sum(strict),
                        sum(published_agrees(row.published, row.label.label) for row in rows),
                        sum(row.outcome == "undecided" for row in rows),
                        [row for row, ok in zip(rows, credit, strict=True) if not ok])


# -- a judge that replays the published verdicts -----------------------------------------------------
_OMITTED = re.compile(r"\n\n\[… \d+자 생략 …\]\n\n")


def judge_sections(prompt_text: str) -> tuple[str, str]:
    """(question, response excerpt) of an answer-judge request (system and user text joined)."""
    user = prompt_text.split("[문제]\n", 1)[1]
    question = re.split(r"\n\n\[(?:선택지|정답)\]\n", user, maxsplit=1)[0]
    response = user.split("\n\n[응답]\n", 1)[1].rsplit("\n\n[응답에서 읽은 최종 답]\n", 1)[0]
    return question, response


@dataclass
class _Logged:
    model: str
    file_id: str
    question: str  # folded
    response: str  # folded
    verdict: bool


class PublishedJudge:
    """A judge's responder (`ServerConfig(responder=…)`): finds the KMMMU row whose question holds the
    request's question and whose response is the one quoted (the whole of it, or its start and its
    end around the judge prompt's `[… N자 생략 …]`), and answers its
    published `is_correct` ("true"/"false"). A request it cannot place, or places on rows with
    different verdicts, is listed in `misses` and answered with neither word (the judge's answer is
    then invalid: the record stays undecided, which the tests count)."""

    def __init__(self, realdata: Path):
        self.rows = [_Logged(model, row[""], fold(row["question"]), fold(row["response"]),
                             row["is_correct"].strip().lower() == "true")
                     for model in MODELS for row in read_csv_rows(judge_csv(realdata, model))]
        self.asked: list[tuple[str, str]] = []  # (model, file id) of every request placed
        self.misses: list[str] = []

    def place(self, prompt_text: str) -> list[_Logged]:
        question, excerpt = judge_sections(prompt_text)
        stem = fold(question)
        pieces = [fold(piece) for piece in _OMITTED.split(excerpt)]
        head, tail = pieces[0], pieces[-1]  # the whole response, or its start and its end
        return [row for row in self.rows if stem in row.question and (
            row.response == head if len(pieces) == 1 else row.response.startswith(head) and row.response.endswith(tail))]

    def __call__(self, prompt_text: str, body: dict[str, Any]) -> str:
        found = self.place(prompt_text)
        verdicts = {row.verdict for row in found}
        if len(verdicts) != 1:
            self.misses.append(f"{len(found)} rows for {judge_sections(prompt_text)[0][:60]!r}")
            return "모르겠습니다"
        self.asked.extend((row.model, row.file_id) for row in found)
        return "true" if verdicts.pop() else "false"


# -- models that replay their logged responses -------------------------------------------------------

def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    index = 0
    while index < n and a[index] == b[index]:
        index += 1
    return index


class ReplayedModels:
    """A model server's responder: the request's `model` names a KMMMU file; the reply is that file's
    response to the row whose question starts as the prompt's `[문제]` does (the longest common
    start wins). Requests it cannot place are listed in `misses` and answered with an empty reply."""

    def __init__(self, realdata: Path, models: Iterable[str] = MODELS):
        self.rows = {model: [(fold(row["question"]), row["response"], row[""])
                             for row in read_csv_rows(judge_csv(realdata, model))] for model in models}
        self.served: dict[str, dict[str, str]] = defaultdict(dict)  # model → question start → file id
        self.misses: list[str] = []

    def __call__(self, prompt_text: str, body: dict[str, Any]) -> str:
        model = body.get("model", "")
        if model not in self.rows or "[문제]\n" not in prompt_text:
            self.misses.append(f"not a question for a replayed model: {model!r}")
            return ""
        asked = fold(prompt_text.split("[문제]\n", 1)[1])
        scored = sorted(((_common_prefix(question, asked), file_id, response)
                         for question, response, file_id in self.rows[model]), reverse=True)
        best, file_id, response = scored[0]
        if best < 20 or (len(scored) > 1 and scored[1][0] == best):
            self.misses.append(f"{model}: no single row for {asked[:60]!r}")
            return ""
        self.served[model][asked[:80]] = file_id
        return response
