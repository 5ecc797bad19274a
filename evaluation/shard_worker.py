"""What a worker runs for one answer shard: the shard's requests against the model, results
streamed back to the driver in small batches.

It never opens the workspace, the response cache or a run log (the driver is the one writer).
Images travel inside the shard as bytes and are written to a local temporary folder named by
their content hash, so a worker on another machine needs only the package and model access.
"""

from __future__ import annotations

import asyncio
import os
import queue
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evaluation.backends import make_backend
from evaluation.backends.base import BackendError, ChatRequest, Completion, ImagePart, Message
from evaluation.models import ModelSpec
from evaluation.sender import Job, RequestSender, SenderSettings

BATCH_RECORDS = 64
BATCH_SECONDS = 0.2
_DONE = object()


@dataclass(frozen=True)
class ShardRequest:
    job_id: str
    key: str  # the cache key: what the driver deduplicates by
    request: ChatRequest


@dataclass(frozen=True)
class AnswerShard:
    spec: ModelSpec
    settings: SenderSettings
    requests: tuple[ShardRequest, ...]
    images: dict[str, bytes]  # sha256 → image bytes, for every image part in the requests

    def without(self, keys: set[str]) -> AnswerShard:
        return replace(self, requests=tuple(r for r in self.requests if r.key not in keys))


def image_parts(requests: Iterable[ChatRequest]) -> Iterator[ImagePart]:
    for request in requests:
        for message in request.messages:
            yield from (part for part in message.parts if isinstance(part, ImagePart))


def pack_images(requests: Iterable[ChatRequest]) -> dict[str, bytes]:
    return {part.sha256: part.data() for part in image_parts(requests)}


def _local_image(part: ImagePart, data: bytes, folder: Path) -> ImagePart:
    path = folder / f"{part.sha256}{part.path.suffix}"
    if not path.exists():
        tmp = folder / f".{part.sha256}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return ImagePart(path, part.sha256, part.mime)


def _localise(request: ChatRequest, images: dict[str, bytes], folder: Path) -> ChatRequest:
    if not request.has_images():
        return request
    messages = tuple(Message(m.role, tuple(_local_image(p, images[p.sha256], folder) if isinstance(p, ImagePart) else p
                                           for p in m.parts)) for m in request.messages)
    return replace(request, messages=messages)


def _transport(job: Job, completion: Completion | None, error: BackendError | None, meta: dict[str, Any]) -> dict[str, Any]:
    return {"job_id": job.id, "completion": completion.to_record() if completion is not None else None,
            "error": [error.kind, str(error)] if error is not None else None, "meta": meta}


def received(record: dict[str, Any]) -> tuple[Completion | None, BackendError | None]:
    """A transported record back into what the request sender had: the completion or the final error."""
    completion = Completion.from_record(record["completion"]) if record["completion"] is not None else None
    error = BackendError(record["error"][0], record["error"][1]) if record["error"] is not None else None
    return completion, error


class _QueueSink:
    def __init__(self, results: queue.Queue):
        self.results = results

    def append(self, record: dict[str, Any]) -> None:
        self.results.put(record)


async def _send_all(shard: AnswerShard, results: queue.Queue) -> None:
    folder = Path(tempfile.gettempdir()) / "benchsmith-shard-images"
    if shard.images:
        folder.mkdir(parents=True, exist_ok=True)
    jobs = [Job(r.job_id, _localise(r.request, shard.images, folder), r.key, _transport) for r in shard.requests]
    backend = make_backend(shard.spec, shard.settings.concurrency)
    try:
        await RequestSender(backend, shard.settings, _QueueSink(results), None).run(jobs)
    finally:
        await backend.aclose()


def answer_shard(shard: AnswerShard) -> Iterator[list[dict[str, Any]]]:
    """Send the shard's requests; yield finished records in batches as they come; raise what failed."""
    results: queue.Queue = queue.Queue()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(_send_all(shard, results))
        except BaseException as error:  # noqa: BLE001 - handed to the generator below
            failure.append(error)
        finally:
            results.put(_DONE)

    thread = threading.Thread(target=run, name="benchsmith-shard", daemon=True)
    thread.start()
    batch: list[dict[str, Any]] = []
    last = time.monotonic()
    while True:
        try:
            record = results.get(timeout=BATCH_SECONDS)
        except queue.Empty:
            record = None
        if record is _DONE:
            break
        if record is not None:
            batch.append(record)
        if batch and (len(batch) >= BATCH_RECORDS or time.monotonic() - last >= BATCH_SECONDS):
            yield batch
            batch, last = [], time.monotonic()
    thread.join()
    if batch:
        yield batch
    if failure:
        raise failure[0]
