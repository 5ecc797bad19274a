"""`benchsmith rescore RUN`: scores recomputed from the logged text (nothing re-sent). On an
unchanged checker nothing changes; when the logged scores were made by another checker version,
exactly the records whose score differs get a new line; a person's verdict is kept."""

from __future__ import annotations

import json
from pathlib import Path

from curation.core.item import parse_item
from evaluation.records import AnswerRecord, read_jsonl_records
from evaluation.runlog import RESPONSES
from scoring.portable import get_format
from tests.conftest import run_cli


def _numeric_item(number: int, value: str, unit: str | None = None) -> dict:
    return {"id": f"open-{number:02d}", "source": {"exam": "표본 단답형", "number": number},
            "stem": f"문항 {number}: 값을 구하시오.", "answer": {"format": "numeric", "value": value, "unit": unit},
            "points": 3}


REPLIES = {  # item → (key value, reply, the outcome a reader gives it)
    1: ("0.5", "풀이 … 따라서 \\boxed{\\frac{1}{2}}", "correct"),
    2: ("12", "정답: 13", "wrong"),
    3: ("7", "답은 7입니다.\n정답: 7", "correct"),
    4: ("2.5", "계산하면 \\boxed{2.50}", "correct"),
    5: ("30", "잘 모르겠습니다.", "unparseable"),
}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _rescore(ws: Path, run_id: str, *extra: str) -> dict:
    done = run_cli("rescore", run_id, "-w", str(ws), "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["runs"][0]


def test_rescore_changes_nothing_on_the_same_checker_and_exactly_what_another_version_decided(workspace, tmp_path):
    items = [parse_item(_numeric_item(n, value)) for n, (value, _, _) in REPLIES.items()]
    workspace.store.save_items(items, author="test", stage="test")
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps({"id": f"open-{n:02d}", "response": reply}, ensure_ascii=False) + "\n"
                               for n, (_, reply, _) in REPLIES.items()), encoding="utf-8")
    done = run_cli("runs", "import", str(replies), "--model", "m", "--run-id", "imported", "-w", str(workspace.root),
                   "--json")
    assert done.returncode == 0, done.stderr
    log = workspace.root / "runs" / "imported" / RESPONSES
    records = read_jsonl_records(log, AnswerRecord)
    assert {r.item_id: r.outcome for r in records.values()} == {f"open-{n:02d}": o for n, (_, _, o) in REPLIES.items()}

    lines_before = len(_lines(log))
    same = _rescore(workspace.root, "imported")
    assert (same["rescored"], same["unchanged"], same["changes"]) == (0, 5, {})
    assert len(_lines(log)) == lines_before  # nothing appended

    # Two records as an older numeric checker left them (wrong outcomes, an older version), and one
    # settled by a person: rescore puts back exactly the two, and keeps the person's verdict.
    version = get_format("numeric").version
    older = []
    for number in (1, 4):
        line = records[f"open-{number:02d}"].model_dump(mode="json", exclude_none=True)
        line["outcome"] = "wrong"
        line["score"] |= {"outcome": "wrong", "value": 0.0, "checker_version": "numeric-0"}
        older.append(line)
    person = records["open-02"].model_dump(mode="json", exclude_none=True)
    person["outcome"] = "correct"
    person["score"] |= {"outcome": "correct", "value": 1.0, "decided_by": "human"}
    older.append(person)
    with log.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in older)

    dry = _rescore(workspace.root, "imported", "--dry-run")
    assert dry["rescored"] == 2
    changed = _rescore(workspace.root, "imported")
    assert (changed["rescored"], changed["changes"], changed["kept_verdicts"]) == (2, {"wrong→correct": 2}, 1)
    after = read_jsonl_records(log, AnswerRecord)
    assert after["open-01"].outcome == after["open-04"].outcome == "correct"
    assert after["open-01"].typed_score().checker_version == version
    assert after["open-02"].outcome == "correct" and after["open-02"].typed_score().decided_by == "human"
    assert len(_lines(log)) == lines_before + len(older) + 2
    assert _rescore(workspace.root, "imported")["rescored"] == 0  # settled
