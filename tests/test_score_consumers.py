"""Every consumer reads the Score: a workspace of choice, numeric, set and text items with points
(배점), answered by three models on a local OpenAI-compatible server whose replies this file
scripts, two of the runs judged by an answer judge on the same server and one answer settled by
a person; then `report` (and `--paper`), `filter hard`, `probe` and `analyze items` through the
CLI. Every expected figure is computed here from the script's own table of replies and what
each reply is (the outcome a reader of the key gives it), never read back from the code."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.fault_server import Scripted, ServerConfig, ServerThread
from tests.runs_import_support import is_judge_request, judge_reply

PAPER, SESSION = "모의고사", "2025-06"  # the paper with points
OTHER = "기상기사"  # a paper without points

# item → (format, key, points)
KEYS: dict[str, tuple[str, dict, float | None]] = {
    "c1": ("choice", {"format": "choice", "options": [2]}, 2),
    "c2": ("choice", {"format": "choice", "options": [3]}, 3),
    "c3": ("choice", {"format": "choice", "options": [1]}, 3),
    "c4": ("choice", {"format": "choice", "options": [4]}, None),  # on the paper, without points
    "n1": ("numeric", {"format": "numeric", "value": "17"}, 4),
    "n2": ("numeric", {"format": "numeric", "value": "1/2"}, 4),
    "n3": ("numeric", {"format": "numeric", "value": "3.2"}, 3),
    "s1": ("set", {"format": "set", "members": ["ㄱ", "ㄷ"]}, 3),
    "s2": ("set", {"format": "set", "members": ["ㄴ"]}, 3),
    "t1": ("text", {"format": "text", "accepted": ["서울"]}, 2),
    "t2": ("text", {"format": "text", "accepted": ["광합성"]}, 2),
    "t3": ("text", {"format": "text", "accepted": ["질소"], "strict": True}, 2),
    "t4": ("text", {"format": "text", "accepted": ["바람"]}, 2),
    "g1": ("choice", {"format": "choice", "options": [1]}, None),
    "g2": ("choice", {"format": "choice", "options": [3]}, None),
}
OTHER_PAPER = {"g1", "g2"}
TRUNCATED = "<truncated>"
PROSE = "계산이 복잡해서 어느 보기인지 고르지 못했다."
# model → item → (what it answers, the final outcome, who decided it). A choice answer is an option
# number; an open answer is written in \boxed{}. The outcomes are what the keys above make of them:
# a non-strict text key leaves an unmatched answer undecided; the judge (answers judged for m0 and m1
# only) says true when the key's answer appears in the response's last line; a person settles m1's t2.
REPLIES: dict[str, dict[str, tuple[object, str, str]]] = {
    "m0": {"c1": (2, "correct", "checker"), "c2": (3, "correct", "checker"), "c3": (2, "wrong", "checker"),
           "c4": (4, "correct", "checker"), "n1": ("17", "correct", "checker"), "n2": ("1/2", "correct", "checker"),
           "n3": ("5", "wrong", "checker"), "s1": ("ㄷ, ㄱ", "correct", "checker"), "s2": ("ㄱ", "wrong", "checker"),
           "t1": ("서울특별시", "correct", "judge"), "t2": ("광합성", "correct", "checker"),
           "t3": ("산소", "wrong", "checker"), "t4": ("비", "wrong", "judge"), "g1": (1, "correct", "checker"),
           "g2": (1, "wrong", "checker")},
    "m1": {"c1": (1, "wrong", "checker"), "c2": (3, "correct", "checker"), "c3": (PROSE, "unparseable", "checker"),
           "c4": (4, "correct", "checker"), "n1": ("42", "wrong", "checker"), "n2": ("0.5", "correct", "checker"),
           "n3": ("6", "wrong", "checker"), "s1": ("ㄱ, ㄷ", "correct", "checker"), "s2": ("ㄴ", "correct", "checker"),
           "t1": ("부산", "wrong", "judge"), "t2": ("엽록체에서 일어나는 반응", "correct", "human"),
           "t3": ("질소", "correct", "checker"), "t4": ("눈", "wrong", "judge"), "g1": (1, "correct", "checker"),
           "g2": (3, "correct", "checker")},
    "m2": {"c1": (2, "correct", "checker"), "c2": (TRUNCATED, "error", "checker"), "c3": (1, "correct", "checker"),
           "c4": (1, "wrong", "checker"), "n1": ("42", "wrong", "checker"), "n2": ("0.25", "wrong", "checker"),
           "n3": ("7", "wrong", "checker"), "s1": ("ㄱ", "wrong", "checker"), "s2": ("ㄴ", "correct", "checker"),
           "t1": ("대구", "undecided", "checker"), "t2": ("잎", "undecided", "checker"),
           "t3": ("산소", "wrong", "checker"), "t4": ("구름", "undecided", "checker"), "g1": (2, "wrong", "checker"),
           "g2": (3, "correct", "checker")},
}
JUDGED = ("m0", "m1")
HUMAN = ("m1", "t2")


def item_records() -> list[dict]:
    rows = []
    for number, (item_id, (fmt, key, points)) in enumerate(KEYS.items(), start=1):
        exam, session = (OTHER, None) if item_id in OTHER_PAPER else (PAPER, SESSION)
        record = {"id": item_id, "source": {"exam": exam, "session": session, "number": number},
                  "stem": f"[{item_id}] 다음 물음에 답하시오.", "answer": key, "points": points,
                  "options": [{"text": f"[{item_id}] 보기 {k}"} for k in range(1, 5)] if fmt == "choice" else []}
        rows.append(record)
    return rows


def responder(prompt: str, body: dict) -> object:
    if is_judge_request(prompt):
        return judge_reply(prompt)
    item_id = next((i for i in KEYS if f"[{i}]" in prompt), None)
    model = body["model"]
    if item_id is None or model not in REPLIES:
        return json.dumps({"정답": 1})
    said = REPLIES[model][item_id][0]
    if said == TRUNCATED:
        return Scripted(fault="truncated")
    if isinstance(said, int):
        return json.dumps({"정답": said})
    if said == PROSE:
        return PROSE
    return f"풀이를 차례로 적으면 다음과 같다.\n따라서 답은 \\boxed{{{said}}}"


def _cli(*args: str) -> dict:
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout) if "--json" in args else {}


@pytest.fixture(scope="module")
def answered(tmp_path_factory):
    """The workspace, its three runs (two judged, one answer settled by a person), and the server."""
    root = tmp_path_factory.mktemp("consumers")
    ws = root / "ws"
    _cli("init", str(ws))
    pool = root / "pool.jsonl"
    pool.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in item_records()), encoding="utf-8")
    _cli("items", "import", str(pool), "-w", str(ws))
    with ServerThread(ServerConfig(responder=responder)) as server:
        url = f"{server.url}/v1"
        judged = _cli("run", *(x for m in JUDGED for x in ("-m", f"openai-compatible:{m}@{url}")),
                      "--judge", f"openai-compatible:judge@{url}", "--no-progress", "--json", "-w", str(ws))
        plain = _cli("run", "-m", f"openai-compatible:m2@{url}", "--retries", "0", "--no-progress", "--json",
                     "-w", str(ws))  # a truncated reply is an error at once
        ids = [run["run_id"] for run in [*judged["runs"], plain]]
        runs = {model: next(i for i in ids if f"-{model}-" in i) for model in REPLIES}
        _settle_by_a_person(ws / "runs" / runs[HUMAN[0]], HUMAN[1])
        yield ws, runs, url


def _settle_by_a_person(run_dir: Path, item_id: str) -> None:
    """What a reviewer's verdict appends: the record again, decided by a human."""
    lines = (run_dir / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    record = [json.loads(line) for line in lines if json.loads(line)["item_id"] == item_id][-1]
    record["outcome"] = "correct"
    record["score"] |= {"outcome": "correct", "value": 1.0, "decided_by": "human", "judge_model": None}
    with (run_dir / "responses.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def _expected(model: str, items: list[str]) -> dict[str, object]:
    """What the report should say of these items, from the table: undecided outside n."""
    outcomes = Counter(REPLIES[model][i][1] for i in items)
    deciders = Counter(REPLIES[model][i][2] for i in items if REPLIES[model][i][1] != "undecided")
    n = len(items) - outcomes["undecided"]
    return {"n": n, "correct": outcomes["correct"], "undecided": outcomes["undecided"],
            "unparseable": outcomes["unparseable"], "error": outcomes["error"],
            "accuracy": round(outcomes["correct"] / n, 4) if n else None,
            "if_wrong": round(outcomes["correct"] / len(items), 4),
            "if_right": round((outcomes["correct"] + outcomes["undecided"]) / len(items), 4),
            "judge": deciders["judge"], "human": deciders["human"]}


def test_the_runs_hold_the_outcomes_the_table_says(answered):
    ws, runs, _ = answered
    for model, run_id in runs.items():
        shown = _cli("runs", "show", run_id, "--json", "-w", str(ws))
        got = {r["item_id"]: (r["outcome"], r["decided_by"]) for r in shown["records"]}
        assert got == {item: (outcome, who) for item, (_, outcome, who) in REPLIES[model].items()}, model


@pytest.fixture(scope="module")
def reported(answered) -> Path:
    """`report --paper` of the three runs."""
    ws, runs, _ = answered
    out = ws.parent / "report"
    _cli("report", *runs.values(), "-o", str(out), "--no-charts", "--paper", "--resamples", "200", "-w", str(ws))
    return out


def test_report_counts_undecided_apart_and_says_who_decided(answered, reported):
    _, runs, _ = answered
    out = reported
    with (out / "accuracy.csv").open(encoding="utf-8") as handle:
        rows = {(row["run_id"], row["subset"]): row for row in csv.DictReader(handle)}
    formats = {fmt: [i for i, (f, _, _) in KEYS.items() if f == fmt] for fmt in ("choice", "numeric", "set", "text")}
    common = [i for i in KEYS if all(REPLIES[m][i][1] != "undecided" for m in REPLIES)]
    for model, run_id in runs.items():
        subsets = {"overall": list(KEYS), "common": common, **{f"format:{f}": items for f, items in formats.items()}}
        for subset, items in subsets.items():
            row, want = rows[(run_id, subset)], _expected(model, items)
            got = {"n": int(row["n"]), "correct": int(row["correct"]), "undecided": int(row["undecided"]),
                   "unparseable": int(row["unparseable"]), "error": int(row["error"]),
                   "accuracy": float(row["accuracy"]) if row["accuracy"] else None,
                   "if_wrong": float(row["accuracy_if_undecided_wrong"]),
                   "if_right": float(row["accuracy_if_undecided_correct"]),
                   "judge": int(row["decided_by_judge"]), "human": int(row["decided_by_human"])}
            assert got == want, (model, subset)
    m2 = _expected("m2", list(KEYS))
    assert m2["undecided"] == 3 and m2["n"] == len(KEYS) - 3  # the undecided stay out of n, counted apart
    text = (out / "report.md").read_text(encoding="utf-8")
    overall = _expected("m1", list(KEYS))
    assert f"(n={overall['n']}; {overall['judge']} by judge, {overall['human']} by person)" in text
    assert f"(n={m2['n']}; {m2['undecided']} undecided)" in text
    assert "Undecided answers" in text and "left out of n" in text


def _points(model: str) -> dict[str, float]:
    on_paper = [i for i, (_, _, points) in KEYS.items() if points is not None]
    total = sum(KEYS[i][2] for i in on_paper)  # type: ignore[misc]
    earned = sum(KEYS[i][2] for i in on_paper if REPLIES[model][i][1] == "correct")  # type: ignore[misc]
    undecided = sum(KEYS[i][2] for i in on_paper if REPLIES[model][i][1] == "undecided")  # type: ignore[misc]
    return {"total": total, "earned": earned, "undecided": undecided}


def test_the_exam_score_is_the_points_earned_out_of_the_papers_total(answered, reported):
    _, runs, _ = answered
    out = reported
    with (out / "exam_scores.csv").open(encoding="utf-8") as handle:
        rows = {row["run_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == set(runs.values())  # one paper has points: one row per model; the other paper none
    unpointed = [i for i, (_, _, points) in KEYS.items() if points is None and i not in OTHER_PAPER]
    for model, run_id in runs.items():
        row, want = rows[run_id], _points(model)
        assert (row["exam"], row["session"]) == (PAPER, SESSION)
        assert float(row["total_points"]) == want["total"] == 33
        assert float(row["earned_points"]) == want["earned"], model
        assert float(row["undecided_points"]) == want["undecided"], model
        assert float(row["unanswered_points"]) == 0
        assert int(row["items_without_points"]) == len(unpointed) == 1
    assert [_points(m)["earned"] for m in ("m0", "m1", "m2")] == [20, 17, 8]
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "## Exam score (배점)" in text
    assert f"| {PAPER} · {SESSION} | 20 / 33 ·" in text
    assert f"8 / 33 ({_points('m2')['undecided']:g} undecided)" in text
    board = (out / "paper" / "leaderboard.md").read_text(encoding="utf-8")
    assert f"points: {PAPER} · {SESSION}" in board
    assert all(f"{_points(m)['earned']:g}/33" in board for m in REPLIES)


def test_the_hard_filter_never_counts_an_undecided_answer_as_unsolved(answered):
    ws, runs, _ = answered
    done = _cli("filter", "hard", *(x for run in runs.values() for x in ("--run", run)), "--json", "-w", str(ws))
    record = json.loads(Path(done["record"]).read_text(encoding="utf-8"))
    outcomes = {item: [REPLIES[m][item][1] for m in REPLIES] for item in KEYS}
    survivors = sorted(i for i, seen in outcomes.items() if all(o == "wrong" for o in seen))
    undetermined = sorted(i for i, seen in outcomes.items() if "correct" not in seen and i not in survivors)
    assert sorted(record["survivors"]) == survivors == ["n3"]
    assert sorted(record["undetermined"]) == undetermined == ["t4"]  # two judged wrong, one still undecided
    assert any("undecided" in why for why in record["undetermined"]["t4"])


def test_probes_ask_choice_items_only_and_say_why_the_others_are_left_out(answered):
    ws, _, url = answered
    done = _cli("probe", "-m", f"openai-compatible:m0@{url}", "--no-baselines", "--json", "-w", str(ws))
    choice = [i for i, (fmt, _, _) in KEYS.items() if fmt == "choice"]
    for variant in ("options-only", "question-only"):
        figures = done["accuracy"][f"openai-compatible:m0 {variant}"]
        assert figures["n"] == len(choice)
        assert figures["skipped"] == {f"not a choice item ({variant} probes choice items only)": len(KEYS) - len(choice)}


def test_item_analysis_reads_open_items_zero_one_scores(answered, tmp_path):
    ws, _, _ = answered
    done = _cli("analyze", "items", "--json", "--bootstrap", "0", "-o", str(tmp_path / "ia"), "-w", str(ws))
    stats = {item["item_id"]: item for item in done["items"]}
    for item_id in KEYS:
        seen = [REPLIES[m][item_id][1] for m in REPLIES]
        decided = [o for o in seen if o in ("correct", "wrong")]
        assert stats[item_id]["n"] == len(decided), item_id
        assert stats[item_id]["share_correct"] == round(decided.count("correct") / len(decided), 4), item_id
