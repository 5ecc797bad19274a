"""A release's records: its rows (`ReleaseRow`, the parquet a release build writes) and its
`release.json` (`ReleaseManifest`). The release build (export) writes them; `evaluate --release`
and `run --from` read them, below export, so they live here."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from curation.core.errors import WorkspaceError
from curation.core.facets import release_facets
from curation.core.item import Item, parse_item
from evaluation.decoding import RELEASE_DECODING, DecodingContract
from evaluation.records import LenientRecord


class ReleaseImage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    bytes: bytes
    path: str


class ReleaseOption(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    image: ReleaseImage | None = None


class ReleaseContent(BaseModel):
    """A release row's question, options and key; `ReleaseRow` adds the release's facet columns.
    `key` is the typed key as JSON text (any format; `answer_format` names it, `answer_text` is
    its plain text); a choice key's option numbers are also `answer` (1-based, None for a
    multi-answer item) and `answers` (all of them). A release built before the key columns has
    only the option numbers: its choice key is read from them (and `question_format`)."""

    model_config = ConfigDict(extra="ignore")
    id: str
    question: str
    question_original: str | None = None
    question_images: list[ReleaseImage] = Field(default_factory=list)
    options: list[ReleaseOption]
    answer: int | None = None
    answer_letter: str | None = None
    answers: list[int] = Field(default_factory=list)
    answer_format: str | None = None
    key: str | None = None
    answer_text: str | None = None
    points: float | None = None
    rationale: str | None = None
    rationale_status: str | None = None
    original_option_order: list[int] | None = None

    def answer_key(self) -> Any:
        """The typed key's dict (validated as the item is made), or the option numbers of a release
        built before the key column."""
        if self.key:
            try:
                return json.loads(self.key)
            except json.JSONDecodeError as error:
                raise ValueError(f"{self.id}: the key column is not JSON ({error.msg})") from None
        answers = self.answers or ([self.answer] if self.answer else [])
        return answers[0] if len(answers) == 1 else (answers or None)

    def to_item(self, put_image: Any) -> Item:
        """The item a model is asked: the released question and options; `put_image(bytes, ext) → blob`."""
        def image(value: ReleaseImage | None) -> dict[str, str] | None:
            if value is None or not value.bytes:
                return None
            return {"blob": put_image(value.bytes, value.path.rsplit(".", 1)[-1].lower() if "." in value.path else "png")}

        facet = {f.name: getattr(self, f.name) for f in release_facets()}
        return parse_item({
            "id": self.id,
            "source": {"exam": facet["exam"] or "release", "session": facet["session"], "subject": facet["subject"],
                       "part": facet["part"], "number": facet["number"]},
            "stem": self.question,
            "options": [{"text": option.text, "image": image(option.image)} for option in self.options],
            "answer": self.answer_key(),
            "points": self.points,
            "images": [ref for ref in (image(value) for value in self.question_images) if ref],
            "flags": {"korea_specific": facet["korea_specific"]},
            "taxonomy": {"part": facet["part"], "subject": facet["subject"], "visual_type": facet["visual_type"],
                         "question_format": facet["question_format"]},
            "rationale": {"text": self.rationale, "status": self.rationale_status or "adopted"} if self.rationale else None,
            "status": "accepted",
        })


# One row of a release config: its content and the release facets of the catalogue (each may be absent
# in a row: a reader takes what a release carries).
ReleaseRow = create_model("ReleaseRow", __base__=ReleaseContent, __module__=__name__,
                          **{f.name: (f.type | None, None) for f in release_facets()})  # type: ignore[call-overload]


def release_rows(rows: Iterable[Mapping[str, Any]]) -> list[ReleaseContent]:
    return [ReleaseRow.model_validate(row) for row in rows]


RELEASE_MANIFEST = "release.json"


class ReleaseConfigFiles(LenientRecord):
    rows: int
    files: list[str]  # parquet shards, relative to the release folder
    bytes: int
    content_hash: str


class StoreSnapshot(LenientRecord):
    items: int
    revisions: int
    last_revision_at: str | None = None


class ReleaseBuilder(LenientRecord):
    benchsmith: str
    pyarrow: str
    datasets: str
    writer: dict[str, Any]
    shard_rows: int
    row_group_rows: int


class TinySubset(LenientRecord):
    subset_file: str
    subset_sha256: str
    estimation: str
    covered_items: int


class ReleaseManifest(LenientRecord):
    """A release's `release.json`: its configs and files, content hashes, what it was built from
    and with. Written with sorted keys and only the keys it was built with (`tiny` only when set)."""

    name: str
    version: str
    previous: str | None = None
    configs: dict[str, ReleaseConfigFiles]
    content_hash: str
    row_hashes: dict[str, str]  # item id → row hash (the changelog compares them)
    store: StoreSnapshot
    builder: ReleaseBuilder
    config: dict[str, Any] | None = None  # the release config it was built with (`export.release_config`)
    tiny: TinySubset | None = None
    decoding: DecodingContract | None = None  # what it is meant to be run with; absent in releases built before

    def run_decoding(self) -> DecodingContract:
        return self.decoding or RELEASE_DECODING

    def json_text(self) -> str:
        return json.dumps(self.model_dump(mode="json", exclude_unset=True), ensure_ascii=False, indent=2,
                          sort_keys=True) + "\n"

    @classmethod
    def read(cls, path: Path) -> ReleaseManifest:
        try:
            return cls.model_validate_json(path.read_bytes())
        except OSError as error:
            raise WorkspaceError(f"{path}: cannot read release manifest: {error}") from None
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise WorkspaceError(f"{path}: malformed release manifest: {where}: {first['msg']}") from None
