"""Rule-based taxonomy: part/subject from exam sections, visual type, question format."""

from __future__ import annotations

import re

from curation.core.facets import resolved_part, resolved_subject
from curation.core.item import Item

_KIND_TO_VISUAL = {"formula": "formula", "vector": "diagram", "photo": "photo", "table": "table"}
_CHART_WORDS = re.compile(r"그래프|도표|차트|일기도|단열선도|분포도|변화를 나타낸|추이")
_MAP_WORDS = re.compile(r"지도|일기도|위성 ?영상")
_TABLE_WORDS = re.compile(r"표는|다음 표|<표>|〈표〉")
_MULTI_WORDS = re.compile(r"모두 고르|모두 고른|있는 대로")
_NUMERIC_WORDS = re.compile(r"몇 ?(개|%|도|hPa|m)|얼마|값은|계산")


def visual_type(item: Item) -> str:
    kinds = [image.kind for image in item.images] + [o.image.kind for o in item.options if o.image]
    if not kinds:
        return "formula" if "\\(" in item.stem or "$$" in item.stem else "none"
    for kind in kinds:
        if kind in _KIND_TO_VISUAL:
            return _KIND_TO_VISUAL[kind]
    if _MAP_WORDS.search(item.stem):
        return "map"
    if _TABLE_WORDS.search(item.stem):
        return "table"
    if _CHART_WORDS.search(item.stem):
        return "chart"
    return "diagram" if "vector" in kinds else "photo"


# "옳은 것을 모두 고르시오", "두 개를 고르시오": the answer is a set of options, all of them required
_CHOOSE_SEVERAL = re.compile(r"모두\s*(고르시오|고르세요|골라|선택하시오|선택하세요)|(두|세|2|3)\s*개를?\s*(고르|선택)")


def question_format(item: Item) -> str:
    """`multiple_answers` only when the question asks for several options; a key that lists several
    options for a one-option question (several answers accepted) stays `single_answer`, and
    "…을 모두 고른 것은?" with ㄱ/ㄴ/ㄷ options is one correct option."""
    if not item.options:
        return "numeric" if _NUMERIC_WORDS.search(item.stem) else "open"
    if len(item.answer_list()) > 1 and _CHOOSE_SEVERAL.search(item.stem):
        return "multiple_answers"
    return "single_answer"


def tag_taxonomy(item: Item) -> Item:
    """The taxonomy filled in where it is empty. A question it finds asks for several options
    (`multiple_answers`) has its choice key require all of them, as that format always meant."""
    taxonomy = item.taxonomy.model_copy(update={
        "part": resolved_part(item),
        "subject": resolved_subject(item),
        "visual_type": item.taxonomy.visual_type or visual_type(item),
        "question_format": item.taxonomy.question_format or question_format(item),
    })
    if taxonomy == item.taxonomy:
        return item
    update: dict[str, object] = {"taxonomy": taxonomy}
    key = item.choice_key()
    if key is not None and taxonomy.question_format == "multiple_answers" and not key.require_all:
        update["answer"] = key.model_copy(update={"require_all": True})
    return item.model_copy(update=update)
