"""Small builders for test data (the project's own, never copied from real exams)."""

from __future__ import annotations

from typing import Any


def make_record(item_id: str, *, answer: Any = 1, exam: str = "기상기사", stem: str | None = None,
                n_options: int = 4, **source: Any) -> dict[str, Any]:
    return {
        "id": item_id,
        "source": {"exam": exam, **source},
        "stem": stem or f"{item_id}: 대기 중 수증기량이 증가할 때 나타나는 현상으로 옳은 것은?",
        "options": [{"text": f"보기 {n}"} for n in range(1, n_options + 1)],
        "answer": answer,
    }
