"""What a vision model is asked about one region of an exam page, and what it must answer.

The answer is JSON validated by `Transcription` (pydantic): the questions seen in the picture,
each with its stem (formulas as LaTeX), its options in order (text, or the box of a picture)
and the boxes of its figures, boxes in pixels of the picture sent. The prompt is versioned:
its version is part of every request's cache key, so editing it means bumping the version.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from curation.core.item import describe_validation_error

PROMPT_VERSION = "vlm-transcribe-v1"
SYSTEM = ("당신은 한국 국가 시험지의 문항을 그대로 옮겨 적는 전사자입니다. 문제를 풀지 말고, 보이는 글자와 수식만 "
          "정확히 옮기세요.")
INSTRUCTION = """그림은 시험지의 한 영역입니다. 그 안에 보이는 객관식 문항을 모두 JSON으로 옮기세요.
규칙:
- number: 문항 번호(정수). 영역 위쪽에 앞 문항의 뒷부분만 보여 번호가 없으면 null.
- stem: 발문 전체(지문, 〈보기〉, ㄱ/ㄴ/ㄷ 항목 포함). 줄이 바뀌는 항목은 줄바꿈으로 나누고, 문항 번호는 빼세요.
- 수식은 LaTeX로: 문장 속 수식은 \\( … \\), 따로 선 수식은 $$ … $$. 단위와 첨자도 수식 안에 쓰세요.
- 표는 Markdown 표로 stem에 쓰세요.
- options: 선택지를 순서대로. 번호 표시(①, 1), 가.)는 빼고 text에 내용만. 선택지가 그림이면 text는 ""로 두고 figure에 그 상자.
- figures: 발문에 딸린 그림·그래프의 상자 목록.
- box와 상자는 모두 이 그림의 픽셀 좌표 [x0, y0, x1, y1] (왼쪽 위가 0, 0).
- 문항이 없으면 {"questions": []}.
JSON 하나로만 답하세요: {"questions": [{"number": 1, "stem": "...", "options": [{"text": "...", "figure": null}], "figures": [], "box": [x0, y0, x1, y1]}]}"""

Box = list[float]


class TranscriptionError(ValueError):
    """An answer that is not a valid transcription (no JSON, or JSON that breaks the schema)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _checked_box(box: Box | None) -> Box | None:
    if box is None:
        return None
    if len(box) != 4 or box[2] <= box[0] or box[3] <= box[1] or min(box) < 0:
        raise ValueError(f"a box is [x0, y0, x1, y1] with x0 < x1 and y0 < y1, not {box}")
    return box


class TranscribedOption(_Strict):
    text: str = ""
    figure: Box | None = Field(None, description="box of the option's picture, in pixels")

    @field_validator("figure")
    @classmethod
    def _figure_box(cls, box: Box | None) -> Box | None:
        return _checked_box(box)

    @model_validator(mode="after")
    def _text_or_figure(self) -> TranscribedOption:
        if not self.text.strip() and self.figure is None:
            raise ValueError("an option needs its text or the box of its picture")
        return self


class TranscribedQuestion(_Strict):
    """A question, or part of one: a region may end inside a question (fewer options) or start
    with the end of one (no number)."""

    number: int | None = Field(None, ge=1, le=999, description="null: the end of a question begun before this region")
    stem: str = ""
    options: list[TranscribedOption] = Field(default_factory=list, max_length=10)
    figures: list[Box] = Field(default_factory=list)
    box: Box | None = Field(None, description="where the question sits in the picture, in pixels")

    @field_validator("box")
    @classmethod
    def _question_box(cls, box: Box | None) -> Box | None:
        return _checked_box(box)

    @field_validator("figures")
    @classmethod
    def _figure_boxes(cls, boxes: list[Box]) -> list[Box]:
        for box in boxes:
            _checked_box(box)
        return boxes

    @model_validator(mode="after")
    def _something_read(self) -> TranscribedQuestion:
        if not self.stem.strip() and not self.options:
            raise ValueError("a question needs its stem or its options")
        return self

    def complete(self, short_answer: bool = False) -> bool:
        """A whole question: a stem and at least two options (a short-answer question: its stem)."""
        return bool(self.stem.strip()) and (len(self.options) >= 2 or (short_answer and not self.options))


class Transcription(_Strict):
    questions: list[TranscribedQuestion]


def response_schema() -> dict[str, Any]:
    """`Transcription` as one JSON Schema without `$ref`s (not every backend resolves them)."""
    schema = Transcription.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(definitions[node["$ref"].rsplit("/", 1)[1]])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(value) for value in node]
        return node

    return inline(schema)


def user_text(where: str, width: int, height: int, number: int | None) -> str:
    """The request text: where the picture comes from, its size, and the number the layout expects."""
    expected = f", {number}번 문항" if number is not None else ""
    return f"[영역] {where}{expected}, 그림 {width}×{height} 픽셀\n\n{INSTRUCTION}"


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")
_THINK = re.compile(r"<think>.*?</think>", re.S)


def parse_transcription(text: str) -> Transcription:
    """The model's answer as a Transcription; TranscriptionError says what is wrong with it."""
    body = _FENCE.sub("", _THINK.sub("", text).strip()).strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0:
        raise TranscriptionError(f"no JSON object in the answer: {text.strip()[:80]!r}")
    if end < start:
        raise TranscriptionError("broken JSON (the object is never closed)")
    try:
        data = json.loads(body[start:end + 1])
    except json.JSONDecodeError as error:
        raise TranscriptionError(f"broken JSON ({error.msg} at character {error.pos})") from None
    try:
        return Transcription.model_validate(data)
    except ValidationError as error:
        raise TranscriptionError("answer breaks the schema: " + "; ".join(describe_validation_error(error)[:3])) from None


_DOLLAR_INLINE = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$(?!\$)", re.S)
_BRACKET_DISPLAY = re.compile(r"\\\[(.+?)\\\]", re.S)


def house_delimiters(text: str) -> str:
    """Formulas in the project's delimiters: `$x$` → `\\(x\\)` and `\\[x\\]` → `$$x$$` (models use both)."""
    text = _BRACKET_DISPLAY.sub(lambda m: f"$${m.group(1).strip()}$$", text)
    return _DOLLAR_INLINE.sub(lambda m: f"\\({m.group(1).strip()}\\)", text)
