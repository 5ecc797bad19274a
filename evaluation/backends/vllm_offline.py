"""vLLM offline (`LLM.chat`, extra `vllm`): batched in-process generation, images as
OpenAI-style `image_url` parts, tensor parallelism from `options.tensor_parallel_size`."""

from __future__ import annotations

from typing import Any

from curation.core.errors import require_extra
from evaluation.backends.base import ChatRequest, Completion, openai_messages
from evaluation.backends.local import MicroBatcher, require_text_only, sampling
from evaluation.models import ModelSpec

_LLM_OPTIONS = ("tensor_parallel_size", "max_model_len", "gpu_memory_utilization", "dtype", "quantization",
                "limit_mm_per_prompt", "trust_remote_code", "enforce_eager")


class VLLMBackend:
    def __init__(self, spec: ModelSpec):
        vllm = require_extra("vllm", "vllm")
        self.spec = spec
        self._vllm = vllm
        kwargs: dict[str, Any] = {key: spec.options[key] for key in _LLM_OPTIONS if key in spec.options}
        self.llm = vllm.LLM(model=spec.model, revision=spec.revision, seed=spec.decoding.seed or 0, **kwargs)
        self.batcher = MicroBatcher(self._generate, max_batch=int(spec.options.get("max_batch", 256)), gather_s=0.05)

    def _generate(self, requests: list[ChatRequest]) -> list[Completion]:
        params = self._vllm.SamplingParams(**sampling(self.spec))
        conversations = [openai_messages(request) for request in requests]
        outputs = self.llm.chat(conversations, params, use_tqdm=False,
                                chat_template_kwargs=self.spec.options.get("chat_template_kwargs"))
        completions = []
        for output in outputs:
            best = output.outputs[0]
            completions.append(Completion(best.text, None, best.finish_reason,
                                          {"prompt_tokens": len(output.prompt_token_ids or []),
                                           "completion_tokens": len(best.token_ids)}, self.spec.model))
        return completions

    async def complete(self, request: ChatRequest) -> Completion:
        require_text_only(self.spec, request)
        return await self.batcher.submit(request)

    async def aclose(self) -> None:
        return None
