"""The release columns, declared once without importing `datasets`.

`datasets` takes a second to import, and a release build needs only three renderings of its
Features: the Arrow schema of the parquet shards, the dict stored in their metadata, and the
card's YAML list. They are derived here from a plain declaration; `hf_features` builds the real
`datasets.Features` from the same declaration, and a test checks that the three renderings equal
what `datasets` itself gives (so they follow it, and a release no longer depends on which
`datasets` happens to be installed when it is built).

A column is a dtype name (`string`, `int32`, `bool`), `IMAGE`, a one-element list (a list of
that type) or a dict (a record).

Every answer format has the same four key columns (`KEY_COLUMNS`): `answer_format` (choice,
numeric, text, set, expression, judged, parts), `key` (the typed key, `scoring.keys`, as JSON
text: exactly the dict the portable checkers take), `answer_text` (the key as plain text) and
`points` (배점). The key is JSON text rather than a record column because a record would be the
union of every format's fields (mostly empty in any row) and still could not hold a multi-part
key (a list of keys of any format): a string column loads the same in `datasets` 2.19 to 5,
mlcroissant, pandas and a TSV, and `json.loads` gives the checker's dict back. A choice key
keeps its option-number columns as before (`answer`, `answer_letter`, `answers`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from curation.core.facets import release_facets

IMAGE = "image"

Column = str | list[Any] | dict[str, Any]

# The item's facet columns come from the catalogue (curation/core/facets.py); the question, options, key
# and rationale are the release's own.
RELEASE_COLUMNS: dict[str, Column] = {
    "id": "string",
    **{facet.name: facet.release_dtype for facet in release_facets()},
    "question": "string",
    "question_original": "string",
    "question_images": [IMAGE],
    "options": [{"text": "string", "image": IMAGE}],
    "answer": "int32",
    "answer_letter": "string",
    "answers": ["int32"],
    "answer_format": "string",
    "key": "string",
    "answer_text": "string",
    "points": "float64",
    "rationale": "string",
    "rationale_status": "string",
    "original_option_order": ["int32"],
}


KEY_COLUMNS = ("answer_format", "key", "answer_text", "points")


def _feature_dict(column: Column) -> dict[str, Any]:
    """One column as `datasets.Features.to_dict()` writes it (`datasets` ≥ 4 spelling)."""
    if column == IMAGE:
        return {"_type": "Image"}
    if isinstance(column, list):
        return {"feature": _feature_dict(column[0]), "_type": "List"}
    if isinstance(column, dict):
        return {name: _feature_dict(sub) for name, sub in column.items()}
    return {"dtype": column, "_type": "Value"}


def _yaml_body(column: Column) -> dict[str, Any]:
    """One column as `datasets.Features._to_yaml_list()` writes it, without its name."""
    if isinstance(column, list):
        inner = _yaml_body(column[0])
        if list(inner) == ["dtype"]:
            return {"list": inner["dtype"]}
        return {"list": inner.get("struct", inner)}
    if isinstance(column, dict):
        return {"struct": [{"name": name, **_yaml_body(sub)} for name, sub in column.items()]}
    return {"dtype": column}


def _arrow_type(column: Column):  # noqa: ANN202 - pyarrow is imported lazily
    import pyarrow as pa

    if column == IMAGE:
        return pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    if isinstance(column, list):
        return pa.list_(_arrow_type(column[0]))
    if isinstance(column, dict):
        return pa.struct([(name, _arrow_type(sub)) for name, sub in column.items()])
    return pa.type_for_alias(column)


class ReleaseFeatures:
    """The renderings of a column declaration that a release needs (duck-types the parts of
    `datasets.Features` that export uses)."""

    def __init__(self, columns: dict[str, Column]):
        self.columns = columns

    def to_dict(self) -> dict[str, Any]:
        return {name: _feature_dict(column) for name, column in self.columns.items()}

    def _to_yaml_list(self) -> list[dict[str, Any]]:
        return [{"name": name, **_yaml_body(column)} for name, column in self.columns.items()]

    @property
    def arrow_schema(self):  # noqa: ANN201
        import json

        import pyarrow as pa

        schema = pa.schema([(name, _arrow_type(column)) for name, column in self.columns.items()])
        return schema.with_metadata({"huggingface": json.dumps({"info": {"features": self.to_dict()}})})


@cache
def release_features() -> ReleaseFeatures:
    return ReleaseFeatures(RELEASE_COLUMNS)


def hf_features(columns: dict[str, Column] = RELEASE_COLUMNS):  # noqa: ANN201 - datasets is imported lazily
    """The same declaration as real `datasets.Features`."""
    from datasets import Features, Image, List, Value

    def feature(column: Column) -> Any:
        if column == IMAGE:
            return Image()
        if isinstance(column, list):
            return List(feature(column[0]))
        if isinstance(column, dict):
            return {name: feature(sub) for name, sub in column.items()}
        return Value(column)

    return Features({name: feature(column) for name, column in columns.items()})
