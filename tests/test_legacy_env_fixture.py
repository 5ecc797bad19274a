"""The `datasets` 3.6 environment fixture skips only when the package index is unreachable; with the
index answering, a failed install fails the test (it once turned every failure into a skip)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .conftest import REPO

USES_THE_FIXTURE = """
from tests.conftest import legacy_datasets_python  # noqa: F401

def test_needs_datasets_3(legacy_datasets_python):
    assert legacy_datasets_python.exists()
"""


class _NoPackages(BaseHTTPRequestHandler):
    """An index that answers every request and has no package at all."""

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def _run_with_index(tmp_path, index_url: str) -> subprocess.CompletedProcess:
    test_file = tmp_path / "test_uses_legacy_env.py"
    test_file.write_text(USES_THE_FIXTURE, encoding="utf-8")
    env = {**os.environ, "PIP_INDEX_URL": index_url, "PIP_EXTRA_INDEX_URL": "", "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(test_file),
                           "--rootdir", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)


def test_a_failed_install_with_the_index_reachable_fails(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NoPackages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done = _run_with_index(tmp_path, f"http://127.0.0.1:{server.server_address[1]}/simple/")
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 1, done.stdout
    assert "1 error" in done.stdout and "skipped" not in done.stdout, done.stdout
    assert "datasets==3.6.0" in done.stdout  # the failure names the install that failed


def test_an_unreachable_index_is_a_skip_with_its_reason(tmp_path):
    done = _run_with_index(tmp_path, "http://127.0.0.1:9/simple/")  # the discard port: nothing listens, refused
    assert done.returncode == 0, done.stdout
    assert "1 skipped" in done.stdout and "is unreachable (ConnectError" in done.stdout, done.stdout
