"""The HRET script uses HRET through its front door: it refuses an HRET it was not tested with, its
stand-ins for HRET's unused local-model imports are gone once HRET has imported, HRET's spaCy notice
is not shown, and a request that fails stops the run with the item named (never scored as wrong)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fault_server import Scripted, ServerConfig, ServerThread
from tests.release_support import Responder, release_rows

if importlib.util.find_spec("llm_eval") is None:  # not importorskip: importing it needs torch when installed lean
    pytest.skip("HRET (haerae-evaluation-toolkit) is not installed; .ci/run installs it", allow_module_level=True)


def _script(release: Path) -> Path:
    return release / "harness" / "hret" / "benchsmith_hret.py"


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, timeout=600,
                          env={**os.environ, "OPENAI_API_KEY": "none", "HF_DATASETS_OFFLINE": "1", **env})


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed: no stand-in is made")
def test_importing_the_script_leaves_no_stand_in_module_behind(harness_release, tmp_path):
    _, release, _ = harness_release
    check = (f"import importlib.util, sys\n"
             f"spec = importlib.util.spec_from_file_location('benchsmith_hret', {str(_script(release))!r})\n"
             "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
             "from llm_eval.models import MODEL_REGISTRY\n"
             "print(sorted(n for n in ('torch', 'transformers', 'spacy') if importlib.util.find_spec(n) is not None),\n"
             "      sorted(n for n in sys.modules if n.partition('.')[0] in ('torch', 'transformers', 'spacy')),\n"
             "      MODEL_REGISTRY['benchsmith_openai'].__name__)\n")
    done = _run(["-c", check], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "[] [] BenchsmithOpenAI"
    assert "ko_core_news_sm" not in done.stdout + done.stderr  # HRET's spaCy notice, not shown


def test_an_untested_hret_is_refused_with_a_clear_message(harness_release, tmp_path):
    _, release, _ = harness_release
    newer = tmp_path / "site" / "haerae_evaluation_toolkit-9.9.9.dist-info"  # what pip records of an install
    newer.mkdir(parents=True)
    (newer / "METADATA").write_text("Metadata-Version: 2.1\nName: haerae-evaluation-toolkit\nVersion: 9.9.9\n",
                                    encoding="utf-8")
    done = _run([str(_script(release)), "--model", "m", "--base-url", "http://127.0.0.1:9/v1"], tmp_path,
                PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")]))
    assert done.returncode != 0
    assert "HRET 9.9.9 is untested with this release; tested: 0.1.0" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_failed_request_stops_the_run_and_names_its_item(harness_release, tmp_path):
    _, release, counts = harness_release
    rows = release_rows(release, ["full"])["full"]
    broken = next(row for row in rows if not row["question_images"])
    scripted = Responder({row["question"]: len(row["options"]) for row in rows})

    def responder(prompt: str, body: dict) -> str | Scripted:
        return Scripted(fault="500") if broken["question"] in prompt else scripted(prompt, body)

    with ServerThread(ServerConfig(responder=responder)) as running:
        done = _run([str(_script(release)), "--config", "full", "--model", "m", "--base-url", f"{running.url}/v1",
                     "--output", str(tmp_path / "hret.json")], tmp_path)
    assert done.returncode != 0
    assert f"item {broken['id']} (config full): the request failed" in done.stderr
    assert "accuracy" not in done.stdout and not (tmp_path / "hret.json").exists()
    assert json.dumps(counts)  # the release the fixture built
