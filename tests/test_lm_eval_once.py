"""lm-eval run as `harness/README.md` says sends each item of the release once: the configs
overlap (`hard` ⊂ `full`…), and a tag or group over them would send (and bill) an item once for
every config that holds it."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from export.harness import task_name
from tests.release_support import readme_command, release_rows, run_lm_eval, scripted_server

pytest.importorskip("lm_eval", reason="the harness extra (lm_eval[api]) is not installed")


def test_the_readme_lm_eval_command_sends_each_item_once(harness_release, tmp_path):
    _, path, counts = harness_release
    rows = release_rows(path, counts)
    with scripted_server(rows) as (running, responder):
        command = readme_command(path, "lm_eval ", url=f"{running.url}/v1")
        out = run_lm_eval(path, f"{running.url}/v1", tmp_path)
    questions = Counter(request.question for request in responder.requests)
    overlapping = {row["question"] for config, config_rows in rows.items() if config != "full" for row in config_rows}
    assert overlapping, "the release has no item in two configs: nothing to tell"
    assert sorted(questions.elements()) == sorted(row["question"] for row in rows["full"])  # each once
    results = json.loads(next(out.rglob("results_*.json")).read_text(encoding="utf-8"))["results"]
    assert set(results) == {task_name("parity-exam", "full")}
    # every config's own task is there to run on its own, and nothing joins them in one run
    folder = path / "harness" / "lm_eval"
    tasks = {file.stem for file in folder.glob("*.yaml")}
    assert tasks == {task_name("parity-exam", config) for config in counts}
    assert not [line for file in folder.glob("*.yaml") for line in file.read_text(encoding="utf-8").splitlines()
                if line.startswith(("tag:", "group:"))]
    assert f"--tasks {task_name('parity-exam', 'full')}" in command
