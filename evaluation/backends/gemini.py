"""Gemini through `google-genai` (extra `gemini`): images as inline_data parts, the system
prompt as system_instruction, thinking level/budget with thoughts returned apart from the
answer, a JSON schema as response_json_schema. `base_url` points the client elsewhere
(a proxy or the project's local test server)."""

from __future__ import annotations

import os
from typing import Any

from curation.core.errors import require_extra
from evaluation.backends.base import ChatRequest, Completion, ImagePart, error_from_status, transport_error
from evaluation.backends.openai_compatible import api_key_for
from evaluation.models import ModelSpec

_FINISH = {"STOP": "stop", "MAX_TOKENS": "length"}


class GeminiBackend:
    def __init__(self, spec: ModelSpec):
        genai = require_extra("google.genai", "gemini")
        self.types = require_extra("google.genai.types", "gemini")
        self.errors = require_extra("google.genai.errors", "gemini")
        self.spec = spec
        default_key = os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY") or "EMPTY"
        options = self.types.HttpOptions(base_url=spec.base_url, timeout=int(spec.timeout_s * 1000))
        self.client = genai.Client(api_key=api_key_for(spec, default_key), http_options=options)

    def _config(self, request: ChatRequest) -> Any:
        t, decoding, spec = self.types, self.spec.decoding, self.spec
        system = "\n".join(m.text() for m in request.messages if m.role == "system") or None
        config: dict[str, Any] = {"system_instruction": system, "temperature": decoding.temperature,
                                  "top_p": decoding.top_p, "max_output_tokens": decoding.max_tokens,
                                  "seed": decoding.seed, "stop_sequences": decoding.stop}
        if spec.capabilities.thinking:
            config["thinking_config"] = t.ThinkingConfig(include_thoughts=True, thinking_budget=decoding.thinking_budget,
                                                         thinking_level=decoding.thinking_level.upper()
                                                         if decoding.thinking_level else None)
        if request.response_schema is not None and spec.capabilities.structured_output:
            config.update(response_mime_type="application/json", response_json_schema=request.response_schema)
        return t.GenerateContentConfig(**{k: v for k, v in config.items() if v is not None})

    def _contents(self, request: ChatRequest) -> list[Any]:
        t = self.types
        contents = []
        for message in request.messages:
            if message.role == "system":
                continue
            parts = [t.Part.from_bytes(data=p.data(), mime_type=p.mime) if isinstance(p, ImagePart)
                     else t.Part.from_text(text=p) for p in message.parts]
            contents.append(t.Content(role="model" if message.role == "assistant" else "user", parts=parts))
        return contents

    async def complete(self, request: ChatRequest) -> Completion:
        try:
            response = await self.client.aio.models.generate_content(
                model=self.spec.model, contents=self._contents(request), config=self._config(request))
        except self.errors.APIError as error:
            raise error_from_status(int(error.code or 500), f"HTTP {error.code}: {error.message}") from error
        except Exception as error:  # transport failures of whichever HTTP library google-genai uses
            raise transport_error(error) from error
        if not response.candidates:
            blocked = getattr(response.prompt_feedback, "block_reason", None)
            return Completion("", None, "SAFETY" if blocked else "empty")
        candidate = response.candidates[0]
        parts = (candidate.content.parts if candidate.content else None) or []
        text = "".join(p.text or "" for p in parts if not p.thought)
        thinking = "".join(p.text or "" for p in parts if p.thought) or None
        reason = getattr(candidate.finish_reason, "value", candidate.finish_reason)
        usage = response.usage_metadata
        tokens = {} if usage is None else {k: v for k, v in (("prompt_tokens", usage.prompt_token_count),
                                                             ("completion_tokens", usage.candidates_token_count),
                                                             ("reasoning_tokens", usage.thoughts_token_count)) if v}
        return Completion(text, thinking, _FINISH.get(str(reason), str(reason) if reason else None), tokens,
                          response.model_version)

    async def aclose(self) -> None:
        close = getattr(self.client.aio, "aclose", None)
        if close is not None:
            await close()
