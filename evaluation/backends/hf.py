"""transformers in-process (extra `hf`): a chat template and `generate`, one request at a
time; with `capabilities.vision` the model's processor receives PIL images."""

from __future__ import annotations

from typing import Any

from curation.core.errors import require_extra
from evaluation.backends.base import ChatRequest, Completion, ImagePart
from evaluation.backends.local import MicroBatcher, OneByOneBackend
from evaluation.models import ModelSpec


class HFBackend(OneByOneBackend):
    def __init__(self, spec: ModelSpec):
        self.spec = spec
        self.torch = require_extra("torch", "hf")
        transformers = require_extra("transformers", "hf")
        load = {"revision": spec.revision, "trust_remote_code": bool(spec.options.get("trust_remote_code", False))}
        if spec.capabilities.vision:
            self.processor = transformers.AutoProcessor.from_pretrained(spec.model, **load)
            model_class = transformers.AutoModelForImageTextToText
        else:
            self.processor = transformers.AutoTokenizer.from_pretrained(spec.model, **load)
            model_class = transformers.AutoModelForCausalLM
        self.model = model_class.from_pretrained(spec.model, torch_dtype=spec.options.get("dtype", "auto"),
                                                 device_map=spec.options.get("device_map", "auto"), **load)
        self.batcher = MicroBatcher(self._generate, max_batch=1)

    def _messages(self, request: ChatRequest) -> list[dict[str, Any]]:
        if not self.spec.capabilities.vision:
            return [{"role": m.role, "content": m.text()} for m in request.messages]
        from PIL import Image

        return [{"role": m.role, "content": [{"type": "image", "image": Image.open(p.path).convert("RGB")}
                                             if isinstance(p, ImagePart) else {"type": "text", "text": p}
                                             for p in m.parts]} for m in request.messages]

    def _one(self, request: ChatRequest) -> Completion:
        decoding = self.spec.decoding
        if decoding.seed is not None:
            self.torch.manual_seed(decoding.seed)
        inputs = self.processor.apply_chat_template(self._messages(request), add_generation_prompt=True, tokenize=True,
                                                    return_dict=True, return_tensors="pt").to(self.model.device)
        sample = bool(decoding.temperature)
        generated = self.model.generate(**inputs, max_new_tokens=decoding.max_tokens or 1024, do_sample=sample,
                                        temperature=decoding.temperature if sample else None,
                                        top_p=decoding.top_p if sample else None)
        prompt_length = inputs["input_ids"].shape[1]
        new_tokens = generated[0][prompt_length:]
        decode = getattr(self.processor, "decode", None) or self.processor.tokenizer.decode
        finish = "length" if len(new_tokens) >= (decoding.max_tokens or 1024) else "stop"
        return Completion(decode(new_tokens, skip_special_tokens=True), None, finish,
                          {"prompt_tokens": int(prompt_length), "completion_tokens": len(new_tokens)}, self.spec.model)

    async def aclose(self) -> None:
        return None
