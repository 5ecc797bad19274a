"""The chain, not the link: stages driven one after another through the CLI and their real files,
checked against values each test computes itself from the items (never from the code under test).

- run → edit two items → run: exactly two requests sent, nothing stale counted
- a shuffle after a run: the rerun scores against the new answer key
- matrix → filter → release → evaluate --release (store untouched) → report with the hard subset
- the same model with and without vision: two runs, each with its own items
- reasoning run → judge → load-rationales / load-judge → two experts → stats
- multi-answer items scored one way by the runner, the report and the release
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from curation.core.item import parse_item
from curation.core.workspace import init_workspace
from tests.conftest import run_cli
from tests.eval_support import image_record, text_record
from tests.fault_server import ServerConfig, ServerThread

N_ITEMS = 12


def _items(n: int) -> list[dict]:
    """Items whose answer keys differ, and whose option texts differ, so a shuffle moves answers."""
    records = []
    for number in range(1, n + 1):
        record = text_record(number, answer=number % 4 + 1)
        record["options"] = [{"text": f"보기 {number}-{k}: {'가나다라'[k - 1]} 현상"} for k in range(1, 5)]
        records.append(record)
    return records


def _cli(ws: Path, *args: str):
    done = run_cli(*args, "-w", str(ws))
    assert done.returncode == 0, f"{args}: {done.stderr}\n{done.stdout}"
    return done


def _json(ws: Path, *args: str):
    return json.loads(_cli(ws, *args, "--json").stdout)


def _import(ws: Path, records: list[dict], tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    _cli(ws, "items", "import", str(path))


def _store_items(ws: Path) -> dict[str, dict]:
    from curation.core.workspace import open_workspace

    return {s.item.id: s.item.model_dump(mode="json") for s in open_workspace(ws).store.iter_items()}


def _accuracy_rows(report_dir: Path) -> list[dict[str, str]]:
    with (report_dir / "accuracy.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def ws(tmp_path) -> Path:
    return init_workspace(tmp_path / "ws").root


def test_a_rerun_after_editing_two_items_sends_exactly_two_requests(ws, tmp_path):
    _import(ws, _items(N_ITEMS), tmp_path)
    with ServerThread(ServerConfig(answer_style="json")) as server:
        spec = f"openai-compatible:m@{server.url}/v1"
        first = _json(ws, "run", "-m", spec, "--concurrency", "4")
        sent_first = server.stats.requests
        for item_id in ("eval-text-003", "eval-text-007"):
            rev = _json(ws, "items", "show", item_id)["rev"]
            _cli(ws, "items", "edit", item_id, "--set", f"stem=고친 문항 {item_id}: 겨울철 계절풍의 원인은?",
                 "--expect-rev", str(rev), "--reason", "오타")
        second = _json(ws, "run", "-m", spec, "--concurrency", "4")
        sent_second = server.stats.requests - sent_first
    assert sent_first == N_ITEMS and sent_second == 2
    assert first["run_id"] == second["run_id"] and second["resumed"] == N_ITEMS - 2
    assert second["stats"]["changed_since"] == 2
    report = _cli(ws, "report", second["run_id"], "--out", str(tmp_path / "r"), "--no-charts")
    assert "stale" not in report.stderr
    overall = next(r for r in _accuracy_rows(tmp_path / "r") if r["subset"] == "overall")
    assert int(overall["n"]) == N_ITEMS


def test_a_shuffle_after_a_run_is_scored_against_the_new_key_and_stale_records_are_skipped(ws, tmp_path):
    _import(ws, _items(N_ITEMS), tmp_path)
    before = _json(ws, "run", "-m", "baseline:position-1")
    expected_before = sum(1 for item in _store_items(ws).values() if item["answer"]["options"] == [1])
    assert before["counts"]["correct"] == expected_before
    _cli(ws, "shuffle", "--seed", "7")
    items = _store_items(ws)
    moved = sum(1 for item in items.values() if item["original_option_order"] != [1, 2, 3, 4])
    assert moved > 0
    # the report before rerunning: every moved item's record is stale, skipped and said so
    stale_report = _cli(ws, "report", before["run_id"], "--out", str(tmp_path / "stale"), "--no-charts")
    assert f"{moved} stale record(s) skipped" in stale_report.stderr
    overall = next(r for r in _accuracy_rows(tmp_path / "stale") if r["subset"] == "overall")
    assert int(overall["n"]) == N_ITEMS - moved
    matrix = _cli(ws, "matrix", "build")
    assert f"{moved} stale record(s) skipped" in matrix.stderr
    after = _json(ws, "run", "-m", "baseline:position-1")
    assert after["counts"]["correct"] == sum(1 for item in items.values() if item["answer"]["options"] == [1])
    assert after["stats"]["changed_since"] == moved


def test_the_chain_from_runs_to_a_release_evaluated_without_touching_the_store(ws, tmp_path):
    records = _items(N_ITEMS)
    _import(ws, records, tmp_path)
    _json(ws, "run", "-m", "baseline:position-1")
    _cli(ws, "matrix", "build")
    filtered = _json(ws, "filter", "adversarial", "-m", "baseline:position-1")
    missed = sorted(r["id"] for r in records if r["answer"] != 1)  # position-1 answers 1: it misses every other key
    assert filtered["survivors"] == len(missed) and filtered["removed"] == N_ITEMS - len(missed)
    config = tmp_path / "release.yaml"
    config.write_text("name: chain\nstatuses: [extracted]\nconfigs: [full, hard]\n", encoding="utf-8")
    release = _json(ws, "release", "build", "--version", "1.0.0", "--config", str(config))
    assert release["configs"] == {"full": N_ITEMS, "hard": len(missed)}
    export_before = _store_items(ws)
    researcher = init_workspace(tmp_path / "researcher").root
    for target in (ws, researcher):
        done = _cli(target, "evaluate", "--release", release["path"], "-m", "baseline:position-1",
                    "--out", str(tmp_path / f"report-{target.name}"))
        assert f": {N_ITEMS} items" in done.stdout
    assert _store_items(ws) == export_before  # same rows, same content, same revisions
    assert _store_items(researcher) == {}
    rows = {r["subset"]: r for r in _accuracy_rows(tmp_path / "report-researcher")}
    assert int(rows["overall"]["n"]) == N_ITEMS
    assert int(rows["overall"]["correct"]) == N_ITEMS - len(missed)
    assert int(rows["hard"]["n"]) == len(missed) and int(rows["hard"]["correct"]) == 0
    manifest = json.loads(next((researcher / "runs").glob("*/manifest.json")).read_text(encoding="utf-8"))
    assert manifest["dataset"]["kind"] == "release" and manifest["dataset"]["version"] == "1.0.0"
    assert manifest["dataset"]["content_hash"] == release["content_hash"]
    # the workspace's own report takes `hard` from the filtering record; edit a hard item and it leaves
    hard_item = missed[0]
    rev = _json(ws, "items", "show", hard_item)["rev"]
    _cli(ws, "items", "edit", hard_item, "--set", "stem=새로 쓴 문항", "--expect-rev", str(rev))
    run_id = _json(ws, "run", "-m", "baseline:position-1")["run_id"]
    _cli(ws, "report", run_id, "--out", str(tmp_path / "after-edit"), "--no-charts")
    rows = {r["subset"]: r for r in _accuracy_rows(tmp_path / "after-edit")}
    assert int(rows["hard"]["n"]) == len(missed) - 1


def test_vision_is_part_of_the_run_identity(ws, tmp_path):
    from curation.core.workspace import open_workspace

    workspace = open_workspace(ws)
    records = _items(4) + [image_record(workspace, n) for n in (1, 2)]
    workspace.store.save_items([parse_item(r) for r in records], author="test", stage="test")
    with ServerThread(ServerConfig(answer_style="json")) as server:
        text_only = _json(ws, "run", "-m", f"openai-compatible:m@{server.url}/v1")
        vision = _json(ws, "run", "-m", f"openai-compatible:m@{server.url}/v1?vision=true")
    assert text_only["run_id"] != vision["run_id"]
    assert text_only["items"] == 4 and text_only["not_sent"] == 2
    assert vision["items"] == 6 and vision["not_sent"] == 0
    _cli(ws, "report", text_only["run_id"], vision["run_id"], "--out", str(tmp_path / "r"), "--no-charts")
    multimodal = {r["run_id"]: r for r in _accuracy_rows(tmp_path / "r") if r["subset"] == "multimodal"}
    assert int(multimodal[text_only["run_id"]]["n"]) == 0 and int(multimodal[vision["run_id"]]["n"]) == 2


def test_reasoning_run_to_judge_to_two_experts_to_stats(ws, tmp_path):
    from annotator.review import scoring
    from annotator.review.tables import ensure_tables
    from curation.core.workspace import open_workspace

    records = [text_record(n, answer=n % 4 + 1, rationale=f"참고 해설 {n}: 시베리아 고기압이 발달한다.")
               for n in range(1, 6)]
    _import(ws, records, tmp_path)
    with ServerThread(ServerConfig(answer_style="json")) as server:
        run = _json(ws, "run", "-m", f"openai-compatible:student@{server.url}/v1", "-p", "reasoning")
        judged = _json(ws, "judge", run["run_id"], "-j",
                       f"openai-compatible:judge@{server.url}/v1?structured_output=true&name=judge-a")
    assert judged["ok"] == 5
    _cli(ws, "annotate", "load-rationales", run["run_id"])
    _cli(ws, "annotate", "load-judge", run["run_id"])
    engine = open_workspace(ws).store.engine
    ensure_tables(engine)
    tasks = scoring.tasks(engine)
    assert len(tasks) == 5 and {t.model for t in tasks} == {"openai-compatible:student"}
    for n, task in enumerate(tasks):
        for expert, shift in (("kim", 0), ("lee", 1)):
            scoring.save_score(engine, task.id, expert, {axis: 1 + (n + shift) % 5 for axis in scoring.AXES}, "", 0)
    stats = _json(ws, "annotate", "stats")
    log = Path(judged["log"])
    verdicts = {line["item_id"]: line for line in map(json.loads, log.read_text(encoding="utf-8").splitlines())}
    for row in stats["tasks"]:
        expected = verdicts[row["item_id"]]["scores"]
        assert row["judge"] == {"factuality": expected["factuality"], "logic": expected["logical_soundness"],
                                "depth": expected["depth"], "clarity": expected["clarity"]}
        assert set(row["experts"]) == {"kim", "lee"}
    assert {r["raters"] for r in stats["agreement"]} == {"experts", "experts + judge"}


def test_multi_answer_items_are_scored_one_way_everywhere(ws, tmp_path):
    any_of = text_record(1, answer=1) | {"id": "multi-any", "answer": [1, 3]}
    all_of = text_record(2, answer=1) | {"id": "multi-all", "answer": [1, 3],
                                         "taxonomy": {"question_format": "multiple_answers"}}
    single = text_record(3, answer=2) | {"id": "single"}
    _import(ws, [any_of, all_of, single], tmp_path)
    run = _json(ws, "run", "-m", "baseline:position-1")
    # position-1 answers 1: a listed answer of multi-any; not the whole set multi-all requires; wrong for single
    assert run["counts"]["correct"] == 1 and run["counts"]["wrong"] == 2
    _cli(ws, "report", run["run_id"], "--out", str(tmp_path / "r"), "--no-charts")
    overall = next(r for r in _accuracy_rows(tmp_path / "r") if r["subset"] == "overall")
    assert int(overall["correct"]) == 1
    config = tmp_path / "release.yaml"
    config.write_text("name: multi\nstatuses: [extracted]\nconfigs: [full]\n", encoding="utf-8")
    release = _json(ws, "release", "build", "--version", "1.0.0", "--config", str(config))
    researcher = init_workspace(tmp_path / "researcher").root
    done = _cli(researcher, "evaluate", "--release", release["path"], "-m", "baseline:position-1",
                "--out", str(tmp_path / "release-report"))
    assert "correct 1" in done.stdout


def test_excluded_items_are_neither_run_nor_filtered(ws, tmp_path):
    _import(ws, _items(6), tmp_path)
    rev = _json(ws, "items", "show", "eval-text-002")["rev"]
    _cli(ws, "items", "edit", "eval-text-002", "--set", "status=excluded", "--expect-rev", str(rev), "--reason", "중복")
    run = _json(ws, "run", "-m", "baseline:position-1")
    assert run["items"] == 5
    filtered = _json(ws, "filter", "adversarial", "-m", "baseline:position-1")
    assert filtered["pool"] == 5
    everything = _json(ws, "run", "-m", "baseline:position-1", "--items", "status=extracted|excluded")
    assert everything["items"] == 6 and everything["run_id"] != run["run_id"]
