"""Shared by the in-process backends (vLLM offline, transformers, llama.cpp): requests from
many coroutines are gathered into batches and generated in a worker thread, so the event
loop (and the progress bar) keep running while the model computes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from evaluation.backends.base import BackendError, ChatRequest, Completion, Message
from evaluation.models import ModelSpec

Generate = Callable[[list[ChatRequest]], list[Completion]]


class MicroBatcher:
    def __init__(self, generate: Generate, max_batch: int = 64, gather_s: float = 0.005):
        self.generate = generate
        self.max_batch = max_batch
        self.gather_s = gather_s
        self._pending: list[tuple[ChatRequest, asyncio.Future[Completion]]] = []
        self._drainer: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()  # one batch on the model at a time

    async def submit(self, request: ChatRequest) -> Completion:
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._pending.append((request, future))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._pending:
            await asyncio.sleep(self.gather_s)
            batch, self._pending = self._pending[: self.max_batch], self._pending[self.max_batch :]
            live = [(request, future) for request, future in batch if not future.done()]
            if not live:
                continue
            async with self._lock:
                try:
                    results = await asyncio.to_thread(self.generate, [request for request, _ in live])
                except Exception as error:  # the model failed on this batch: every request in it gets the error
                    failure = error if isinstance(error, BackendError) else BackendError("server", f"{type(error).__name__}: {error}")
                    for _, future in live:
                        if not future.done():
                            future.set_exception(failure)
                    continue
            for (_, future), result in zip(live, results, strict=True):
                if not future.done():
                    future.set_result(result)


class OneByOneBackend:
    """An in-process backend that answers one request at a time through its MicroBatcher;
    subclasses set `spec` and `batcher` and implement `_one`."""

    spec: ModelSpec
    batcher: MicroBatcher

    def _one(self, request: ChatRequest) -> Completion:
        raise NotImplementedError

    def _generate(self, requests: list[ChatRequest]) -> list[Completion]:
        return [self._one(request) for request in requests]

    async def complete(self, request: ChatRequest) -> Completion:
        require_text_only(self.spec, request)
        return await self.batcher.submit(request)


def require_text_only(spec: ModelSpec, request: ChatRequest) -> None:
    if request.has_images() and not spec.capabilities.vision:
        raise BackendError("client", f"model {spec.name!r} is text-only but the request has images")


def plain_messages(messages: tuple[Message, ...], fold_system: bool = False) -> list[dict[str, Any]]:
    """Text-only chat messages; with fold_system the system text opens the first user turn
    (chat templates such as Gemma's drop system messages)."""
    result = [{"role": m.role, "content": m.text()} for m in messages]
    if fold_system and result and result[0]["role"] == "system":
        system = result.pop(0)["content"]
        if result and result[0]["role"] == "user":
            result[0]["content"] = f"{system}\n\n{result[0]['content']}"
        else:
            result.insert(0, {"role": "user", "content": system})
    return result


def sampling(spec: ModelSpec) -> dict[str, Any]:
    """Decoding settings as keyword arguments, without the ones left unset."""
    decoding = spec.decoding
    values = {"temperature": decoding.temperature, "top_p": decoding.top_p, "max_tokens": decoding.max_tokens,
              "seed": decoding.seed, "stop": decoding.stop}
    return {key: value for key, value in values.items() if value is not None}
