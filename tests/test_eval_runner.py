"""The runner against real HTTP servers on 127.0.0.1 (the project's fault-injecting server),
the real SQLite cache and the real JSONL logs. No timing assertions."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from curation.core.item import parse_item
from evaluation.cache import ResponseCache, cache_key
from evaluation.models import resolve_model
from evaluation.prompts import ImageResolver, build_request, get_prompt
from evaluation.runlog import RESPONSES, read_records
from evaluation.runner import OUTCOMES, RunRequest, run_model
from evaluation.sender import BackendUnreachable, SenderSettings
from tests.conftest import REPO
from tests.eval_support import seed_items
from tests.fault_server import ServerConfig, ServerThread

FAST = SenderSettings(concurrency=8, backoff_base_s=0.01, backoff_cap_s=0.05, max_retries=6, timeout_s=5)


def _spec(url: str, extra: str = ""):
    return resolve_model(f"openai-compatible:fake-model@{url}/v1{extra}")


def test_every_item_gets_an_outcome_through_faults(workspace) -> None:
    ids = seed_items(workspace, n_text=30, n_image=0)
    faults = {"429": 0.1, "503": 0.05, "500": 0.15, "malformed": 0.1, "truncated": 0.05}
    with ServerThread(ServerConfig(fault_rates=faults, seed=3)) as server:
        summary = run_model(workspace, RunRequest(_spec(server.url), settings=FAST))
        stats = server.stats.to_dict()
    records = read_records(summary.run_dir / RESPONSES)
    assert set(records) == set(ids)
    assert all(record["outcome"] in OUTCOMES for record in records.values())
    assert sum(summary.counts.values()) == len(ids)
    faults = stats["requests"] - stats["by_result"]["ok"]
    assert faults > 0, "the server injected faults"
    # every request after an item's first is a retry; the throttled ones are the 429s and 503s
    assert summary.stats["sent"] == stats["requests"] == sum(r["attempts"] for r in records.values())
    assert summary.stats["retries"] == stats["requests"] - len(ids)
    assert summary.stats["throttled"] == stats["by_result"].get("429", 0) + stats["by_result"].get("503", 0)
    assert stats["duplicate_answers"] == 0
    answered = [r for r in records.values() if r["outcome"] != "error"]
    assert len(answered) == stats["by_result"]["ok"]
    # the fake server counts a reply's words as its completion tokens; latency is a measurement (only its sign is known)
    assert all(r["usage"]["completion_tokens"] == len(r["text"].split()) and r["latency_s"] >= 0 for r in answered)


def test_exhausted_retries_are_errors_not_wrong_answers(workspace) -> None:
    seed_items(workspace, n_text=4, n_image=0)
    with ServerThread(ServerConfig(fault_rates={"500": 1.0})) as server:
        settings = SenderSettings(concurrency=2, backoff_base_s=0.01, backoff_cap_s=0.02, max_retries=2)
        summary = run_model(workspace, RunRequest(_spec(server.url), settings=settings))
        assert server.stats.requests == 4 * 3
    assert summary.counts == {"correct": 0, "wrong": 0, "unparseable": 0, "error": 4, "undecided": 0}
    record = next(iter(read_records(summary.run_dir / RESPONSES).values()))
    assert record["error"]["kind"] == "server" and record["attempts"] == 3


def test_timeout_is_an_error_outcome(workspace) -> None:
    seed_items(workspace, n_text=2, n_image=0)
    with ServerThread(ServerConfig(fault_rates={"timeout": 1.0}, hang_s=3)) as server:
        settings = SenderSettings(concurrency=2, timeout_s=0.3, max_retries=0)
        summary = run_model(workspace, RunRequest(_spec(server.url), settings=settings))
    kinds = {r["error"]["kind"] for r in read_records(summary.run_dir / RESPONSES).values()}
    assert summary.counts["error"] == 2 and kinds == {"timeout"}


def test_truncation_by_max_tokens_is_an_error(workspace) -> None:
    seed_items(workspace, n_text=3, n_image=0)
    with ServerThread(ServerConfig(answer_style="think")) as server:
        summary = run_model(workspace, RunRequest(_spec(server.url, "?max_tokens=2"), settings=FAST))
    records = read_records(summary.run_dir / RESPONSES).values()
    assert {r["outcome"] for r in records} == {"error"}
    assert all(r["error"]["kind"] == "truncated" and r["finish_reason"] == "length" for r in records)
    assert all(r["thinking"] for r in records), "the thinking of a cut-off reply is stored"


def test_streamed_responses_and_cut_streams(workspace) -> None:
    ids = seed_items(workspace, n_text=12, n_image=0)
    with ServerThread(ServerConfig(fault_rates={"truncated": 0.3}, seed=5)) as server:
        summary = run_model(workspace, RunRequest(_spec(server.url, "?stream=true"), settings=FAST))
        truncated = server.stats.by_result["truncated"]
        assert truncated > 0, "the server cut some streams"
        assert server.stats.requests == len(ids) + truncated  # each cut stream is asked once more, nothing else
        assert summary.stats["retries"] == truncated
        assert all(body["body"].get("stream") for body in server.stats.bodies)
    records = read_records(summary.run_dir / RESPONSES)
    assert set(records) == set(ids) and all(r["outcome"] != "error" for r in records.values())


def test_seed_and_temperature_reach_the_server_and_images_go_as_data_urls(workspace) -> None:
    seed_items(workspace, n_text=1, n_image=2)
    with ServerThread() as server:
        run_model(workspace, RunRequest(_spec(server.url, "?vision=true&seed=77&temperature=0.3"), settings=FAST))
        bodies = [b["body"] for b in server.stats.bodies]
    assert all(b["seed"] == 77 and b["temperature"] == 0.3 for b in bodies)
    image_bodies = [b for b in bodies if isinstance(b["messages"][1]["content"], list)]
    assert len(image_bodies) == 2
    urls = [p["image_url"]["url"] for b in image_bodies for p in b["messages"][1]["content"] if p["type"] == "image_url"]
    assert len(urls) == 3  # two question images and one option image
    for url in urls:
        header, data = url.split(",", 1)
        assert header == "data:image/png;base64"
        assert (workspace.blobs.root / f"{hashlib.sha256(base64.b64decode(data)).hexdigest()}.png").is_file()


def test_text_only_model_is_never_sent_images_and_says_so(workspace) -> None:
    seed_items(workspace, n_text=3, n_image=2)
    with ServerThread() as server:
        summary = run_model(workspace, RunRequest(_spec(server.url), settings=FAST))
        bodies = [b["body"] for b in server.stats.bodies]
    assert len(bodies) == 3 and all(isinstance(b["messages"][1]["content"], str) for b in bodies)
    assert summary.total == 3 and set(summary.skipped.values()) == {"has images; the model is text-only"}
    manifest = json.loads((summary.run_dir / "manifest.json").read_text())
    assert len(manifest["skipped"]) == 2


def test_resume_and_cache_never_resend_a_finished_request(workspace) -> None:
    seed_items(workspace, n_text=10, n_image=0)
    with ServerThread() as server:
        first = run_model(workspace, RunRequest(_spec(server.url), settings=FAST))
        again = run_model(workspace, RunRequest(_spec(server.url), settings=FAST))
        fresh = run_model(workspace, RunRequest(_spec(server.url), resume=False, settings=FAST))
        requests_seen = server.stats.requests
    assert again.run_id == first.run_id and again.done_before == 10
    assert fresh.run_id != first.run_id and fresh.stats["cached"] == 10
    assert requests_seen == 10
    assert read_records(fresh.run_dir / RESPONSES).keys() == read_records(first.run_dir / RESPONSES).keys()


def test_a_run_loads_its_items_under_pool_gc_thresholds_and_gives_the_callers_back(workspace) -> None:
    import gc

    from curation.pool_gc import POOL_THRESHOLDS

    seed_items(workspace, n_text=3, n_image=0)
    before = gc.get_threshold()
    during: list[tuple[int, int, int]] = []
    try:
        gc.set_threshold(700, 10, 10)
        with ServerThread() as server:
            run_model(workspace, RunRequest(_spec(server.url), settings=FAST),
                      on_start=lambda total, done: during.append(gc.get_threshold()))
        assert during == [POOL_THRESHOLDS] and gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(0)  # collection turned off by the caller stays off
        run_model(workspace, RunRequest(resolve_model("baseline:longest")),
                  on_start=lambda total, done: during.append(gc.get_threshold()))
        assert during[1][0] == 0 and gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)


def test_a_long_run_sends_its_first_requests_before_reading_the_rest_of_its_items(workspace) -> None:
    import asyncio

    from evaluation.runner import prepare_run

    seed_items(workspace, n_text=150, n_image=70)  # image items come first in id order; text-only: skipped
    spec = _spec("http://127.0.0.1:9")
    eager = prepare_run(workspace, RunRequest(spec, run_id="eager"))
    run = prepare_run(workspace, RunRequest(spec, run_id="streamed"), first=64)
    assert not run.complete and len(run.to_ask) == 64 and not (run.run_dir / "manifest.json").exists()

    built: list[str] = []
    completed_after: list[int] = []

    async def consume() -> None:
        async for job in run.stream_jobs(lambda: completed_after.append(len(built))):
            built.append(job.id)

    asyncio.run(consume())
    assert completed_after == [64] and built == [item.id for item, _ in eager.to_ask]
    manifest = json.loads((run.run_dir / "manifest.json").read_text())
    assert manifest["item_ids"] == eager.item_ids and manifest["skipped"] == eager.skipped and len(eager.skipped) == 70
    assert run.complete and run.done_before == 0 and run.item_ids == eager.item_ids


def test_no_record_is_logged_before_the_run_is_described(workspace) -> None:
    seed_items(workspace, n_text=150, n_image=0)
    seen: list[str] = []

    def on_start(total: int, done: int) -> None:
        seen.append(f"start {total} {done}")

    def on_record(record: dict) -> None:
        manifest = next(workspace.runs_dir.glob("*/manifest.json"), None)
        seen.append("record" if manifest and record["item_id"] in json.loads(manifest.read_text())["item_ids"] else "early")

    with ServerThread() as server:
        run_model(workspace, RunRequest(_spec(server.url), settings=FAST))
        for path in workspace.runs_dir.iterdir():  # a second run answered from the cache: no request to wait for
            shutil.rmtree(path)
        summary = run_model(workspace, RunRequest(_spec(server.url), settings=FAST), on_start, on_record)
    assert seen == ["start 150 0"] + ["record"] * 150
    assert summary.stats["cached"] == 150 and sum(summary.counts.values()) == 150


def test_cache_key_covers_model_revision_decoding_prompt_and_image_bytes(workspace) -> None:
    seed_items(workspace, n_text=0, n_image=1)
    item = workspace.store.get("eval-image-001").item
    spec = resolve_model("openai-compatible:m@http://127.0.0.1:9/v1?vision=true")
    prompt = get_prompt("standard")
    request = build_request(item, prompt, ImageResolver(workspace.blobs))
    base = cache_key(spec, request, prompt.version)
    variants = [
        cache_key(spec.model_copy(update={"model": "other"}), request, prompt.version),
        cache_key(spec.model_copy(update={"revision": "r2"}), request, prompt.version),
        cache_key(spec.model_copy(update={"decoding": spec.decoding.model_copy(update={"seed": 9})}), request, prompt.version),
        cache_key(spec, request, "standard-v2"),
    ]
    other_image = parse_item(item.to_record() | {"images": [{"blob": workspace.blobs.put(b"other bytes", "png")}]})
    variants.append(cache_key(spec, build_request(other_image, prompt, ImageResolver(workspace.blobs)), prompt.version))
    assert len({base, *variants}) == 6
    assert cache_key(spec.model_copy(update={"base_url": "http://elsewhere/v1", "name": "x"}), request, prompt.version) == base


def test_cache_survives_reopen(tmp_path) -> None:
    from evaluation.backends.base import Completion

    spec = resolve_model("baseline:longest")
    cache = ResponseCache(tmp_path / "cache.db", flush_every=1000)
    cache.put("k1", Completion("정답: 1", "생각", "stop", {"completion_tokens": 3}), spec)
    assert cache.get("k1").thinking == "생각"  # visible before the flush
    cache.close()
    assert ResponseCache(tmp_path / "cache.db").get("k1").usage == {"completion_tokens": 3}


def test_unreachable_server_is_one_clear_error_and_keeps_finished_work(workspace) -> None:
    seed_items(workspace, n_text=3, n_image=0)
    settings = SenderSettings(concurrency=2, backoff_base_s=0.01, max_retries=1)
    with pytest.raises(BackendUnreachable, match=r"cannot reach http://127\.0\.0\.1:9/v1"):
        run_model(workspace, RunRequest(_spec("http://127.0.0.1:9"), settings=settings))


def test_kill_nine_then_resume_sends_no_finished_request_again(workspace, tmp_path) -> None:
    seed_items(workspace, n_text=40, n_image=0)
    with ServerThread(ServerConfig(latency=0.2)) as server:
        script = (f"from curation.core.workspace import open_workspace; from evaluation.models import resolve_model;"
                  f"from evaluation.runner import RunRequest, run_model; from evaluation.sender import SenderSettings;"
                  f"run_model(open_workspace({str(workspace.root)!r}), RunRequest(resolve_model("
                  f"'openai-compatible:fake-model@{server.url}/v1'), settings=SenderSettings(concurrency=4)))")
        child = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
        log = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            log = next(workspace.runs_dir.glob(f"*/{RESPONSES}"), None)
            if log is not None and len(read_records(log)) >= 10:
                break
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        finished_before = read_records(log)
        assert 10 <= len(finished_before) < 40
        seen_before_resume = len(server.stats.bodies)
        summary = run_model(workspace, RunRequest(_spec(server.url), settings=FAST))
        resent = [re.search(r"문항 (\d+):", b["body"]["messages"][1]["content"]).group(1)
                  for b in server.stats.bodies[seen_before_resume:]]
    assert summary.done_before == len(finished_before)
    assert len(read_records(log)) == 40
    assert len(resent) == 40 - len(finished_before)
    assert not {f"eval-text-{int(n):03d}" for n in resent} & set(finished_before)


def test_explicit_variant_and_prompt_versions_reach_the_request(workspace) -> None:
    from tests.eval_support import text_record

    record = text_record(1) | {"explicit_variant": "문항 1: 한국(대한민국)의 겨울철 북서 계절풍이 강해지는 원인으로 옳은 것은?"}
    workspace.store.save_items([parse_item(record)], author="test", stage="test")
    with ServerThread() as server:
        implicit = run_model(workspace, RunRequest(_spec(server.url), settings=FAST))
        explicit = run_model(workspace, RunRequest(_spec(server.url), variant="explicit", prompt_name="advanced",
                                                   settings=FAST))
        users = [b["body"]["messages"][1]["content"] for b in server.stats.bodies]
        systems = [b["body"]["messages"][0]["content"] for b in server.stats.bodies]
    assert implicit.run_id != explicit.run_id
    assert "우리나라" in users[0] and "한국(대한민국)" in users[1]
    assert "대한민국을 뜻합니다" in systems[1] and "대한민국을 뜻합니다" not in systems[0]


def test_a_rerun_leaves_settled_items_and_retry_errors_asks_the_errors_again(workspace):
    from tests.conftest import run_cli as cli
    from tests.eval_support import seed_items

    ids = seed_items(workspace, n_text=6, n_image=0)
    ws = str(workspace.root)
    assert cli("run", "-m", "baseline:longest", "--run-id", "r", "--no-progress", "-w", ws).returncode == 0
    log = workspace.runs_dir / "r" / "responses.jsonl"
    manifest = (workspace.runs_dir / "r" / "manifest.json").read_bytes()
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    failed = lines[2] | {"outcome": "error", "answer": None, "error": {"message": "HTTP 500"}}  # same content
    with log.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(failed, ensure_ascii=False) + "\n")
    again = cli("run", "-m", "baseline:longest", "--run-id", "r", "--no-progress", "--json", "-w", ws)
    assert again.returncode == 0, again.stderr
    assert (workspace.runs_dir / "r" / "manifest.json").read_bytes() == manifest  # nothing new: left as it was
    assert len(log.read_text(encoding="utf-8").splitlines()) == len(ids) + 1  # nothing asked
    retried = cli("run", "-m", "baseline:longest", "--run-id", "r", "--no-progress", "--retry-errors", "-w", ws)
    assert retried.returncode == 0, retried.stderr
    added = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()][len(ids) + 1:]
    assert [record["item_id"] for record in added] == [failed["item_id"]] and added[0]["outcome"] != "error"


def test_answer_views_read_what_the_whole_item_says():
    from curation.core.item import AnswerView

    records = [
        {"id": "v-1", "source": {"exam": "x"}, "stem": "하나?", "options": [{"text": "가"}, {"text": "나"}], "answer": 2},
        {"id": "v-2", "source": {"exam": "x"}, "stem": "모두 고르시오", "options": [{"text": t} for t in "가나다라"],
         "answer": [1, 3], "taxonomy": {"question_format": "multiple_answers"}},
        {"id": "v-3", "source": {"exam": "x"}, "stem": "어느 것?", "answer": [2, 4],
         "options": [{"text": "가"}, {"text": "", "image": {"blob": "a" * 64 + ".png"}}, {"text": "다"}, {"text": "라"}]},
        {"id": "v-4", "source": {"exam": "x"}, "stem": "그림", "images": [{"blob": "b" * 64 + ".png"}],
         "options": [{"text": "가"}, {"text": "나"}], "answer": None},
    ]
    for record in records:
        item = parse_item(record)
        view = AnswerView.model_validate_json(json.dumps(item.to_record(), ensure_ascii=False))
        assert (view.id, [o.text for o in view.options], view.answer, view.multimodal, view.answer_list()) == (
            item.id, [o.text for o in item.options], item.answer, item.multimodal, item.answer_list())
        for chosen in (None, 1, 2, 3, 4, [1, 3], [2, 4], [1, 2, 3]):
            assert view.accepts(chosen) == item.accepts(chosen)


@pytest.mark.parametrize("model", ["baseline:longest", "baseline:random-3"])
def test_a_local_baseline_logs_the_same_records_from_answer_views_as_from_whole_items(workspace, monkeypatch, model):
    import evaluation.datasets

    seed_items(workspace, n_text=9, n_image=3)
    spec = resolve_model(model)
    monkeypatch.setattr(evaluation.datasets, "ONE_PASS_FROM", 10**9)  # whole items
    run_model(workspace, RunRequest(spec, run_id="whole"))
    monkeypatch.setattr(evaluation.datasets, "ONE_PASS_FROM", 0)  # answer views, one pass
    parsed: list[str] = []
    view_from_data = evaluation.datasets.view_from_data
    monkeypatch.setattr(evaluation.datasets, "view_from_data", lambda data: parsed.append(data) or view_from_data(data))
    run_model(workspace, RunRequest(spec, run_id="views"))
    assert len(parsed) == 12  # every item was read as a view

    def logged(run_id: str) -> list[dict]:
        lines = (workspace.runs_dir / run_id / RESPONSES).read_text(encoding="utf-8").splitlines()
        return [{k: v for k, v in json.loads(line).items() if k != "ts"} for line in lines]

    assert logged("views") == logged("whole") and len(logged("whole")) == 9  # the image items are skipped alike
    manifests = [json.loads((workspace.runs_dir / r / "manifest.json").read_text(encoding="utf-8")) for r in
                 ("whole", "views")]
    assert manifests[0]["item_ids"] == manifests[1]["item_ids"] and manifests[0]["skipped"] == manifests[1]["skipped"]
