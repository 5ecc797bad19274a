"""What every backend receives and returns, and the errors it may raise.

A request is a list of chat messages whose content is text and image parts; an image
part names the file and its sha256 (from the blob reference), so the cache key never
has to read image bytes and each backend encodes images the way its API expects.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Protocol

from evaluation.models import ModelSpec

# finish reasons that mean the text is not an answer (OpenAI, Gemini and vLLM spellings): defined
# once, in the portable scorer; re-exported for the backends
from scoring.portable.verdict import REFUSED_REASONS as REFUSED_REASONS
from scoring.portable.verdict import TRUNCATED_REASONS as TRUNCATED_REASONS

MIME_BY_EXT = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
               "webp": "image/webp", "bmp": "image/bmp", "svg": "image/svg+xml"}


@dataclass(frozen=True)
class ImagePart:
    path: Path
    sha256: str
    mime: str

    def data(self) -> bytes:
        return self.path.read_bytes()

    def data_url(self) -> str:
        return _data_url(self.path, self.mime)


@lru_cache(maxsize=512)
def _data_url(path: Path, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


Part = str | ImagePart


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    parts: tuple[Part, ...]

    def text(self) -> str:
        return "\n".join(part for part in self.parts if isinstance(part, str))

    def has_images(self) -> bool:
        return any(isinstance(part, ImagePart) for part in self.parts)


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[Message, ...]
    response_schema: dict[str, Any] | None = None  # ask for JSON following this schema
    salt: int = 0  # a resend of an otherwise identical request (judge retries after an invalid verdict)
    choices: tuple[str, ...] = ()  # the option texts, for answerers that look only at the options (baselines)
    question: str = ""  # the stem as shown, for rule answerers that read it (baseline:overlap); "" when hidden

    def has_images(self) -> bool:
        return any(message.has_images() for message in self.messages)

    def key_material(self) -> dict[str, Any]:
        def part(p: Part) -> Any:
            return p if isinstance(p, str) else {"image": p.sha256}

        return {"messages": [[m.role, [part(p) for p in m.parts]] for m in self.messages],
                "schema": self.response_schema, "salt": self.salt}


@dataclass
class Completion:
    text: str
    thinking: str | None = None
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    model_version: str | None = None

    def to_record(self) -> dict[str, Any]:
        return {"text": self.text, "thinking": self.thinking, "finish_reason": self.finish_reason,
                "usage": self.usage, "model_version": self.model_version}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Completion:
        return cls(record.get("text") or "", record.get("thinking"), record.get("finish_reason"),
                   record.get("usage") or {}, record.get("model_version"))


ErrorKind = Literal["rate_limit", "overloaded", "server", "timeout", "connection", "malformed", "client", "truncated"]
RETRYABLE: frozenset[str] = frozenset({"rate_limit", "overloaded", "server", "timeout", "connection", "malformed",
                                       "truncated"})


class BackendError(Exception):
    """A request that failed; `kind` decides whether it is retried and how the runner backs off."""

    def __init__(self, kind: ErrorKind, message: str, *, retry_after: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    @property
    def throttled(self) -> bool:
        return self.kind in ("rate_limit", "overloaded")


def openai_content(message: Message) -> Any:
    """OpenAI chat content: a string, or text and `image_url` parts with base64 data URLs."""
    if not message.has_images():
        return message.text()
    return [{"type": "image_url", "image_url": {"url": part.data_url()}} if isinstance(part, ImagePart)
            else {"type": "text", "text": part} for part in message.parts]


def openai_messages(request: ChatRequest) -> list[dict[str, Any]]:
    """The request's messages in the OpenAI chat format (OpenAI-compatible servers, vLLM's `LLM.chat`)."""
    return [{"role": message.role, "content": openai_content(message)} for message in request.messages]


class Backend(Protocol):
    spec: ModelSpec

    async def complete(self, request: ChatRequest) -> Completion: ...

    async def aclose(self) -> None: ...


def error_from_status(status: int, message: str, retry_after: float | None = None) -> BackendError:
    """One mapping of HTTP status codes to error kinds, shared by the HTTP backends."""
    if status == 429:
        return BackendError("rate_limit", message, retry_after=retry_after)
    if status == 503:
        return BackendError("overloaded", message, retry_after=retry_after)
    if status == 408 or status == 504:
        return BackendError("timeout", message)
    if status >= 500:
        return BackendError("server", message)
    return BackendError("client", message)


_CONNECT = {"ConnectError", "ConnectTimeout", "ClientConnectorError", "ConnectionRefusedError"}
_TIMEOUT = {"TimeoutException", "TimeoutError", "APITimeoutError", "ServerTimeoutError"}
_CUT = {"RemoteProtocolError", "ReadError", "ServerDisconnectedError", "ClientPayloadError", "IncompleteReadError",
        "APIConnectionError"}


def transport_error(error: BaseException) -> BackendError:
    """A client library's transport failure (httpx, httpx2, aiohttp) as a BackendError, judged
    by the class names along the whole cause chain (wrappers relabel: a refused connection
    can arrive as a timeout)."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    names = {cls.__name__ for link in chain for cls in type(link).__mro__}
    if names & _CONNECT:
        return BackendError("connection", f"cannot connect: {chain[-1]}")
    if names & _TIMEOUT:
        return BackendError("timeout", "request timed out")
    if names & _CUT:
        return BackendError("truncated", f"connection closed mid-response: {type(chain[-1]).__name__}")
    return BackendError("malformed", f"malformed response: {type(error).__name__}: {error}")


def parse_retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None
