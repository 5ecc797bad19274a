"""The item-query syntax of `--items` and `--where`: `FIELD=VALUE` pairs joined by commas."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from curation.core.errors import BenchsmithError
from curation.core.facets import IN_PLAY, facet
from curation.core.store import ItemQuery


def in_play(query: ItemQuery | None) -> ItemQuery:
    """The query as runs and filters read it: without a status, only the items still in play."""
    query = query or ItemQuery()
    return query if query.status is not None else replace(query, status=list(IN_PLAY))


def parse_item_query(text: str | None, option: str = "--items") -> ItemQuery:
    """`exam=KMMLU,subject=형법,part=1과목,status=accepted,korea_specific=true,multimodal=false,ids=a|b`: the
    queryable facets of curation/core/facets.py, and `ids`."""
    if not text:
        return ItemQuery()
    fields: dict[str, Any] = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or name not in ItemQuery.__dataclass_fields__:
            raise BenchsmithError(f"{option} {part!r}: expected FIELD=VALUE with FIELD in "
                                  f"{', '.join(ItemQuery.__dataclass_fields__)}")
        kind = None if name == "ids" else facet(name)
        if kind is None or kind.query == "any_of":
            fields[name] = [v for v in value.split("|") if v]
        elif kind.type is bool:
            if value.lower() not in ("true", "false"):
                raise BenchsmithError(f"{option} {part!r}: {name} is true or false")
            fields[name] = value.lower() == "true"
        else:
            fields[name] = value
    return ItemQuery(**fields)
