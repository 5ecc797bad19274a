"""OpenAI chat completions through the `openai` SDK: vLLM and llama.cpp servers, OpenAI itself.

Images go as base64 data URLs in `image_url` parts; reasoning comes back in
`reasoning_content` (vLLM, DeepSeek) or `reasoning`; a JSON schema is sent as
`response_format` when the model declares structured output.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx
    import openai

from evaluation.backends.base import (
    BackendError,
    ChatRequest,
    Completion,
    error_from_status,
    openai_messages,
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
    if not usage:
        return {}
    if not isinstance(usage, dict):
        usage = usage.model_dump()
    data = {key: int(usage[key]) for key in ("prompt_tokens", "completion_tokens") if usage.get(key) is not None}
    reasoning = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens")
    if reasoning:
        data["reasoning_tokens"] = int(reasoning)
    return data


def _reasoning(message: dict[str, Any]) -> str | None:
    return message.get("reasoning_content") or message.get("reasoning") or None


def completion_from_json(text: str) -> Completion:
    """A chat.completion body as a Completion; anything unexpected is a malformed response."""
    try:
        body = json.loads(text)
        choice = body["choices"][0]
        message = choice.get("message") or {}
        refusal = message.get("refusal")
        return Completion(message.get("content") or refusal or "", _reasoning(message),
                          "refusal" if refusal else choice.get("finish_reason"), _usage(body.get("usage")), body.get("model"))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        raise BackendError("malformed", f"malformed response body: {type(error).__name__}: {str(error)[:120]}") from None


def _translate(error: Exception) -> BackendError:
    import openai

    if isinstance(error, openai.APIStatusError):
        retry_after = parse_retry_after(error.response.headers.get("retry-after"))
        return error_from_status(error.status_code, f"HTTP {error.status_code}: {error.message}", retry_after)
    return transport_error(error)


def _http_client(concurrency: int, timeout_s: float) -> httpx.AsyncClient:
    """The SDK's aiohttp transport when installed (a plain httpx pool costs ~5 ms of CPU per
    request at 64 connections, aiohttp ~1 ms); httpx otherwise."""
    import httpx
    import openai

    limits = httpx.Limits(max_connections=concurrency + 4, max_keepalive_connections=concurrency + 4)
    try:
        import httpx_aiohttp  # noqa: F401  (openai[aiohttp])
    except ImportError:
        return httpx.AsyncClient(limits=limits, timeout=timeout_s)
    # openai>=3 types its clients as httpx2 ones but takes (and converts) httpx ones; openai<3 takes httpx only
    return openai.DefaultAioHttpClient(limits=limits, timeout=timeout_s)  # type: ignore[return-value, arg-type]


class _DirectPost:
    """Plain chat-completion POSTs on one aiohttp session: the wire format is the whole contract,
    and the SDK's request building (httpx models, URL parsing, headers) costs more CPU per request
    than everything else the runner does. Streaming still goes through the SDK."""

    def __init__(self, url: str, api_key: str, concurrency: int, timeout_s: float):
        self.url = url
        self.headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self._session: Any = None

    async def post(self, body: dict[str, Any]) -> str:
        import aiohttp

        if self._session is None:  # created inside the running loop
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=self.concurrency + 4),
                                                  timeout=aiohttp.ClientTimeout(total=self.timeout_s))
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        async with self._session.post(self.url, data=data, headers=self.headers) as response:
            text = await response.text()
            if response.status >= 400:
                raise error_from_status(response.status, f"HTTP {response.status}: {_error_message(text)}",
                                        parse_retry_after(response.headers.get("retry-after")))
            return text

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


def _error_message(text: str) -> str:
    try:
        error = json.loads(text).get("error")
        return str(error.get("message") if isinstance(error, dict) else error)[:300]
    except (ValueError, AttributeError):
        return text[:300]


class OpenAICompatibleBackend:
    def __init__(self, spec: ModelSpec, concurrency: int = 16):
        if not spec.base_url and not spec.api_key_env:
            raise ModelConfigError(f"model {spec.name!r}: openai-compatible needs base_url (or api_key_env for OpenAI)")
        self.spec = spec
        self.concurrency = concurrency
        self.api_key = api_key_for(spec)
        base_url = spec.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        self._direct = _DirectPost(f"{base_url.rstrip('/')}/chat/completions", self.api_key, concurrency,
                                   spec.timeout_s)
        self._client: openai.AsyncOpenAI | None = None

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK client, made on first use (only streamed requests need it; importing it costs ~0.5 s)."""
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(base_url=self.spec.base_url, api_key=self.api_key, max_retries=0,
                                              timeout=self.spec.timeout_s,
                                              http_client=_http_client(self.concurrency, self.spec.timeout_s))  # type: ignore[arg-type]
        return self._client

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        decoding = self.spec.decoding
        args: dict[str, Any] = {
            "model": self.spec.model,
            "messages": openai_messages(request),
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
        extra = args.pop("extra_body", None)
        if extra:
            args.update(extra)  # what the SDK does with extra_body: merged into the request body
        try:
            if self.spec.decoding.stream:
                return await self._streamed(args)
            text = await self._direct.post(args)
        except BackendError:
            raise
        except Exception as error:  # every failure of the SDK or the wire becomes one BackendError
            raise _translate(error) from error
        return completion_from_json(text)

    async def _streamed(self, args: dict[str, Any]) -> Completion:
        from openai import AsyncStream
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        stream = await self.client.post("/chat/completions", body={**args, "stream": True,
                                                                   "stream_options": {"include_usage": True}},
                                        cast_to=ChatCompletion, stream=True, stream_cls=AsyncStream[ChatCompletionChunk])
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
                thinking.append(_reasoning(choice.delta.model_extra or {}) or "")
                finish = choice.finish_reason or finish
        if finish is None:
            raise BackendError("truncated", "the stream ended before the model finished")
        return Completion("".join(text), "".join(thinking) or None, finish, usage, model)

    async def aclose(self) -> None:
        await self._direct.aclose()
        if self._client is not None:
            await self._client.close()
