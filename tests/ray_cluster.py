"""A two-node Ray cluster on 127.0.0.1 for tests and benchmarks, and its launcher.

`ray start` on Linux replaces a loopback node address by the machine's outward address (and then
listens there); the launcher runs the very same `ray start` with that one lookup pinned to
127.0.0.1, so every Ray server of these clusters listens on loopback only:

    python -m tests.ray_cluster start --head --num-cpus 1 --port PORT
    python -m tests.ray_cluster start --address 127.0.0.1:PORT --num-cpus 1
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"


def pin_loopback() -> None:
    """In this process (a driver or `ray start`), this node's address is 127.0.0.1."""
    import ray._private.services as services

    services.get_node_ip_address = lambda address=None: LOOPBACK


def _unused_port() -> int:
    """A port free a moment ago; another process may take it first (the caller retries then)."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _ray(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    return subprocess.run([sys.executable, "-m", "tests.ray_cluster", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=180)


def _checked(done: subprocess.CompletedProcess) -> None:
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(done.args[2:])} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def _processes() -> dict[int, tuple[int, str, str]]:
    """pid → (parent pid, state, command line) of every process on this machine (Linux /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        found[int(entry.name)] = (int(parent), state, command)
    return found


def cluster_pids(marks: tuple[str, ...]) -> set[int]:
    """The processes whose command line names one of `marks` (this cluster's temp dir or GCS address),
    and their descendants (Ray's workers and agents rename themselves, `ray::IDLE`)."""
    processes = _processes()
    found = {pid for pid, (_, _, command) in processes.items()
             if pid != os.getpid() and any(mark in command for mark in marks)}
    while True:
        children = {pid for pid, (parent, _, _) in processes.items() if parent in found} - found
        if not children:
            return found
        found |= children


def _alive(pids: set[int]) -> set[int]:
    processes = _processes()
    return {pid for pid in pids if pid in processes and processes[pid][1] != "Z"}  # a zombie has ended


def stop_cluster(marks: tuple[str, ...], grace_s: float = 15.0) -> None:
    """Stop this cluster's processes only (`ray stop` would stop every Ray on the machine)."""
    pids = cluster_pids(marks)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while (alive := _alive(pids)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@contextmanager
def two_node_cluster() -> Iterator[str]:
    """Head and one worker node, one CPU each, on 127.0.0.1, with their own temp dir; always
    stopped (also on failure), and only they are."""
    memory = str(200 * 1024 * 1024)
    with tempfile.TemporaryDirectory(prefix="ray-test-", dir="/tmp", ignore_cleanup_errors=True) as temp_dir:
        marks: tuple[str, ...] = (temp_dir,)
        try:
            for _ in range(5):
                port = _unused_port()
                marks = (temp_dir, f"{LOOPBACK}:{port}", f"--gcs_server_port={port}")
                head = _ray("start", "--head", "--num-cpus", "1", "--num-gpus", "0", "--port", str(port),
                            "--include-dashboard", "false", "--object-store-memory", memory, "--temp-dir", temp_dir,
                            # not Ray's fixed default (8265): another Ray on this machine may hold it (the client
                            # server, 10001, starts only with ray[client], which is not installed)
                            "--dashboard-port", str(_unused_port()))
                if head.returncode == 0 or not _port_taken(head):
                    break
                stop_cluster(marks)  # whatever the failed start left behind
            _checked(head)
            _checked(_ray("start", "--address", f"{LOOPBACK}:{port}", "--num-cpus", "1", "--num-gpus", "0",
                          "--object-store-memory", memory))
            yield f"{LOOPBACK}:{port}"
        finally:
            stop_cluster(marks)


def _port_taken(done: subprocess.CompletedProcess) -> bool:
    said = (done.stdout + done.stderr).lower()
    return any(words in said for words in ("already in use", "address in use", "already occupied", "is not free"))


if __name__ == "__main__":
    pin_loopback()
    from ray.scripts.scripts import main

    sys.argv[0] = "ray"
    main()
