"""Items written for the evaluation tests (the project's own text, never copied from exams)."""

from __future__ import annotations

import io
from typing import Any

from PIL import Image

from curation.core.item import parse_item
from curation.core.workspace import Workspace


def png_bytes(color: tuple[int, int, int], size: int = 12) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (size, size), color).save(buffer, format="PNG")
    return buffer.getvalue()


def text_record(number: int, *, answer: int = 2, korea: bool | None = None, part: str = "1",
                rationale: str | None = None) -> dict[str, Any]:
    return {
        "id": f"eval-text-{number:03d}",
        "source": {"exam": "기상기사", "subject": "기상학", "number": number},
        "stem": f"문항 {number}: 우리나라 겨울철 북서 계절풍이 강해지는 원인으로 옳은 것은?",
        "options": [{"text": "시베리아 고기압의 발달"}, {"text": "북태평양 고기압의 확장과 장마 전선의 북상"},
                    {"text": "적도 저압대의 이동"}, {"text": "편서풍 파동의 약화"}],
        "answer": answer,
        "flags": {"korea_specific": korea},
        "taxonomy": {"part": part, "subject": "기상학"},
        "rationale": {"text": rationale, "status": "adopted"} if rationale else None,
    }


def image_record(workspace: Workspace, number: int, *, option_images: bool = False) -> dict[str, Any]:
    question_image = {"blob": workspace.blobs.put(png_bytes((number * 40 % 255, 10, 200)), "png")}
    options: list[dict[str, Any]] = [{"text": f"그림의 {label} 지점"} for label in ("가", "나", "다", "라")]
    if option_images:
        options[3] = {"text": "", "image": {"blob": workspace.blobs.put(png_bytes((0, 200, number % 255)), "png")}}
    return {
        "id": f"eval-image-{number:03d}",
        "source": {"exam": "기상기사", "subject": "일기도", "number": number},
        "stem": f"문항 {number}: 그림의 일기도에서 기압이 가장 낮은 곳은?",
        "options": options,
        "answer": 1,
        "images": [question_image],
        "taxonomy": {"part": "2", "subject": "일기도"},
    }


def seed_items(workspace: Workspace, n_text: int = 8, n_image: int = 3, *, rationale: bool = False) -> list[str]:
    records = [text_record(i, answer=i % 4 + 1, korea=i % 3 == 0, part=str(i % 2 + 1),
                           rationale="시베리아 고기압이 발달하면 기압 경도가 커져 북서풍이 강해진다." if rationale else None)
               for i in range(1, n_text + 1)]
    records += [image_record(workspace, i, option_images=i % 2 == 0) for i in range(1, n_image + 1)]
    items = [parse_item(record) for record in records]
    workspace.store.save_items(items, author="test", stage="test")
    return [item.id for item in items]
