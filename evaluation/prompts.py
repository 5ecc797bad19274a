"""Korean prompts, versioned: the version is part of every cache key, so editing a prompt
means bumping its version (and a per-model override changes the version by itself)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Literal, get_args

from curation.core.blobs import BlobStore
from curation.core.item import ImageRef, Item
from evaluation.backends.base import MIME_BY_EXT, ChatRequest, ImagePart, Message, Part
from evaluation.models import ModelConfigError, ModelSpec
from scoring.portable import get_format

Variant = Literal["implicit", "explicit", "options_only", "question_only"]
VARIANTS: tuple[Variant, ...] = get_args(Variant)
# Shortcut probes: what a model can answer with the question or the options hidden.
_NO_QUESTION = "(문제는 가려져 있습니다. 선택지만 보고 정답으로 가장 그럴듯한 번호를 고르세요.)"
_HIDDEN_OPTION = "(가려짐)"

_ROLE = "당신은 한국의 국가 시험 문제를 푸는 전문가입니다. 객관식 문제를 읽고 정답 번호를 고르세요."
_KOREA = ("문제에서 '우리나라'는 대한민국을 뜻합니다. 지명, 기후, 법령, 제도, 역사는 "
          "대한민국을 기준으로 판단하세요.")
_MULTI = '정답이 둘 이상이면 {"정답": [1, 3]}처럼 목록으로 쓰세요.'
_JSON_ONLY = f'다른 설명 없이 JSON 한 줄로만 답하세요: {{"정답": 번호}}. {_MULTI}'
_REASONING = ("먼저 풀이 과정을 자유롭게 생각하며 적으세요. 그다음 마지막에 JSON으로 답하세요: "
              f'{{"생성된_추론_근거": "정답에 이르는 근거를 한국어로 간결하게", "정답": 번호}}. {_MULTI}')


# Open answers (numeric, text, set, expression, judged, multi-part): the final answer in \boxed{},
# as KMMMU asks; each format adds its own hint (scoring.portable: `instruction`).
_OPEN_ROLE = "당신은 한국의 국가 시험 문제를 푸는 전문가입니다. 문제를 읽고 답을 구하세요."
_OPEN_SHORT = "다른 설명 없이 마지막 줄에 최종 답만 \\boxed{답} 형식으로 쓰세요."
_OPEN_REASONING = "먼저 풀이 과정을 자유롭게 적으세요. 그다음 마지막 줄에 최종 답을 \\boxed{답} 형식으로 쓰세요."


@dataclass(frozen=True)
class Prompt:
    """A prompt for choice items (system, instruction) and for open-answer items (open_system,
    open_instruction + the format's hint). `version` names the choice prompt, as before open
    answers; `open_version` the open one: the request (and so the cache key) carries both texts."""

    name: str
    version: str
    system: str
    instruction: str
    open_system: str = _OPEN_ROLE
    open_instruction: str = _OPEN_SHORT
    open_version: str = "open-v1"


PROMPTS: dict[str, Prompt] = {
    "standard": Prompt("standard", "standard-v1", _ROLE, _JSON_ONLY),
    "advanced": Prompt("advanced", "advanced-v1", f"{_ROLE}\n{_KOREA}", _JSON_ONLY, f"{_OPEN_ROLE}\n{_KOREA}"),
    "reasoning": Prompt("reasoning", "reasoning-v1", f"{_ROLE}\n{_KOREA}", _REASONING, f"{_OPEN_ROLE}\n{_KOREA}",
                        _OPEN_REASONING),
}


def get_prompt(name: str, model: ModelSpec | None = None) -> Prompt:
    """The named prompt with the model's override applied; the override changes the version."""
    if name not in PROMPTS:
        raise ModelConfigError(f"unknown prompt {name!r} (choose one of {', '.join(PROMPTS)})")
    prompt = PROMPTS[name]
    override = model.prompts.get(name) if model else None
    if override is None:
        return prompt
    digest = hashlib.sha256(json.dumps(override.model_dump(), sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return Prompt(name, f"{prompt.version}+{digest[:10]}", override.system or prompt.system,
                  override.instruction or prompt.instruction, prompt.open_system, prompt.open_instruction,
                  f"{prompt.open_version}+{digest[:10]}")


class ImageResolver:
    """Blob reference → ImagePart (path, sha256 from the reference, MIME from the extension)."""

    def __init__(self, blobs: BlobStore):
        self.blobs = blobs
        self._parts: dict[str, ImagePart] = {}

    def __call__(self, ref: ImageRef) -> ImagePart:
        part = self._parts.get(ref.blob)
        if part is None:
            sha, _, ext = ref.blob.partition(".")
            part = ImagePart(self.blobs.path(ref.blob), sha, MIME_BY_EXT.get(ext, "application/octet-stream"))
            self._parts[ref.blob] = part
        return part


def stem_for(item: Item, variant: Variant) -> str:
    if variant == "explicit" and item.explicit_variant:
        return item.explicit_variant
    if variant == "options_only":
        return _NO_QUESTION
    return item.stem


def open_instruction(item: Item, prompt: Prompt) -> str:
    """The prompt's open-answer instruction and the format's own hint (how to write this answer)."""
    key = item.answer
    hint = get_format(key.format).instruction(key.model_dump(mode="json")) if key is not None else ""
    return f"{prompt.open_instruction}\n{hint}" if hint else prompt.open_instruction


def build_request(item: Item, prompt: Prompt, images: ImageResolver, variant: Variant = "implicit") -> ChatRequest:
    hide_options = variant == "question_only"
    is_choice = item.answer is None or item.answer.format == "choice"
    parts: list[Part] = [f"[문제]\n{stem_for(item, variant)}"]
    if variant != "options_only":
        parts += [images(image) for image in item.images]
    if item.options or is_choice:
        parts.append("[선택지]")
    for number, option in enumerate(item.options, start=1):
        label = _HIDDEN_OPTION if hide_options else option.text.strip() or "(그림)"
        parts.append(f"{number}. {label}")
        if option.image is not None and not hide_options:
            parts.append(images(option.image))
    parts.append(prompt.instruction if is_choice else open_instruction(item, prompt))
    merged = _merge_text(parts)
    choices = tuple("" if hide_options else option.text for option in item.options)
    question = "" if variant == "options_only" else stem_for(item, variant)
    system = prompt.system if is_choice else prompt.open_system
    return ChatRequest((Message("system", (system,)), Message("user", tuple(merged))), choices=choices,
                       question=question)


def _merge_text(parts: list[Part]) -> list[Part]:
    """Adjacent text parts joined by newlines: one text block between images."""
    merged: list[Part] = []
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] = f"{merged[-1]}\n{part}"
        else:
            merged.append(part)
    return merged
