"""A two-node Ray cluster on 127.0.0.1 for tests and benchmarks, and its launcher.

`ray start` on Linux replaces a loopback node address by the machine's outward address (and then
listens there); the launcher runs the very same `ray start` with that one lookup pinned to
127.0.0.1, so every Ray server of these clusters listens on loopback only:

    python -m tests.ray_cluster start --head --num-cpus 1 --port PORT
    python -m tests.ray_cluster start --address 127.0.0.1:PORT --num-cpus 1
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"


def pin_loopback() -> None:
    """In this process (a driver or `ray start`), this node's address is 127.0.0.1."""
    import ray._private.services as services

    services.get_node_ip_address = lambda address=None: LOOPBACK


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _ray(*args: str) -> None:
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    subprocess.run([sys.executable, "-m", "tests.ray_cluster", *args], cwd=REPO, env=env, check=True,
                   capture_output=True, text=True, timeout=180)


def stop_cluster() -> None:
    subprocess.run([sys.executable, "-m", "ray.scripts.scripts", "stop", "--force"], capture_output=True, timeout=120)


@contextmanager
def two_node_cluster() -> Iterator[str]:
    """Head and one worker node, one CPU each, on 127.0.0.1; always stopped (also on failure)."""
    port = _free_port()
    try:
        _ray("start", "--head", "--num-cpus", "1", "--num-gpus", "0", "--port", str(port), "--include-dashboard",
             "false", "--object-store-memory", str(200 * 1024 * 1024))
        _ray("start", "--address", f"{LOOPBACK}:{port}", "--num-cpus", "1", "--num-gpus", "0",
             "--object-store-memory", str(200 * 1024 * 1024))
        yield f"{LOOPBACK}:{port}"
    finally:
        stop_cluster()


if __name__ == "__main__":
    pin_loopback()
    from ray.scripts.scripts import main

    sys.argv[0] = "ray"
    main()
