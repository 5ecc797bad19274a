"""Gemini wire format, the judge, metrics and the report, against the project's local server."""

from __future__ import annotations

import base64
import csv

import pytest

from evaluation.judge import judge_log_path, judge_run, parse_verdict
from evaluation.metrics import accuracy_by_subset, bootstrap_ci, load_run, reasoning_scores
from evaluation.models import resolve_model
from evaluation.report import write_report
from evaluation.runlog import RESPONSES, read_records
from evaluation.runner import RunRequest, run_model
from evaluation.sender import InvalidResponse, SenderSettings
from tests.eval_support import seed_items
from tests.fault_server import ServerConfig, ServerThread

FAST = SenderSettings(concurrency=4, backoff_base_s=0.01, backoff_cap_s=0.05, max_retries=6, timeout_s=10)


@pytest.mark.gemini
def test_gemini_client_sends_inline_images_thinking_and_seed(workspace) -> None:
    pytest.importorskip("google.genai", reason="the gemini extra is not installed")
    seed_items(workspace, n_text=2, n_image=2)
    # faults are drawn from each request's hash: at 0.5 the 4 requests meet a 429 whatever their
    # bodies are (at 0.3 a change of max_tokens once left them all unthrottled), and 6 retries get through
    with ServerThread(ServerConfig(fault_rates={"429": 0.5}, seed=1)) as server:
        spec = resolve_model(f"gemini:gemini-test?vision=true&thinking=true&thinking_level=low&seed=11&base_url={server.url}")
        summary = run_model(workspace, RunRequest(spec, settings=FAST))
        bodies = [b["body"] for b in server.stats.bodies]
        throttled = server.stats.by_result["429"]
    assert throttled > 0 and summary.stats["throttled"] == throttled
    records = read_records(summary.run_dir / RESPONSES)
    assert len(records) == 4 and all(r["outcome"] in ("correct", "wrong", "unparseable") for r in records.values())
    assert all(r["thinking"].startswith("생각 (LOW)") for r in records.values())
    assert all(b["generationConfig"]["seed"] == 11 for b in bodies)
    assert all("systemInstruction" in b for b in bodies)
    inline = [p.get("inlineData") or p.get("inline_data") for b in bodies for c in b["contents"] for p in c["parts"]
              if "inlineData" in p or "inline_data" in p]
    image_item = workspace.store.get("eval-image-002").item
    expected = {workspace.blobs.get(ref) for ref in image_item.blob_refs()}
    sent = {base64.b64decode(part["data"]) for part in inline}
    assert expected <= sent and all(part.get("mimeType", part.get("mime_type")) == "image/png" for part in inline)


def _reasoning_run(workspace, server):
    spec = resolve_model(f"openai-compatible:student@{server.url}/v1")
    return run_model(workspace, RunRequest(spec, prompt_name="reasoning", settings=FAST))


def test_judge_scores_rationales_with_native_structured_output(workspace) -> None:
    seed_items(workspace, n_text=5, n_image=0, rationale=True)
    with ServerThread() as server:
        run = _reasoning_run(workspace, server)
        judge = resolve_model(f"openai-compatible:judge@{server.url}/v1?structured_output=true&name=judge-a")
        seen = len(server.stats.bodies)
        summary = judge_run(workspace, run.run_dir, judge, FAST)
        judge_bodies = [b["body"] for b in server.stats.bodies[seen:]]
    assert summary["ok"] == 5 and summary["missing"] == 0
    assert all(b["response_format"]["type"] == "json_schema" for b in judge_bodies)
    prompt_text = judge_bodies[0]["messages"][1]["content"]
    assert "student" not in prompt_text and "[참고 해설]" in prompt_text  # identity hidden, reference given
    verdicts = read_records(judge_log_path(run.run_dir, judge))
    assert all(4 <= v["total"] <= 20 and set(v["scores"]) == {"factuality", "logical_soundness", "depth", "clarity"}
               for v in verdicts.values())


def test_invalid_verdicts_are_retried_then_missing_and_never_averaged(workspace) -> None:
    seed_items(workspace, n_text=3, n_image=0, rationale=True)
    with ServerThread(ServerConfig(answer_style="json")) as server:
        run = _reasoning_run(workspace, server)
        # no structured output: the server answers the judge with an exam answer, not a verdict
        judge = resolve_model(f"openai-compatible:judge@{server.url}/v1?name=broken-judge")
        seen = len(server.stats.bodies)
        summary = judge_run(workspace, run.run_dir, judge, FAST, max_invalid=2)
        resent = len(server.stats.bodies) - seen
    assert summary == {**summary, "ok": 0, "missing": 3}
    assert resent == 3 * 3
    verdicts = read_records(judge_log_path(run.run_dir, judge))
    assert all(v["status"] == "missing" and "invalid after 3 tries" in v["error"]["message"] for v in verdicts.values())
    scores = reasoning_scores(load_run(run.run_dir, workspace))
    assert scores[0].n == 0 and scores[0].missing == 3 and scores[0].mean is None


@pytest.mark.parametrize("text", ['{"factuality": 6, "logical_soundness": 3, "depth": 3, "clarity": 3}',
                                  '{"factuality": 4}', "점수는 4점입니다", '{"factuality": "높음", "logical_soundness": 3, '
                                  '"depth": 3, "clarity": 3}'])
def test_parse_verdict_refuses_invalid(text) -> None:
    with pytest.raises(InvalidResponse):
        parse_verdict(text)


def test_parse_verdict_reads_fenced_json_after_thinking() -> None:
    verdict = parse_verdict('<think>근거를 비교</think>```json\n{"factuality": 4, "logical_soundness": 5, "depth": 3, '
                            '"clarity": 4, "factual_errors": []}\n```')
    assert verdict.total == 16


def test_metrics_and_report_files(workspace, tmp_path) -> None:
    seed_items(workspace, n_text=12, n_image=3)
    with ServerThread() as server:
        vision = run_model(workspace, RunRequest(resolve_model(f"openai-compatible:v@{server.url}/v1?vision=true"),
                                                 settings=FAST))
    baseline = run_model(workspace, RunRequest(resolve_model("baseline:longest")))
    runs = [load_run(r.run_dir, workspace) for r in (vision, baseline)]
    scores = {s.subset: s for s in accuracy_by_subset(runs[0], seed=3)}
    records = runs[0].records
    correct = sum(r.outcome == "correct" for r in records.values())
    assert scores["overall"].n == 15 and scores["overall"].correct == correct
    assert scores["multimodal"].n == 3 and scores["text_only"].n == 12 and scores["korea_specific"].n == 4
    assert scores["overall"].ci[0] <= scores["overall"].accuracy <= scores["overall"].ci[1]
    assert accuracy_by_subset(runs[0], seed=3)[0].ci == scores["overall"].ci  # seeded
    base_scores = {s.subset: s for s in accuracy_by_subset(runs[1])}
    assert base_scores["multimodal"].n == 0 and base_scores["multimodal"].not_sent == 3
    files = write_report(runs, tmp_path / "report", seed=3, resamples=500)
    names = {f.name for f in files.files}
    assert {"report.md", "accuracy.csv", "reasoning.csv"} <= names
    text = files.markdown.read_text(encoding="utf-8")
    assert "not sent (3)" in text and "| common |" in text
    with (tmp_path / "report" / "accuracy.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    overall = next(r for r in rows if r["run_id"] == vision.run_id and r["subset"] == "overall")
    assert int(overall["n"]) == 15 and int(overall["correct"]) == correct
    if pytest.importorskip("matplotlib", reason="the report extra is not installed"):
        for chart in ("radar.png", "subsets.png"):
            assert (tmp_path / "report" / chart).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bootstrap_interval_behaviour() -> None:
    import numpy as np

    assert bootstrap_ci(np.array([]), 0) is None
    assert bootstrap_ci(np.ones(20), 0) == (1.0, 1.0)
    wide = bootstrap_ci(np.array([0, 1] * 5, dtype=float), 0)
    narrow = bootstrap_ci(np.array([0, 1] * 500, dtype=float), 0)
    assert wide[1] - wide[0] > narrow[1] - narrow[0] > 0
