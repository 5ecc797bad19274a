"""A small model server for tests and benchmarks, on 127.0.0.1 only.

It speaks the OpenAI chat-completions wire format (`POST /v1/chat/completions`, plain or
streamed as server-sent events) and the Gemini REST format
(`POST /v1beta/models/MODEL:generateContent`), with configurable latency and injected
faults: 429, 503, 500, hangs (client timeouts), malformed bodies and truncated bodies or
streams. It answers deterministically from the request content (an option picked by a
seeded hash of the prompt) and never knows any gold answer. With a JSON schema in the
request it answers with an object that follows the schema.

    python -m tests.fault_server --port 8000 --latency 0.1 --rate-500 0.2
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

FAULTS = ("429", "503", "500", "timeout", "malformed", "truncated")


@dataclass(frozen=True)
class Scripted:
    """A responder's reply that is not plain text: an injected fault (one of FAULTS) or a refusal."""

    fault: str | None = None
    refusal: str | None = None


Reply = str | Scripted


@dataclass
class ServerConfig:
    latency: float = 0.0
    seed: int = 0
    answer_style: str = "mixed"  # json | mixed | think
    fault_rates: dict[str, float] = field(default_factory=dict)  # FAULTS → probability per request
    hang_s: float = 30.0  # how long a "timeout" fault holds the connection
    keep_requests: int = 2000  # request bodies kept for inspection by tests
    # tests that need one fixed reply per question (prompt text, request body → reply), both wire formats
    responder: Callable[[str, dict[str, Any]], Reply] | None = None


@dataclass
class ServerStats:
    requests: int = 0
    by_result: Counter = field(default_factory=Counter)
    answered: Counter = field(default_factory=Counter)  # request key → successful answers
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self, with_keys: bool = False) -> dict[str, Any]:
        data = {"requests": self.requests, "by_result": dict(self.by_result), "unique_answered": len(self.answered),
                "duplicate_answers": sum(count - 1 for count in self.answered.values() if count > 1)}
        if with_keys:
            data["answered"] = dict(self.answered)
        return data


def _hash(*parts: Any) -> int:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def request_key(body: dict[str, Any]) -> str:
    """What identifies a request for duplicate counting: the body without transport flags."""
    material = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    return hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:24]


def _option_count(text: str) -> int:
    numbers = [int(n) for n in re.findall(r"(?m)^\s*(\d{1,2})[.)]\s", text)]
    return max(numbers) if numbers else 4


def _from_schema(schema: dict[str, Any], seed: int) -> Any:
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {name: _from_schema(sub, _hash(seed, name)) for name, sub in schema.get("properties", {}).items()}
    if kind == "integer":
        low, high = int(schema.get("minimum", 0)), int(schema.get("maximum", 10))
        return low + seed % (high - low + 1)
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "array":
        return []
    if kind == "boolean":
        return bool(seed % 2)
    return "근거가 충분함"


def compose_rewrite(prompt_text: str, h: int) -> str:
    """For rewrite requests (paraphrase, explicit variants): the question reworded, and for one
    seed in three a dropped number, the mistake a term-preservation check must catch."""
    question = prompt_text.split("[문제]\n", 1)[-1].strip()
    reworded = question.replace("것은?", "것을 고르시오.").replace("우리나라", "한국")
    if h % 3 == 0:
        reworded = re.sub(r"\d+(?:\.\d+)?", "", reworded, count=1)
    return reworded


def compose_answer(prompt_text: str, seed: int, style: str) -> str:
    """A deterministic reply in one of the answer forms real models use."""
    h = _hash(seed, prompt_text)
    if "바꿔 쓰세요" in prompt_text:
        return compose_rewrite(prompt_text, h)
    option = h % _option_count(prompt_text) + 1
    circled = "①②③④⑤⑥⑦⑧⑨⑩"[option - 1] if option <= 10 else str(option)
    if "생성된_추론_근거" in prompt_text:
        reply = json.dumps({"생성된_추론_근거": f"선택지 {option}의 조건이 문제의 설명과 일치한다.", "정답": option},
                           ensure_ascii=False)
        return f"풀이: 각 선택지를 차례로 검토한다.\n{reply}"
    forms = [
        json.dumps({"정답": option}, ensure_ascii=False),
        f"```json\n{{\"정답\": {option}}}\n```",
        f"정답: {circled}",
        f"각 선택지를 검토하면 {option}번이 조건에 맞습니다. 따라서 정답은 {option}번입니다.",
        f"<think>선택지를 하나씩 본다. {option}번이 맞다.</think>\n{{\"정답\": {option}}}",
        "문제의 조건만으로는 판단하기 어렵습니다.",
    ]
    if style == "json":
        return forms[0]
    if style == "think":
        return forms[4]
    return forms[h // 7 % len(forms)]


def _truncate_tokens(text: str, max_tokens: int | None) -> tuple[str, str]:
    words = text.split(" ")
    if max_tokens is not None and len(words) > max_tokens:
        return " ".join(words[:max_tokens]), "length"
    return text, "stop"


class FakeModelServer:
    def __init__(self, config: ServerConfig | None = None):
        self.config = config or ServerConfig()
        self.stats = ServerStats()
        self._server: asyncio.base_events.Server | None = None
        self._seen: Counter = Counter()
        self._connections: set[asyncio.Task] = set()

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        self._server = await asyncio.start_server(self._connection, host, port, backlog=1024)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://{host}:{port}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            await self._server.wait_closed()

    # -- HTTP plumbing -------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = (lines[0].split(" ", 2) + ["", ""])[:3]
                headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
                length = int(headers.get("content-length", "0") or 0)
                body = await reader.readexactly(length) if length else b""
                keep = await self._dispatch(method, target, body, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return
        finally:
            self._connections.discard(task)  # type: ignore[arg-type]
            writer.close()

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, status: int, payload: bytes,
                    content_type: str = "application/json", extra: str = "", declared: int | None = None) -> None:
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error",
                  503: "Service Unavailable"}.get(status, "Error")
        length = len(payload) if declared is None else declared
        writer.write(f"HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {length}\r\n"
                     f"{extra}\r\n".encode() + payload)
        await writer.drain()

    async def _dispatch(self, method: str, target: str, body: bytes, writer: asyncio.StreamWriter) -> bool:
        path = urlsplit(target).path
        if method == "GET" and path == "/_stats":
            await self._send(writer, 200, json.dumps(self.stats.to_dict("keys" in target)).encode())
            return True
        if method == "GET" and path.rstrip("/").endswith("/models"):
            await self._send(writer, 200, json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode())
            return True
        gemini = re.match(r"^/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):generateContent$", path)
        if method != "POST" or not (path.endswith("/chat/completions") or gemini):
            await self._send(writer, 404, b'{"error": {"message": "not found"}}')
            return True
        try:
            request = json.loads(body or b"{}")
        except json.JSONDecodeError:
            await self._send(writer, 400, b'{"error": {"message": "body is not JSON"}}')
            return True
        self.stats.requests += 1
        if len(self.stats.bodies) < self.config.keep_requests:
            self.stats.bodies.append({"path": path, "body": request})
        key = request_key(request)
        fault = self._fault(key)
        scripted = self.config.responder(_prompt_text(request, gemini is not None), request) \
            if self.config.responder and not fault else None
        if isinstance(scripted, Scripted) and scripted.fault:
            fault = scripted.fault
        if self.config.latency:
            await asyncio.sleep(self.config.latency)
        if fault:
            self.stats.by_result[fault] += 1
            return await self._fail(fault, writer, gemini is not None, bool(request.get("stream")))
        if isinstance(scripted, Scripted):
            self.stats.by_result["refusal"] += 1
            await self._refuse(scripted.refusal or "", writer, gemini is not None)
        elif gemini:
            await self._gemini(request, gemini["model"], key, writer, scripted)
        else:
            await self._openai(request, key, writer, scripted)
        return True

    async def _refuse(self, said: str, writer: asyncio.StreamWriter, gemini: bool) -> None:
        """A refusal as each API sends it: OpenAI's `refusal` message field, Gemini's SAFETY finish."""
        if gemini:
            payload: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": []}, "index": 0,
                                                       "finishReason": "SAFETY"}], "modelVersion": "fake"}
        else:
            payload = {"id": "chatcmpl-refused", "object": "chat.completion", "created": int(time.time()), "model": "fake",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": None, "refusal": said}}]}
        await self._send(writer, 200, json.dumps(payload, ensure_ascii=False).encode())

    def _fault(self, key: str) -> str | None:
        self._seen[key] += 1
        draw = _hash(self.config.seed, key, self._seen[key]) / 2**64
        for name in FAULTS:
            rate = self.config.fault_rates.get(name, 0.0)
            if draw < rate:
                return name
            draw -= rate
        return None

    async def _fail(self, fault: str, writer: asyncio.StreamWriter, gemini: bool, stream: bool) -> bool:
        if fault in ("429", "503", "500"):
            status = int(fault)
            status_name = {429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE", 500: "INTERNAL"}[status]
            error = {"code": status, "message": f"injected {status}", "status": status_name} if gemini else \
                {"message": f"injected {status}", "type": "server_error", "code": status}
            extra = "retry-after: 0.05\r\n" if status == 429 else ""
            await self._send(writer, status, json.dumps({"error": error}).encode(), extra=extra)
            return True
        if fault == "timeout":
            await asyncio.sleep(self.config.hang_s)
            return False
        if fault == "malformed":
            await self._send(writer, 200, b'{"id": "chatcmpl-x", "choices": [{"message": {"content": "')
            return True
        if stream:  # a stream cut off before its finish_reason and [DONE]
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            event = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                     "choices": [{"index": 0, "delta": {"content": "정답은 "}, "finish_reason": None}]}
            data = f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode()
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()
            return False
        # truncated: declare more than is sent, then close the connection
        await self._send(writer, 200, b'{"id": "chatcmpl-x", "choices": [', declared=400)
        return False

    # -- answers -------------------------------------------------------------------------------
    def _reply(self, prompt_text: str, schema: dict[str, Any] | None, seed: Any) -> str:
        if schema is not None:
            return json.dumps(_from_schema(schema, _hash(self.config.seed, seed, prompt_text)), ensure_ascii=False)
        return compose_answer(prompt_text, _hash(self.config.seed, seed), self.config.answer_style)

    async def _openai(self, request: dict[str, Any], key: str, writer: asyncio.StreamWriter, scripted: str | None) -> None:
        prompt_text = _prompt_text(request, gemini=False)
        response_format = request.get("response_format") or {}
        schema = (response_format.get("json_schema") or {}).get("schema") if response_format.get("type") == "json_schema" else None
        reply = scripted if scripted is not None else self._reply(prompt_text, schema, request.get("seed"))
        text, finish = _truncate_tokens(reply,
                                        request.get("max_tokens") or request.get("max_completion_tokens"))
        usage = {"prompt_tokens": len(prompt_text.split()), "completion_tokens": len(text.split()),
                 "total_tokens": len(prompt_text.split()) + len(text.split())}
        model = request.get("model", "fake")
        self.stats.answered[key] += 1
        self.stats.by_result["ok"] += 1
        if request.get("stream"):
            await self._stream(writer, model, text, finish, usage)
            return
        payload = {"id": f"chatcmpl-{key[:12]}", "object": "chat.completion", "created": int(time.time()), "model": model,
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
                   "usage": usage}
        await self._send(writer, 200, json.dumps(payload, ensure_ascii=False).encode())

    async def _stream(self, writer: asyncio.StreamWriter, model: str, text: str, finish: str,
                      usage: dict[str, int]) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        pieces = [text[i : i + 8] for i in range(0, len(text), 8)] or [""]
        events = [{"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]} for piece in pieces]
        events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        events.append({"choices": [], "usage": usage})
        for event in events:
            event.update(id="chatcmpl-s", object="chat.completion.chunk", created=int(time.time()), model=model)
            data = f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode()
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        done = b"data: [DONE]\n\n"
        writer.write(f"{len(done):x}\r\n".encode() + done + b"\r\n0\r\n\r\n")
        await writer.drain()

    async def _gemini(self, request: dict[str, Any], model: str, key: str, writer: asyncio.StreamWriter,
                      scripted: str | None) -> None:
        prompt_text = _prompt_text(request, gemini=True)
        config = request.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        reply = scripted if scripted is not None else self._reply(prompt_text, _lower_types(schema) if schema else None,
                                                                  config.get("seed"))
        text, finish = _truncate_tokens(reply, config.get("maxOutputTokens"))
        parts: list[dict[str, Any]] = []
        thinking = config.get("thinkingConfig") or {}
        if thinking.get("includeThoughts") or thinking.get("include_thoughts"):  # the SDK sends either spelling
            level = thinking.get("thinkingLevel") or thinking.get("thinking_level") or "default"
            parts.append({"text": f"생각 ({level}): 선택지를 검토한다.", "thought": True})
        parts.append({"text": text})
        payload = {"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0,
                                   "finishReason": "MAX_TOKENS" if finish == "length" else "STOP"}],
                   "usageMetadata": {"promptTokenCount": len(prompt_text.split()), "candidatesTokenCount": len(text.split()),
                                     "totalTokenCount": len(prompt_text.split()) + len(text.split())},
                   "modelVersion": model}
        self.stats.answered[key] += 1
        self.stats.by_result["ok"] += 1
        await self._send(writer, 200, json.dumps(payload, ensure_ascii=False).encode())


def _prompt_text(request: dict[str, Any], gemini: bool) -> str:
    """Every text part of a request (system first), without its images."""
    if not gemini:
        return "\n".join(_openai_text(message.get("content")) for message in request.get("messages", []))
    texts = [part.get("text", "") for content in request.get("contents", []) for part in content.get("parts", [])]
    system = request.get("systemInstruction") or request.get("system_instruction") or {}
    return "\n".join([*(p.get("text", "") for p in system.get("parts", [])), *texts])


def request_images(request: dict[str, Any]) -> list[bytes]:
    """The pictures a request carries, decoded: OpenAI `image_url` data URLs or Gemini `inline_data`."""
    import base64

    encoded = [part["image_url"]["url"].split(",", 1)[1] for message in request.get("messages", [])
               if isinstance(message.get("content"), list) for part in message["content"] if part.get("type") == "image_url"]
    for content in request.get("contents", []):
        for part in content.get("parts", []):
            inline = part.get("inlineData") or part.get("inline_data")
            if inline:
                encoded.append(inline["data"])
    # google-genai sends URL-safe base64 without padding
    return [base64.b64decode(data + "=" * (-len(data) % 4), altchars=b"-_") for data in encoded]


def _openai_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if part.get("type") == "text")


def _lower_types(schema: Any) -> Any:
    """Gemini's OpenAPI schema spells types in capitals (INTEGER); read it like JSON Schema."""
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]
    return schema


class ServerThread:
    """The server on its own event loop in a daemon thread: `with ServerThread(cfg) as url: ...`."""

    def __init__(self, config: ServerConfig | None = None, port: int = 0):
        self.server = FakeModelServer(config)
        self.port = port
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> ServerThread:
        self._thread.start()
        self.url = asyncio.run_coroutine_threadsafe(self.server.start(port=self.port), self._loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    @property
    def stats(self) -> ServerStats:
        return self.server.stats


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--style", default="mixed", choices=("json", "mixed", "think"))
    parser.add_argument("--hang", type=float, default=30.0)
    for fault in FAULTS:
        parser.add_argument(f"--rate-{fault}", type=float, default=0.0, help=f"probability of a {fault} fault")
    args = parser.parse_args(argv)
    rates = {fault: getattr(args, f"rate_{fault}") for fault in FAULTS}
    config = ServerConfig(latency=args.latency, seed=args.seed, answer_style=args.style, fault_rates=rates,
                          hang_s=args.hang, keep_requests=0)

    async def serve() -> None:
        server = FakeModelServer(config)
        url = await server.start(port=args.port)
        print(f"listening on {url}/v1", flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
