"""The judge's user message, written and read back: its sections (question, options, key,
reference rationale, the rationale judged) in order.

It imports no backend, so the rule judge among the backends (`baseline:rubric-checks`) reads a
judge request without importing the judge, the request sender or the backends it chooses from.
"""

from __future__ import annotations

from curation.core.item import Item

SECTIONS = ("문제", "선택지", "정답", "참고 해설", "평가 대상 풀이")


def judge_user_text(item: Item, rationale: str) -> str:
    options = "\n".join(f"{n}. {option.text or '(그림)'}" for n, option in enumerate(item.options, start=1))
    gold = item.answer.text() if item.answer is not None else ""  # a choice key: its option numbers, "1, 3"
    reference = item.rationale.text if item.rationale else ""
    bodies = (item.stem, options, gold, reference, rationale)
    return "\n".join(f"[{name}]\n{body}" for name, body in zip(SECTIONS, bodies, strict=True))


def judge_sections(text: str) -> dict[str, str] | None:
    """The sections of a judge's user message (for rule judges that read it), or None for any other text."""
    if not text.startswith(f"[{SECTIONS[0]}]\n"):
        return None
    rest = text[len(SECTIONS[0]) + 3:]
    found: dict[str, str] = {}
    for name, following in zip(SECTIONS, SECTIONS[1:], strict=False):
        found[name], marker, rest = rest.partition(f"\n[{following}]\n")
        if not marker:
            return None
    found[SECTIONS[-1]] = rest
    return found
