"""A scripted vision model for the transcription engine's tests: it answers each region from the
sample exam's ground truth (never from the picture), with the truth's boxes turned into pixels of
the picture it was sent, and plays scripted faults for chosen questions."""

from __future__ import annotations

import json
import re
import struct
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from curation.imaging import CROP_ZOOM
from tests.fault_server import Reply, Scripted, request_images

REGION = re.compile(r"\[영역\] (\d+)쪽 .*?\(x ([\d.]+)–([\d.]+), y ([\d.]+)–([\d.]+) pt\)(?:, (\d+)번 문항)?")
# what a scripted fault answers (by name), the rest are Scripted replies of the fault server
BROKEN_JSON = '{"questions": [{"number": 1, "stem": "잘린 답'
SCHEMA_INVALID = '{"questions": [{"number": "셋", "stem": "발문", "options": "①②③④"}]}'


def read_truth(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def png_size(png: bytes) -> tuple[int, int]:
    width, height = struct.unpack(">II", png[16:24])
    return width, height


class TruthTranscriber:
    """`faults[number]` lists what the requests for that question's region get first, in order
    ("broken" / "schema" / a Scripted); once they are used up the region gets its true transcription."""

    def __init__(self, truth: list[dict[str, Any]], faults: dict[int, list[str | Scripted]] | None = None,
                 stem_of: Callable[[dict[str, Any]], str] | None = None):
        self.truth = truth
        self.faults = {number: list(script) for number, script in (faults or {}).items()}
        self.stem_of = stem_of or (lambda record: record["stem"])
        self.asked: Counter[str] = Counter()  # region text → requests seen
        self.images: list[bytes] = []

    def __call__(self, prompt_text: str, body: dict[str, Any]) -> Reply:
        match = REGION.search(prompt_text)
        assert match, f"no region line in the prompt: {prompt_text[:200]}"
        page, x0, x1, y0, y1 = int(match[1]), *map(float, match.group(2, 3, 4, 5))
        self.asked[match[0]] += 1
        images = request_images(body)
        assert len(images) == 1 and images[0].startswith(b"\x89PNG"), "one PNG picture per request"
        self.images.append(images[0])
        records = [r for r in self.truth if r["source"]["page"] == page and _inside(r["source"]["bbox"], (x0, y0, x1, y1))]
        for record in records:
            script = self.faults.get(record["source"]["number"])
            if script:
                return _fault(script.pop(0))
        return json.dumps({"questions": [self._question(r, x0, y0) for r in records]}, ensure_ascii=False)

    def _question(self, record: dict[str, Any], x0: float, y0: float) -> dict[str, Any]:
        def pixels(box: list[float]) -> list[float]:
            return [round((box[0] - x0) * CROP_ZOOM, 1), round((box[1] - y0) * CROP_ZOOM, 1),
                    round((box[2] - x0) * CROP_ZOOM, 1), round((box[3] - y0) * CROP_ZOOM, 1)]

        options = [{"text": option.get("text", ""),
                    "figure": pixels(option["image"]["provenance"]["bbox"]) if option.get("image") else None}
                   for option in record["options"]]
        return {"number": record["source"]["number"], "stem": self.stem_of(record), "options": options,
                "figures": [pixels(image["provenance"]["bbox"]) for image in record.get("images", [])],
                "box": pixels(record["source"]["bbox"])}


def _inside(box: list[float], region: tuple[float, float, float, float]) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return region[0] <= cx <= region[2] and region[1] <= cy <= region[3]


def _fault(step: str | Scripted) -> Reply:
    if step == "broken":
        return BROKEN_JSON
    if step == "schema":
        return SCHEMA_INVALID
    assert isinstance(step, Scripted)
    return step
