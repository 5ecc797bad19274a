"""HRET (haerae-evaluation-toolkit), installed from its package and run with the command the
release's `harness/README.md` gives (HRET's `Evaluator().run` through the generated
`harness/hret/benchsmith_hret.py`) from another folder against a local OpenAI-compatible
server, scores a release of choice, numeric, set and text items exactly as `benchsmith evaluate`
does, the same outcome item for item (each the one the test derives from its own table of
scripted replies), after sending the very messages benchsmith sends."""

from __future__ import annotations

import importlib.util
import json
import subprocess

import pytest

from curation.core.workspace import init_workspace
from tests.fault_server import ServerThread
from tests.release_support import (
    benchsmith_per_item,
    expected_outcome,
    harness_env,
    readme_command,
    release_rows,
    scripted_server,
)

if importlib.util.find_spec("llm_eval") is None:  # not importorskip: importing it needs torch when installed lean
    pytest.skip("HRET (haerae-evaluation-toolkit) is not installed; .ci/run installs it", allow_module_level=True)
README_START = "python RELEASE/harness/hret/"


@pytest.fixture(scope="module")
def rows(harness_release):
    _, path, counts = harness_release
    return release_rows(path, counts)


@pytest.fixture(scope="module")
def server(rows):
    with scripted_server(rows) as (running, _):
        yield running


def _requests(running: ServerThread, since: int) -> list[dict]:
    return [logged["body"] for logged in running.stats.bodies[since:]]


@pytest.fixture(scope="module")
def benchsmith(harness_release, server, tmp_path_factory):
    """Per config: (row id → outcome, n, accuracy) from `benchsmith evaluate`; and every request it sent."""
    _, path, counts = harness_release
    workspace = init_workspace(tmp_path_factory.mktemp("hret-eval-ws") / "ws")
    since = len(server.stats.bodies)
    scores = {config: benchsmith_per_item(path, config, server.url, workspace) for config in counts}
    return scores, _requests(server, since)


def test_hret_scores_every_config_as_benchsmith_does(harness_release, rows, server, benchsmith, tmp_path):
    _, path, counts = harness_release
    scores, benchsmith_requests = benchsmith
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    command = readme_command(path, README_START, url=f"{server.url}/v1")
    assert "--config full " in command and "--output hret.json" in command
    since = len(server.stats.bodies)
    done = subprocess.run(["bash", "-c", command.replace("--config full ", f"--config {','.join(counts)} ")],
                          capture_output=True, text=True, cwd=elsewhere, timeout=600,
                          env={**harness_env(tmp_path), "OPENAI_API_KEY": "none"})
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((elsewhere / "hret.json").read_text(encoding="utf-8"))
    assert set(results) == set(counts)
    for config, n in counts.items():
        expected, reported_n, accuracy = scores[config]
        samples = results[config]["samples"]
        per_item = {sample["metadata"]["id"]: sample["evaluation"]["outcome"] for sample in samples}
        truth = {row["id"]: expected_outcome(row) for row in rows[config]}
        undecided = sum(outcome == "undecided" for outcome in truth.values())
        # benchsmith's report keeps an undecided answer outside n; HRET, keeping no verdict, counts
        # it in n as not correct (harness/README.md)
        assert len(samples) == len(per_item) == n == reported_n + undecided
        assert per_item == truth == expected, config
        assert all(sample["evaluation"]["is_correct"] == (per_item[sample["metadata"]["id"]] == "correct")
                   for sample in samples)
        metrics = results[config]["metrics"]
        correct = sum(outcome == "correct" for outcome in truth.values())
        assert metrics["accuracy"] == pytest.approx(correct / n)
        assert accuracy == pytest.approx(correct / reported_n, abs=1e-4)
        for outcome in ("unparseable", "error", "undecided"):  # the shares benchsmith reports apart
            assert metrics[outcome] == pytest.approx(sum(v == outcome for v in truth.values()) / n), outcome
    # the same request for every item: roles, system text, prompt, images in place, the release's decoding
    sent = _requests(server, since)
    assert len(sent) == sum(counts.values())

    def request(body: dict) -> str:
        return json.dumps({key: body.get(key) for key in ("messages", "temperature", "max_tokens", "seed", "stop")},
                          sort_keys=True)

    assert {request(body) for body in sent} == {request(body) for body in benchsmith_requests}
    assert any(isinstance(body["messages"][-1]["content"], list) for body in sent)  # image items among them


def test_the_parity_above_has_every_outcome(benchsmith):
    scores, _ = benchsmith
    full, _, _ = scores["full"]
    assert set(full.values()) == {"correct", "wrong", "unparseable", "error", "undecided"}
    assert {"multi-any", "multi-all", "open-num-right", "open-set-right", "open-text-undecided"} <= set(full)
