"""Shards on a Ray cluster (the `ray` extra, imported only here and only when asked for).

Each shard is one Ray task (a streaming generator, so results reach the driver while the shard
runs) with the CPUs and GPUs its shard asks for. Ray's own task retries are off: the driver
retries a failed shard itself, with only the work the failed attempt had not returned.
"""

from __future__ import annotations

import logging
import socket
from typing import Any
from urllib.parse import urlsplit

from curation.core.errors import require_extra
from curation.execution.executors import Event, ExecutorError, Shard, Started, describe_error, pump

_WAIT_S = 1.0
_CONNECT_TIMEOUT_S = 5.0


def _pump_task(fn: Any, payload: Any) -> Any:
    import ray

    node = ray.get_runtime_context().get_node_id()
    for value in pump(fn, payload):
        yield Started(value.pid, value.host, node) if isinstance(value, Started) else value


def _check_reachable(address: str) -> None:
    """A HOST:PORT or ray://HOST:PORT that takes no TCP connection fails here in seconds,
    instead of inside Ray's own reconnect loop."""
    target = address if "://" in address else f"gcs://{address}"
    parts = urlsplit(target)
    if parts.hostname is None or parts.port is None:
        raise ExecutorError(f"--ray-address {address!r}: expected auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=_CONNECT_TIMEOUT_S).close()
    except OSError as error:
        raise ExecutorError(f"cannot reach the Ray cluster at {address}: {error.strerror or error} "
                            "(start one with `ray start --head`; nothing was run)") from None


class RayExecutor:
    name = "ray"

    def __init__(self, address: str | None = None):
        ray = require_extra("ray", "ray")
        self._ray = ray
        address = address or "auto"
        if address != "auto":
            _check_reachable(address)
        self._owns_connection = not ray.is_initialized()
        if self._owns_connection:
            try:
                ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError, TimeoutError) as error:
                raise ExecutorError(f"cannot reach the Ray cluster at {address}: {describe_error(error)} "
                                    "(start one with `ray start --head`; nothing was run)") from None
        self._task = ray.remote(_pump_task)
        self._running: dict[Any, tuple[str, int]] = {}

    def submit(self, shard: Shard, attempt: int) -> None:
        generator = self._task.options(num_cpus=shard.num_cpus, num_gpus=shard.num_gpus, max_retries=0,
                                       num_returns="streaming", name=f"benchsmith:{shard.key}").remote(shard.fn, shard.payload)
        self._running[generator] = (shard.key, attempt)

    def next_event(self) -> Event:
        ready: list[Any] = []
        while not ready:
            ready, _ = self._ray.wait(list(self._running), num_returns=1, timeout=_WAIT_S)
        generator = ready[0]
        key, attempt = self._running[generator]
        try:
            value = self._ray.get(next(generator))
        except StopIteration:
            del self._running[generator]
            return Event("end", key, attempt)
        except Exception as error:  # noqa: BLE001 - a crashed worker or a raising shard
            del self._running[generator]
            return Event("error", key, attempt, error=describe_error(getattr(error, "cause", None) or error))
        return Event("start" if isinstance(value, Started) else "output", key, attempt, value)

    def close(self) -> None:
        for generator in list(self._running):
            try:
                self._ray.cancel(generator, force=True)
            except Exception:  # noqa: BLE001 - already finished or its worker gone
                pass
        self._running.clear()
        if self._owns_connection:
            self._ray.shutdown()
