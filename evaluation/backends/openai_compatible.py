"""OpenAI chat completions through the `openai` SDK: vLLM and llama.cpp servers, OpenAI itself.

Images go as base64 data URLs in `image_url` parts; reasoning comes back in
`reasoning_content` (vLLM, DeepSeek) or `reasoning`; a JSON schema is sent as
`response_format` when the model declares structured output.
"""

from __future__ import annotations

import os
from typing import Any

import httpx
import openai

from evaluation.backends.base import (
    BackendError,
    ChatRequest,
    Completion,
    error_from_status,
    openai_content,
    parse_retry_after,
    transport_error,
)
from evaluation.models import ModelConfigError, ModelSpec


def api_key_for(spec: ModelSpec, default: str = "EMPTY") -> str:
    if not spec.api_key_env:
        return default
    key = os.environ.get(spec.api_key_env)
    if not key:
        raise ModelConfigError(f"model {spec.name!r}: environment variable {spec.api_key_env} is not set")
    return key


def _usage(usage: Any) -> dict[str, int]:
    if usage is None:
        return {}
    data = {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}
    details = getattr(usage, "completion_tokens_details", None)
    if details is not None and getattr(details, "reasoning_tokens", None):
        data["reasoning_tokens"] = details.reasoning_tokens
    return data


def _reasoning(obj: Any) -> str | None:
    extra = getattr(obj, "model_extra", None) or {}
    return getattr(obj, "reasoning_content", None) or extra.get("reasoning_content") or extra.get("reasoning")


def _translate(error: Exception) -> BackendError:
    if isinstance(error, openai.APIStatusError):
        retry_after = parse_retry_after(error.response.headers.get("retry-after"))
        return error_from_status(error.status_code, f"HTTP {error.status_code}: {error.message}", retry_after)
    return transport_error(error)


class OpenAICompatibleBackend:
    def __init__(self, spec: ModelSpec, concurrency: int = 16):
        if not spec.base_url and not spec.api_key_env:
            raise ModelConfigError(f"model {spec.name!r}: openai-compatible needs base_url (or api_key_env for OpenAI)")
        self.spec = spec
        limits = httpx.Limits(max_connections=concurrency + 4, max_keepalive_connections=concurrency + 4)
        self._http = httpx.AsyncClient(limits=limits, timeout=spec.timeout_s)
        self.client = openai.AsyncOpenAI(base_url=spec.base_url, api_key=api_key_for(spec), max_retries=0,
                                         timeout=spec.timeout_s, http_client=self._http)

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        decoding = self.spec.decoding
        args: dict[str, Any] = {
            "model": self.spec.model,
            "messages": [{"role": m.role, "content": openai_content(m)} for m in request.messages],
        }
        token_param = self.spec.options.get("max_tokens_param", "max_tokens")
        for name, value in (("temperature", decoding.temperature), ("top_p", decoding.top_p),
                            (token_param, decoding.max_tokens), ("seed", decoding.seed), ("stop", decoding.stop)):
            if value is not None:
                args[name] = value
        if request.response_schema is not None and self.spec.capabilities.structured_output:
            args["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "response", "schema": request.response_schema}}
        if self.spec.options.get("extra_body"):
            args["extra_body"] = self.spec.options["extra_body"]
        return args

    async def complete(self, request: ChatRequest) -> Completion:
        args = self._arguments(request)
        try:
            if self.spec.decoding.stream:
                return await self._streamed(args)
            response = await self.client.chat.completions.create(**args)
        except BackendError:
            raise
        except Exception as error:  # every failure of the SDK or the wire becomes one BackendError
            raise _translate(error) from error
        if not response.choices:
            raise BackendError("malformed", "response has no choices")
        choice = response.choices[0]
        message = choice.message
        finish = "refusal" if getattr(message, "refusal", None) else choice.finish_reason
        return Completion(message.content or getattr(message, "refusal", None) or "", _reasoning(message), finish,
                          _usage(response.usage), response.model)

    async def _streamed(self, args: dict[str, Any]) -> Completion:
        stream = await self.client.chat.completions.create(**args, stream=True, stream_options={"include_usage": True})
        text: list[str] = []
        thinking: list[str] = []
        finish: str | None = None
        usage: dict[str, int] = {}
        model: str | None = None
        async for chunk in stream:
            model = chunk.model or model
            if chunk.usage is not None:
                usage = _usage(chunk.usage)
            for choice in chunk.choices:
                text.append(choice.delta.content or "")
                thinking.append(_reasoning(choice.delta) or "")
                finish = choice.finish_reason or finish
        if finish is None:
            raise BackendError("truncated", "the stream ended before the model finished")
        return Completion("".join(text), "".join(thinking) or None, finish, usage, model)

    async def aclose(self) -> None:
        await self.client.close()
