"""`runs import`: another tool's responses become ordinary run records (matched to store items by id,
else by question text; every row left out listed with its reason; scored by the items' checkers,
the tool's own verdicts kept beside ours), and the answer judge on the command line (`--judge`,
`--judge-all`, `[judge]` in benchsmith.toml) against a real local server speaking the OpenAI API."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from curation.core.item import parse_item
from evaluation.records import AnswerRecord, RunManifest, read_jsonl_records
from evaluation.runlog import RESPONSES, read_answer_manifest
from scoring.portable import FORMATS
from tests.conftest import run_cli
from tests.eval_support import seed_items, text_record
from tests.fault_server import ServerConfig, ServerThread
from tests.runs_import_support import (
    add_kmmmu_items,
    broken_judge_reply,
    is_judge_request,
    judge_reply,
    write_kmmmu_csv,
)


def _import(ws: Path, path: Path, model: str, *extra: str) -> dict:
    done = run_cli("runs", "import", str(path), "--model", model, "-w", str(ws), "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _records(ws: Path, run_id: str) -> dict[str, AnswerRecord]:
    return read_jsonl_records(ws / "runs" / run_id / RESPONSES, AnswerRecord)


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_jsonl_of_responses_is_a_run_that_every_reader_reads(workspace, tmp_path):
    ids = seed_items(workspace, n_text=6, n_image=0)
    question_of_5 = workspace.store.get("eval-text-005").item.stem
    rows = [
        {"id": "eval-text-001", "response": "정답: ①"},
        {"item_id": "eval-text-002", "text": '{"정답": 3}'},
        {"id": "eval-text-003", "response": "잘 모르겠습니다."},
        {"id": "eval-text-004", "response": "정답은 4번", "finish_reason": "length"},
        {"id": "no-such-item", "response": "1"},
        {"id": "eval-text-001", "response": "정답: ②"},  # a second answer to the same item
        {"question": "  " + question_of_5.replace(" ", "\n  ") + " ", "response": "정답: 2"},  # by its text
        {"response": "정답: 1"},
        {"id": "eval-text-006"},
    ]
    summary = _import(workspace.root, _jsonl(tmp_path / "replies.jsonl", rows), "other-tool-model")
    assert (summary["rows"], summary["matched"], summary["judged"]) == (9, 5, 0)
    assert summary["matched_by"] == {"id": 4, "question": 1}
    assert summary["unmatched"] == [
        {"row": 5, "reason": "no item 'no-such-item' and carries no question text"},
        {"row": 6, "reason": "item 'eval-text-001' is already answered by row 1"},
        {"row": 8, "reason": "the row names no item id and carries no question text"},
        {"row": 9, "reason": "no `response` or `text`"},
    ]
    run_id = summary["run_id"]
    records = _records(workspace.root, run_id)
    hashes = workspace.store.hashes()
    assert {item_id: record.outcome for item_id, record in records.items()} == {
        "eval-text-001": "wrong", "eval-text-002": "correct", "eval-text-003": "unparseable",
        "eval-text-004": "error", "eval-text-005": "correct"}
    assert all(record.content_hash == hashes[item_id] for item_id, record in records.items())
    assert records["eval-text-004"].typed_score().error_kind == "truncated"

    manifest = read_answer_manifest(workspace.root / "runs" / run_id)
    assert isinstance(manifest, RunManifest) and manifest.model.name == "other-tool-model"
    assert manifest.dataset is not None and manifest.dataset.kind == "store"
    assert manifest.dataset.query == {"ids": sorted(records)}
    assert manifest.imported is not None and manifest.imported.format == "jsonl"
    assert [row.row for row in manifest.imported.unmatched] == [5, 6, 8, 9]

    # the readers of a run read it as any run
    report = run_cli("report", run_id, "--out", str(tmp_path / "report"), "--no-charts", "-w", str(workspace.root))
    assert report.returncode == 0, report.stderr
    assert "other-tool-model" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert run_cli("matrix", "build", "-w", str(workspace.root)).returncode == 0
    hard = run_cli("filter", "hard", "--run", run_id, "--json", "-w", str(workspace.root))
    assert hard.returncode == 0, hard.stderr
    assert json.loads(hard.stdout)["survivors"] == 1  # eval-text-001, the one wrong answer; 3 and 4 undetermined
    shown = json.loads(run_cli("runs", "show", run_id, "--json", "-w", str(workspace.root)).stdout)
    assert shown["run_id"] == run_id and shown["model"] == "other-tool-model"
    assert [(r["item_id"], r["outcome"], r["extracted"], r["decided_by"], r["checker"], r["judge_model"])
            for r in shown["records"]][:2] == [("eval-text-001", "wrong", 1, "checker", "choice", None),
                                               ("eval-text-002", "correct", 3, "checker", "choice", None)]
    listed = json.loads(run_cli("runs", "list", "--json", "-w", str(workspace.root)).stdout)["runs"]
    assert [(run["run_id"], run["records"], run["imported"]) for run in listed] == [(run_id, 5, "jsonl")]
    assert listed[0]["outcomes"] == {"correct": 2, "error": 1, "unparseable": 1, "wrong": 1}
    text = run_cli("runs", "show", run_id, "-w", str(workspace.root)).stdout
    assert "eval-text-003  unparseable  -  checker  choice" in text
    assert set(ids) >= set(records)

    # the same file again: the same run, nothing written twice
    again = _import(workspace.root, tmp_path / "replies.jsonl", "other-tool-model")
    assert again["run_id"] == run_id and (again["written"], again["unchanged"]) == (0, 5)
    assert len((workspace.root / "runs" / run_id / RESPONSES).read_text(encoding="utf-8").splitlines()) == 5


def test_a_file_without_a_match_or_of_an_unknown_shape_is_one_clear_error(workspace, tmp_path):
    seed_items(workspace, n_text=2, n_image=0)
    none = run_cli("runs", "import", str(_jsonl(tmp_path / "x.jsonl", [{"id": "zz", "response": "1"}])),
                   "--model", "m", "-w", str(workspace.root))
    assert none.returncode != 0 and "none of its 1 rows matches a store item" in none.stderr
    assert "Traceback" not in none.stderr
    odd = tmp_path / "odd.txt"
    odd.write_text("hello", encoding="utf-8")
    unknown = run_cli("runs", "import", str(odd), "--model", "m", "-w", str(workspace.root))
    assert unknown.returncode != 0 and "cannot tell what tool wrote it: pass --from" in unknown.stderr
    wrong_csv = run_cli("runs", "import", str(_jsonl(tmp_path / "a.csv", [])), "--model", "m",
                        "-w", str(workspace.root))
    assert wrong_csv.returncode != 0 and "not a KMMMU judge CSV" in wrong_csv.stderr


def test_imported_records_equal_the_runners_on_the_same_replies(workspace, tmp_path):
    """`benchsmith run` against a local server, then its logged replies imported as another tool's:
    every item has the same outcome and the same answer read."""
    seed_items(workspace, n_text=24, n_image=4)
    with ServerThread(ServerConfig(answer_style="mixed", seed=11)) as server:
        done = run_cli("run", "-m", f"openai-compatible:m@{server.url}/v1?vision=true", "--json", "--no-progress",
                       "-w", str(workspace.root))
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    ran = _records(workspace.root, run_id)
    assert len({record.outcome for record in ran.values()}) >= 2
    replies = [{"id": item_id, "response": record.text, "finish_reason": record.finish_reason}
               for item_id, record in ran.items()]
    summary = _import(workspace.root, _jsonl(tmp_path / "replies.jsonl", replies), "m-elsewhere")
    assert summary["matched"] == len(ran) and summary["unmatched"] == []
    imported = _records(workspace.root, summary["run_id"])
    assert {i: (r.outcome, r.answer, r.content_hash) for i, r in imported.items()} == {
        i: (r.outcome, r.answer, r.content_hash) for i, r in ran.items()}
    assert {i: r.typed_score().model_dump(exclude={"details"}) for i, r in imported.items()} == {
        i: r.typed_score().model_dump(exclude={"details"}) for i, r in ran.items()}


# -- KMMMU's judge CSV ---------------------------------------------------------------------------
_OPTIONS = "\n\n선택지:\n(1) 고기압의 발달\n(2) 저기압의 통과\n(3) 전선의 정체\n(4) 해풍의 유입"


def _kmmmu_workspace(workspace, tmp_path) -> Path:
    """Store items from a KMMMU-shaped CSV of the project's own questions (ids 101…), as KMMMU's
    importer makes them: a choice item's options split off its question."""
    rows = [
        {"": "101", "question": "맑은 날 오후 해안에서 바다 쪽에서 바람이 부는 까닭은?" + _OPTIONS, "answer": "4",
         "question_type": "객관식(단일정답)"},
        {"": "102", "question": "옳은 것을 모두 고르면?\n<보기>\nㄱ. 가\nㄴ. 나\nㄷ. 다", "answer": "ㄱ,ㄷ",
         "question_type": "객관식(복수정답)"},
        {"": "103", "question": "기압이 1013 hPa일 때 해면 기압을 mmHg로 나타내면?", "answer": "760",
         "question_type": "주관식(수치/계산형)"},
        {"": "104", "question": "구름의 열 가지 기본 형태 가운데 가장 높이 뜨는 것의 이름은?", "answer": "권운",
         "question_type": "주관식(텍스트)"},
        {"": "201", "question": "같은 문장이 두 번 실린 문항이다.", "answer": "같음", "question_type": "주관식(텍스트)"},
        {"": "202", "question": "같은 문장이 두 번 실린 문항이다.", "answer": "같음", "question_type": "주관식(텍스트)"},
    ]
    items = tmp_path / "items.csv"
    write_kmmmu_csv(items, rows)
    assert add_kmmmu_items(workspace, items) == 6
    assert workspace.store.get("101").item.options[3].text == "해풍의 유입"
    return items


def test_a_kmmmu_judge_csv_keeps_its_verdicts_beside_ours(workspace, tmp_path):
    _kmmmu_workspace(workspace, tmp_path)
    question = {item_id: workspace.store.get(item_id).item for item_id in ("101", "102", "103", "104")}
    responses = write_kmmmu_csv(tmp_path / "model-1-llm-judge.csv", [
        # our checker: correct; the file's judge said False (both kept)
        {"": "101", "question": question["101"].stem + _OPTIONS, "response": "풀이…\n정답: 4", "is_correct": "False"},
        {"": "102", "question": question["102"].stem, "response": "정답: ㄱ, ㄷ", "is_correct": "True"},
        # another file's index: the id is another item's, the question is 103's
        {"": "101", "question": question["103"].stem, "response": "\\boxed{760}", "is_correct": "True"},
        {"": "555", "question": "어느 항목에도 없는 문제", "response": "1", "is_correct": "False"},
        {"": "104", "question": "바뀐 문제 문장", "response": "권운", "is_correct": "True"},
        {"": "777", "question": "같은 문장이 두 번 실린 문항이다.", "response": "같음", "is_correct": "True"},
        {"": "555", "question": question["104"].stem, "response": "권운", "is_correct": "True"},
    ])
    summary = _import(workspace.root, responses, "model-1")
    assert summary["format"] == "kmmmu" and (summary["rows"], summary["matched"]) == (7, 4)
    assert summary["matched_by"] == {"id": 2, "question": 2}
    assert summary["unmatched"] == [
        {"row": 4, "reason": "no item '555', and no item has its question text"},
        {"row": 5, "reason": "item '104' has another question, and no item has its question text"},
        {"row": 6, "reason": "ambiguous: its question text is that of 2 items (201, 202)"},
    ]
    records = _records(workspace.root, summary["run_id"])
    assert set(records) == {"101", "102", "103", "104"}
    assert records["101"].outcome == "correct" and records["101"].answer == 4
    assert records["101"].external == {"source": "kmmmu-judge", "row": 1, "is_correct": False}
    assert records["103"].external == {"source": "kmmmu-judge", "row": 3, "is_correct": True}
    assert summary["external"]["disagree"] == 1  # 101 (the others agree once a checker decides them)
    for item_id in ("102", "103", "104"):  # no checker for the format yet: undecided, never wrong
        score = records[item_id].typed_score()
        fmt = question[item_id].answer.format
        assert score.outcome == ("undecided" if fmt not in FORMATS else "correct"), (item_id, score)
    shown = json.loads(run_cli("runs", "show", summary["run_id"], "--json", "-w", str(workspace.root)).stdout)
    assert shown["records"][0]["external"]["is_correct"] is False and shown["records"][0]["outcome"] == "correct"


def test_the_real_kmmmu_judge_csvs_import_every_row(realdata, workspace):
    """KMMMU's four judge CSVs (100 items × 4 models) in one command: items made from the first
    file, each file matched (the first by id; the others' index columns name other rows, so by
    question text)."""
    files = sorted((realdata / "kmmmu_judge").glob("*.csv"))
    assert add_kmmmu_items(workspace, files[0]) == 100
    models = [path.stem.removesuffix("-1-llm-judge") for path in files]
    uneven = run_cli("runs", "import", *map(str, files), "--model", models[0], "-w", str(workspace.root))
    assert uneven.returncode != 0 and "4 file(s) and 1 --model" in uneven.stderr
    done = run_cli("runs", "import", *map(str, files), *(f"--model={model}" for model in models), "--json",
                   "-w", str(workspace.root))
    assert done.returncode == 0, done.stderr
    summaries = json.loads(done.stdout)["runs"]
    assert [summary["matched_by"] for summary in summaries] == [{"id": 100}] + [{"question": 100}] * 3
    total, disagreements = Counter(), 0
    for path, summary in zip(files, summaries, strict=True):
        assert (summary["rows"], summary["matched"], summary["unmatched"]) == (100, 100, []), path.name
        records = _records(workspace.root, summary["run_id"])
        items = {item_id: stored.item for item_id, stored in workspace.store.get_many(list(records)).items()}
        for item_id, record in records.items():
            score = record.typed_score()
            assert isinstance(record.external["is_correct"], bool)
            assert score.checker == items[item_id].answer.format
            if items[item_id].answer.format not in FORMATS:  # never `wrong` without a checker
                assert score.outcome in ("undecided", "error"), (item_id, score)
        total.update(record.outcome for record in records.values())
        disagreements += summary["external"]["disagree"]
    assert files[0].name.startswith("gpt-5-mini")
    assert sum(total.values()) == 400 and total["correct"] and total["wrong"] and total["undecided"]
    assert disagreements > 0  # KMMMU's judge and our checker disagree on some: both are kept

    # the pool commands read the imported runs as any run: the matrix, a filter, the item analysis
    ws = str(workspace.root)
    runs = [f"--run={summary['run_id']}" for summary in summaries]
    matrix = run_cli("matrix", "build", "-w", ws)
    assert matrix.returncode == 0 and "100 items × 4 models, 400 cells" in matrix.stdout, matrix.stderr
    filtered = run_cli("filter", "adversarial", *runs, "--json", "-w", ws)
    assert filtered.returncode == 0, filtered.stderr
    solved = {item_id for summary in summaries for item_id, record in _records(workspace.root, summary["run_id"]).items()
              if record.outcome == "correct"}
    decision = json.loads(filtered.stdout)
    assert decision["pool"] == 100 and decision["removed"] == len(solved) > 0
    for command in (("analyze", "items"), ("analyze", "suspects")):
        done = run_cli(*command, "-w", ws)
        assert done.returncode == 0, (command, done.stderr)


# -- the answer judge -------------------------------------------------------------------------------
JUDGE = "openai-compatible:judge-m"  # the judge's name, as its records and log name it
JUDGE_LOG = "answer-judge-openai-compatible-judge-m.jsonl"


def _open_items(workspace) -> None:
    """Open-answer items whose key only a judge (or a person) can check, and choice items."""
    records = [{"id": f"open-{n}", "source": {"exam": "기상기사", "subject": "기상학"},
                "stem": f"문항 {n}: 높은 하늘에 새털처럼 보이는 구름의 이름은?",
                "answer": {"format": "judged", "reference": "권운", "rubric": "구름의 이름을 맞게 쓰면 정답"}}
               for n in range(1, 5)]
    records += [text_record(n, answer=1) for n in range(1, 4)]
    workspace.store.save_items([parse_item(record) for record in records], author="test", stage="test")


def _replies(tmp_path: Path) -> Path:
    rows = [{"id": "open-1", "response": "생각해 보면…\n정답: 권운"}, {"id": "open-2", "response": "정답: 적운"},
            {"id": "open-3", "response": "권운입니다"}, {"id": "open-4", "response": "모르겠다"},
            {"id": "eval-text-001", "response": "정답: 1"}, {"id": "eval-text-002", "response": "정답: 2"},
            {"id": "eval-text-003", "response": "{\"정답\": 1}"}]
    return _jsonl(tmp_path / "open.jsonl", rows)


def _judging_server(reply=judge_reply) -> ServerThread:
    def respond(prompt_text: str, body: dict) -> str:
        return reply(prompt_text) if is_judge_request(prompt_text) else "정답: 1"

    return ServerThread(ServerConfig(responder=respond))


def test_the_judge_decides_what_no_checker_can_and_only_that(workspace, tmp_path):
    _open_items(workspace)
    with _judging_server() as server:
        judge = f"{JUDGE}@{server.url}/v1"
        summary = _import(workspace.root, _replies(tmp_path), "open-model", "--judge", judge)
        asked = server.stats.requests
        records = _records(workspace.root, summary["run_id"])
        assert summary["judged"] == 4 and asked == 4  # only the undecided were sent
        assert summary["judge"]["verdicts"] == {"true": 2, "false": 2, "undecided": 0}
        assert {i: (r.outcome, r.typed_score().decided_by, r.typed_score().judge_model)
                for i, r in records.items() if i.startswith("open")} == {
            "open-1": ("correct", "judge", JUDGE), "open-2": ("wrong", "judge", JUDGE),
            "open-3": ("correct", "judge", JUDGE), "open-4": ("wrong", "judge", JUDGE)}
        assert summary["outcomes"] == {"correct": 4, "wrong": 3}
        assert {i: r.outcome for i, r in records.items() if i.startswith("eval")} == {
            "eval-text-001": "correct", "eval-text-002": "wrong", "eval-text-003": "correct"}
        assert all(r.typed_score().decided_by == "checker" for i, r in records.items() if i.startswith("eval"))
        shown = run_cli("runs", "show", summary["run_id"], "-w", str(workspace.root)).stdout
        line = next(line for line in shown.splitlines() if line.startswith("open-2  "))
        assert line.startswith("open-2  wrong  ") and line.endswith(f"  judge ({JUDGE})  judged")

        # the same again: every judgement is reused, nothing sent
        again = _import(workspace.root, _replies(tmp_path), "open-model", "--judge", judge)
        assert server.stats.requests == asked and again["judge"]["sent"] == 0

        # every response judged (KMMMU's protocol): the checkers' verdicts stand, the judge's beside them
        done = run_cli("runs", "judge", summary["run_id"], "--judge", judge, "--judge-all", "--json",
                       "-w", str(workspace.root))
        assert done.returncode == 0, done.stderr
        judged = json.loads(done.stdout)["runs"][0]
        assert judged["asked"] == 7 and judged["with_checker"] == {"agree": 3, "disagree": 0}
        assert server.stats.requests == asked + 3  # the open answers' judgements reused
        after = _records(workspace.root, summary["run_id"])
        for item_id in ("eval-text-001", "eval-text-002", "eval-text-003"):
            score = after[item_id].typed_score()
            assert score.outcome == records[item_id].outcome and score.decided_by == "checker"
            assert score.details["judge"] == {"model": JUDGE, "verdict": score.outcome == "correct", "agrees": True}
        assert {i: r.outcome for i, r in after.items()} == {i: r.outcome for i, r in records.items()}
    log = workspace.root / "runs" / summary["run_id"] / JUDGE_LOG
    assert {json.loads(line)["item_id"] for line in log.read_text(encoding="utf-8").splitlines()} == set(records)


def test_a_broken_judge_is_asked_again_then_leaves_the_answer_undecided_with_its_error(workspace, tmp_path):
    _open_items(workspace)
    with _judging_server(broken_judge_reply) as server:
        summary = _import(workspace.root, _replies(tmp_path), "open-model", "--judge", f"{JUDGE}@{server.url}/v1")
        assert server.stats.requests == 8  # each of the 4 undecided asked, then asked again once
    assert summary["judge"]["verdicts"] == {"true": 0, "false": 0, "undecided": 4}
    records = _records(workspace.root, summary["run_id"])
    for item_id in ("open-1", "open-2", "open-3", "open-4"):
        score = records[item_id].typed_score()
        assert score.outcome == "undecided" and score.decided_by == "checker"
        assert score.details["judge"]["model"] == JUDGE
        assert score.details["judge"]["error"]["kind"] == "malformed"
        assert "neither true nor false" in score.details["judge"]["error"]["message"]
    assert summary["outcomes"] == {"correct": 2, "undecided": 4, "wrong": 1}


def test_run_takes_the_judge_from_the_command_line_or_the_workspace_config(workspace, tmp_path):
    seed_items(workspace, n_text=4, n_image=0)
    with _judging_server() as server:
        spec = f"openai-compatible:m@{server.url}/v1"
        done = run_cli("run", "-m", spec, "--judge", f"{JUDGE}@{server.url}/v1", "--judge-all",
                       "--json", "--no-progress", "-w", str(workspace.root))
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["judge"]["asked"] == 4 and result["judge"]["with_checker"] == {"agree": 4, "disagree": 0}
        records = _records(workspace.root, result["run_id"])
        assert all("judge" in r.typed_score().details and r.typed_score().decided_by == "checker"
                   for r in records.values())

        config = workspace.root / "benchsmith.toml"
        config.write_text(config.read_text(encoding="utf-8")
                          + f'\n[judge]\nmodel = "openai-compatible:cfg-judge@{server.url}/v1"\nall = true\n',
                          encoding="utf-8")
        text = run_cli("run", "-m", spec, "--no-progress", "-w", str(workspace.root))
        assert text.returncode == 0, text.stderr
        assert "judge openai-compatible:cfg-judge on " in text.stdout and "agrees 4, disagrees 0" in text.stdout
        off = run_cli("run", "-m", spec, "--judge", "none", "--no-progress", "-w", str(workspace.root))
        assert off.returncode == 0 and "judge " not in off.stdout
    bad = workspace.root / "benchsmith.toml"
    bad.write_text(bad.read_text(encoding="utf-8").replace("all = true", "all = 3"), encoding="utf-8")
    refused = run_cli("runs", "list", "-w", str(workspace.root))
    assert refused.returncode != 0 and "judge.all must be true or false" in refused.stderr


def test_evaluate_takes_the_judge(workspace, tmp_path):
    from export.build import build_release
    from export.release_config import ReleaseConfig
    from tests.release_support import accept_all

    seed_items(workspace, n_text=5, n_image=0)
    accept_all(workspace)
    release = build_release(workspace, "1.0.0", ReleaseConfig(name="judge-exam")).path
    with _judging_server() as server:
        done = run_cli("evaluate", "--release", f"{release}:full", "-m", f"openai-compatible:m@{server.url}/v1",
                       "--judge", f"{JUDGE}@{server.url}/v1", "--judge-all",
                       "-w", str(workspace.root), "--out", str(tmp_path / "report"))
    assert done.returncode == 0, done.stderr
    assert f"judge {JUDGE} on " in done.stdout and "5 asked (5 sent)" in done.stdout
    log = next(path for path in (workspace.root / "runs").glob(f"*/{JUDGE_LOG}"))
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 5 and all(isinstance(line["verdict"], bool) for line in lines)
    assert (tmp_path / "report" / "report.md").is_file()
