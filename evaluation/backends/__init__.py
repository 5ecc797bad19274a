"""One module per backend; heavy dependencies are imported only when that backend is used."""

from __future__ import annotations

from evaluation.backends.base import Backend
from evaluation.models import ModelSpec


def make_backend(spec: ModelSpec, concurrency: int = 16) -> Backend:
    if spec.backend == "baseline":
        from evaluation.backends.baseline import baseline_backend

        return baseline_backend(spec)
    if spec.backend == "openai-compatible":
        from evaluation.backends.openai_compatible import OpenAICompatibleBackend

        return OpenAICompatibleBackend(spec, concurrency)
    if spec.backend == "gemini":
        from evaluation.backends.gemini import GeminiBackend

        return GeminiBackend(spec)
    if spec.backend == "llamacpp":
        from evaluation.backends.llamacpp import LlamaCppBackend

        return LlamaCppBackend(spec)
    if spec.backend == "vllm":
        from evaluation.backends.vllm_offline import VLLMBackend

        return VLLMBackend(spec)
    from evaluation.backends.hf import HFBackend

    return HFBackend(spec)
