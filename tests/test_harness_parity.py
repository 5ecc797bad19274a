"""lm-eval and inspect, installed from their packages and run as their CLIs against a local
OpenAI-compatible server, score a release exactly as `benchsmith evaluate` + `report` do on the
same responses: same accuracy per config, item for item, with images sent where they belong."""

from __future__ import annotations

import csv
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from curation.workspace import init_workspace
from evaluation.runlog import RESPONSES, read_answer_manifest, read_records
from export.harness import task_name
from tests.conftest import run_cli
from tests.fault_server import ServerConfig, ServerThread
from tests.release_support import Responder, scripted_reply

pytest.importorskip("lm_eval", reason="the harness extra (lm_eval[api]) is not installed")
pytest.importorskip("inspect_ai", reason="the harness extra (inspect_ai) is not installed")
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def release(harness_release):
    return harness_release


@pytest.fixture(scope="module")
def rows(release):
    import pyarrow.parquet as pq

    _, path, counts = release
    manifest = json.loads((path / "release.json").read_text(encoding="utf-8"))
    return {config: [row for name in manifest["configs"][config]["files"] for row in pq.read_table(path / name).to_pylist()]
            for config in counts}


def _release_config(run_dir):
    dataset = read_answer_manifest(run_dir).dataset
    return dataset.config if dataset else None


@pytest.fixture(scope="module")
def server(rows):
    questions = {row["question"]: len(row["options"]) for config_rows in rows.values() for row in config_rows}
    responder = Responder(questions)
    with ServerThread(ServerConfig(responder=responder)) as running:
        yield running, responder


def readme_command(release: Path, start: str, *, url: str) -> str:
    """The command `harness/README.md` gives for a harness, with the release, server and model filled in."""
    text = (release / "harness" / "README.md").read_text(encoding="utf-8").replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith(start))
    return (line.replace("RELEASE", shlex.quote(str(release))).replace("URL", url).replace("MODEL", "scripted"))


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "HF_HOME": str(tmp / "hf"), "HF_DATASETS_OFFLINE": "1", "OPENAI_API_KEY": "none",
            "INSPECT_LOG_DIR": str(tmp / "inspect-logs"), "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}


@pytest.fixture(scope="module")
def benchsmith_scores(release, server, tmp_path_factory):
    """Per config: row id → correct, from `benchsmith evaluate` (its run logs and report)."""
    workspace, path, counts = release
    running, _ = server
    ws = init_workspace(tmp_path_factory.mktemp("eval-ws") / "ws")
    scores, reported = {}, {}
    for config in counts:
        out = ws.root / "reports" / config
        done = run_cli("evaluate", "--release", f"{path}:{config}", "-w", str(ws.root), "--out", str(out),
                       "--model", f"openai-compatible:scripted@{running.url}/v1?vision=true")
        assert done.returncode == 0, done.stderr
        with (out / "accuracy.csv").open(encoding="utf-8") as handle:
            overall = next(r for r in csv.DictReader(handle) if r["subset"] == "overall")
        reported[config] = (int(overall["n"]), int(overall["correct"]) / int(overall["n"]))  # the csv rounds
        runs = [run_dir for run_dir in ws.runs_dir.iterdir()
                if (run_dir / "manifest.json").is_file() and _release_config(run_dir) == config]
        assert len(runs) == 1, runs
        scores[config] = {item_id: record["outcome"] == "correct"
                          for item_id, record in read_records(runs[0] / RESPONSES).items()}
    return scores, reported


def test_lm_eval_scores_every_config_as_benchsmith_does(release, rows, server, benchsmith_scores, tmp_path):
    _, path, counts = release
    running, responder = server
    seen_before = len(responder.seen)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    command = readme_command(path, "lm_eval ", url=f"{running.url}/v1")
    done = subprocess.run(["bash", "-c", f"{command} --output_path {tmp_path / 'out'} --log_samples"],
                          capture_output=True, text=True, cwd=elsewhere, env=_env(tmp_path), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(next((tmp_path / "out").rglob("results_*.json")).read_text(encoding="utf-8"))["results"]
    scores, reported = benchsmith_scores
    assert set(results) == {task_name("parity-exam", c) for c in counts}  # one score per config, no group average
    for config, n in counts.items():
        task = task_name("parity-exam", config)
        samples = [json.loads(line) for line in next((tmp_path / "out").rglob(f"samples_{task}_*.jsonl"))
                   .read_text(encoding="utf-8").splitlines()]
        per_item = {sample["doc"]["id"]: sample["acc"] == 1.0 for sample in samples}
        assert len(per_item) == n == reported[config][0]
        assert per_item == scores[config], config
        assert results[task]["acc,none"] == pytest.approx(reported[config][1])
    # image items reached the model with every question and option image
    sent = responder.seen[seen_before:]
    _assert_images_sent(sent, rows)


def _expected_images(rows) -> dict[str, int]:
    return {row["question"]: len(row["question_images"]) + sum(bool(o["image"]) for o in row["options"])
            for config_rows in rows.values() for row in config_rows}


def _assert_images_sent(sent: list[tuple[str, int]], rows) -> None:
    expected = _expected_images(rows)
    assert any(expected.values())
    for question, images in sent:
        assert images == expected[question], question[:40]


def test_inspect_scores_every_config_as_benchsmith_does(release, rows, server, benchsmith_scores, tmp_path):
    _, path, counts = release
    running, responder = server
    scores, reported = benchsmith_scores
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    seen_before = len(responder.seen)
    runs = {}
    for config in counts:  # one `inspect eval` per config, as the harness README says; run side by side
        command = readme_command(path, "OPENAI_API_KEY=none inspect eval", url=f"{running.url}/v1")
        assert "config=full" in command
        runs[config] = subprocess.Popen(
            ["bash", "-c", command.replace("config=full", f"config={config}")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=elsewhere,
            env={**_env(tmp_path), "INSPECT_LOG_DIR": str(tmp_path / "logs" / config), "INSPECT_LOG_FORMAT": "json",
                 "INSPECT_DISPLAY": "none"})
    for config, n in counts.items():
        _, stderr = runs[config].communicate(timeout=600)
        assert runs[config].returncode == 0, stderr[-3000:]
        log = json.loads(next((tmp_path / "logs" / config).glob("*.json")).read_text(encoding="utf-8"))
        per_item = {str(s["id"]): s["scores"]["benchsmith_score"]["value"] == "C" for s in log["samples"]}
        assert len(per_item) == n == reported[config][0]
        assert per_item == scores[config], config
        accuracy = log["results"]["scores"][0]["metrics"]["accuracy"]["value"]
        assert accuracy == pytest.approx(reported[config][1])
    _assert_images_sent(responder.seen[seen_before:], rows)


def test_the_scripted_model_exercises_every_answer_form_and_both_outcomes(rows, benchsmith_scores):
    """The parity above means something: the replies span every form, and items are both
    right and wrong (including multi-answer items, scored by Item.accepts)."""
    replies = [scripted_reply(row["question"], len(row["options"])) for row in rows["full"]]
    for marker in ("정답: ", "정답은", '{"정답"', "Answer: ", "<think>", "따라서 정답"):
        assert any(marker in reply for reply in replies), marker
    assert any(reply.strip().isdigit() for reply in replies)
    scores, _ = benchsmith_scores
    assert 0 < sum(scores["full"].values()) < len(scores["full"])
    assert {"multi-any", "multi-all"} <= set(scores["full"])
