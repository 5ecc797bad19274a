"""Numbered images for harnesses that send every image before the text (lm-eval's API models,
VLMEvalKit): the text first says how many images came before it, and each place an image stood
reads `[그림 k]` (an option's image `[그림 k = 보기 ③]`), so a model told "1. (그림) 2. (그림)"
can still tell which picture is which option. benchsmith and inspect_ai send each image where it
stands and need none of this.

Copied verbatim into each release's harness folder as `benchsmith_images.py`: standard library only.
"""

from __future__ import annotations

from typing import Any

CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳"


def images_first_note(count: int) -> str:
    if count == 1:
        return "※ 이 글 앞에 그림 1장(그림 1)이 붙어 있습니다. 본문의 [그림 1] 표시는 그 그림이 원래 놓인 자리입니다."
    return (f"※ 이 글 앞에 그림 {count}장이 순서대로(그림 1~{count}) 붙어 있습니다. "
            "본문의 [그림 k] 표시는 그림 k가 원래 놓인 자리입니다.")


def image_mark(number: int, option: int | None = None) -> str:
    """`[그림 number]`; for the image of option `option` (0-based), `[그림 number = 보기 ③]`."""
    if option is None:
        return f"[그림 {number}]"
    label = CIRCLED[option] if option < len(CIRCLED) else str(option + 1)
    return f"[그림 {number} = 보기 {label}]"


def numbered_text(content: list[dict[str, Any]]) -> str:
    """A prompt record's user content (`{"text": …}` and `{"image": ["question" | "option", i]}` parts in
    order) as one text: the note first, each image replaced by its mark. Without images: the text parts."""
    lines: list[str] = []
    count = 0
    for part in content:
        if "text" in part:
            lines.append(part["text"])
            continue
        count += 1
        kind, index = part["image"]
        lines.append(image_mark(count, index if kind == "option" else None))
    return "\n".join([images_first_note(count), *lines] if count else lines)
