"""The item: one exam question with its provenance, as every stage reads and writes it.

The answer is a typed key (`scoring.keys`): a choice key holds 1-based option numbers everywhere
inside benchsmith (a release format that wants 0-based indices or letters converts at its own
boundary); numeric, text, set, expression, judged and multi-part keys hold what their checker
needs. Schema 1 stored the answer as option numbers; `upgrade_record` reads it as a choice key.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    computed_field,
    field_validator,
    model_validator,
)

from scoring.keys import AnswerKey, ChoiceKey, key_from_legacy
from scoring.portable.formats.choice import accepts as choice_accepts

SCHEMA_VERSION: Final = 2

ITEM_ID_PATTERN = r"^[A-Za-z0-9가-힣][A-Za-z0-9가-힣._:\-]{0,199}$"
BLOB_REF_PATTERN = r"^[0-9a-f]{64}\.[a-z0-9]{1,5}$"

# in workflow order; rejected items and the copies dedup excluded are out of play
InPlayStatus = Literal["extracted", "in_review", "accepted"]
Status = Literal[InPlayStatus, Literal["rejected", "excluded"]]
STATUSES: tuple[str, ...] = get_args(Status)
RationaleStatus = Literal["draft", "adopted", "minor_fix", "major_fix"]


def _ordered_box(box: list[float]) -> list[float]:
    if box[2] < box[0] or box[3] < box[1]:
        raise ValueError("bbox must be [x0, y0, x1, y1] with x1 >= x0 and y1 >= y0")
    return box


BBox = Annotated[
    list[float],
    Field(min_length=4, max_length=4, description="x0, y0, x1, y1 in PDF points"),
    AfterValidator(_ordered_box),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class PdfLocation(_Strict):
    """Where something sits in a source PDF."""

    pdf_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    page: int | None = Field(None, ge=1, description="1-based page number")
    bbox: BBox | None = None


ImageKind = Literal["raster", "vector", "formula", "photo", "table", "other"]


class ImageRef(_Strict):
    """A content-addressed image in the workspace blob store, with where it came from."""

    blob: str = Field(pattern=BLOB_REF_PATTERN, description="sha256 of the bytes + extension")
    kind: ImageKind = "raster"
    provenance: PdfLocation | None = None
    latex: str | None = Field(None, description="transcription for formula images; empty = still to do")
    alt: str | None = None


class Source(_Strict):
    exam: str = Field(min_length=1, description="exam name, e.g. 기상기사")
    session: str | None = Field(None, description="session date or number, e.g. 2021-05-15 or 2021-2")
    subject: str | None = None
    part: str | None = None
    number: int | None = Field(None, ge=1, description="question number on the paper")
    pdf_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    page: int | None = Field(None, ge=1)
    bbox: BBox | None = None
    origin: str | None = Field(None, description="file or dataset the item was imported from")
    license: str | None = Field(None, description="licence of the source dataset when its importer knows it "
                                "(a Hub licence id, e.g. cc-by-nd-4.0); else the release config says")


class Option(_Strict):
    text: str = ""
    image: ImageRef | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> Option:
        if not self.text.strip() and self.image is None:
            raise ValueError("an option needs text or an image")
        return self


class Rationale(_Strict):
    text: str = ""
    status: RationaleStatus = "draft"
    notes: str | None = None
    author: str | None = None
    edit_distance: int | None = Field(None, ge=0, description="characters changed from the draft by review")


class Paraphrase(_Strict):
    text: str = Field(min_length=1)
    original: str = Field(description="the stem before paraphrasing")
    model: str | None = None
    status: Literal["proposed", "accepted", "rejected"] = "proposed"


class Flags(_Strict):
    korea_specific: bool | None = Field(None, description="None = not yet decided")
    korea_reasons: list[str] = Field(default_factory=list)
    review_reasons: list[str] = Field(default_factory=list, description="why a person must look at it")


class Taxonomy(_Strict):
    part: str | None = None
    subject: str | None = None
    visual_type: Literal["chart", "diagram", "photo", "table", "formula", "map", "none"] | None = None
    question_format: Literal["single_answer", "multiple_answers", "numeric", "open"] | None = None


def upgrade_record(data: dict[str, Any]) -> dict[str, Any]:
    """A stored or imported item dict in the current schema: schema 1's answer (option numbers,
    all required when `taxonomy.question_format` said multiple_answers) becomes a choice key."""
    answer = data.get("answer")
    if answer == []:  # schema 1 allowed an empty list for "no key"
        data = {**data, "answer": None}
    elif isinstance(answer, (int, list)) and not isinstance(answer, bool):
        taxonomy = data.get("taxonomy")
        question_format = taxonomy.get("question_format") if isinstance(taxonomy, dict) else getattr(
            taxonomy, "question_format", None)
        data = {**data, "answer": key_from_legacy(answer, question_format == "multiple_answers")}
    if data.get("schema_version") == 1:
        data = {**data, "schema_version": SCHEMA_VERSION}
    return data


def choice_answer(numbers: int | list[int], record: dict[str, Any]) -> dict[str, Any]:
    """Option numbers as the choice key to store in `record` (an item dict): all of them required
    as its current choice key requires, or (no choice key yet) as its question format says."""
    current = record.get("answer")
    if isinstance(current, dict) and current.get("format") == "choice":
        require_all = bool(current.get("require_all"))
    else:
        taxonomy = record.get("taxonomy") or {}
        require_all = taxonomy.get("question_format") == "multiple_answers"
    options = [numbers] if isinstance(numbers, int) else list(numbers)
    return {"format": "choice", "options": options, "require_all": require_all}


class AnswerRule:
    """Choice-key helpers for anything with an `answer` key: `Item` and `AnswerView`. Scoring a
    response is `scoring.score_key`; these serve the option-only baselines and the option editors."""

    if TYPE_CHECKING:
        answer: AnswerKey | None

    @property
    def answer_format(self) -> str | None:
        return self.answer.format if self.answer is not None else None

    def choice_key(self) -> ChoiceKey | None:
        return self.answer if isinstance(self.answer, ChoiceKey) else None

    def answer_list(self) -> list[int]:
        """The option numbers of a choice key; [] for other formats or no key."""
        key = self.choice_key()
        return list(key.options) if key is not None else []

    def gold(self) -> Any:
        """The key as a record's `gold` holds it: a choice key's option number (a list of them when
        it lists several), as records made before typed keys held it; another key's JSON dict."""
        if self.answer is None:
            return None
        key = self.choice_key()
        if key is None:
            return self.answer.model_dump(mode="json")
        return key.options[0] if len(key.options) == 1 else list(key.options)

    def requires_all_answers(self) -> bool:
        key = self.choice_key()
        return bool(key and key.require_all)

    def accepts(self, chosen: int | list[int] | set[int] | None) -> bool:
        """Whether a choice of option number(s) is correct under the choice key (False otherwise)."""
        key = self.choice_key()
        return key is not None and choice_accepts(key.model_dump(), chosen)


def _legacy_answer(value: Any, info: ValidationInfo) -> Any:
    """On assignment (`item.answer = 3`): option numbers become a choice key."""
    taxonomy = info.data.get("taxonomy") if info.data else None
    return key_from_legacy(value, getattr(taxonomy, "question_format", None) == "multiple_answers")


class Item(_Strict, AnswerRule):
    schema_version: Literal[2] = SCHEMA_VERSION
    id: str = Field(pattern=ITEM_ID_PATTERN)
    source: Source
    stem: str = Field(description="question text; LaTeX as \\( \\) inline and $$ $$ display")
    options: list[Option] = Field(default_factory=list)
    answer: AnswerKey | None = Field(None, description="the typed answer key (scoring.keys); None = key unknown")
    points: float | None = Field(None, gt=0, description="배점: the points the paper gives the question")
    images: list[ImageRef] = Field(default_factory=list, description="images of the question itself")
    flags: Flags = Field(default_factory=Flags)
    explicit_variant: str | None = Field(None, description="stem with implicit Korean context made explicit")
    paraphrase: Paraphrase | None = None
    rationale: Rationale | None = None
    taxonomy: Taxonomy = Field(default_factory=Taxonomy)
    original_option_order: list[int] | None = Field(
        None, description="after a shuffle: original 1-based position of each current option"
    )
    status: Status = "extracted"
    extra: dict[str, Any] = Field(default_factory=dict, description="anything a source carried that has no field")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def multimodal(self) -> bool:
        return bool(self.images) or any(option.image is not None for option in self.options)

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        return upgrade_record(data) if isinstance(data, dict) else data

    @field_validator("answer", mode="before")
    @classmethod
    def _answer_from_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        return _legacy_answer(value, info)

    @field_validator("stem")
    @classmethod
    def _stem_has_text(cls, stem: str) -> str:
        if not stem.strip():
            raise ValueError("the stem is empty")
        return stem

    @model_validator(mode="after")
    def _answer_points_at_an_option(self) -> Item:
        answers = self.answer_list()
        if answers and not self.options:
            raise ValueError("answer is set but the item has no options")
        for number in answers:
            if not 1 <= number <= len(self.options):
                raise ValueError(f"answer {number} is not an option number 1..{len(self.options)}")
        if self.original_option_order is not None and sorted(self.original_option_order) != list(
            range(1, len(self.options) + 1)
        ):
            raise ValueError("original_option_order must be a permutation of 1..number of options")
        return self

    def blob_refs(self) -> list[str]:
        refs = [image.blob for image in self.images]
        refs += [option.image.blob for option in self.options if option.image is not None]
        return refs

    def to_record(self) -> dict[str, Any]:
        """Plain JSON-ready dict (the stored and exported form)."""
        return self.model_dump(mode="json", exclude={"multimodal"})


class FormatView(BaseModel):
    question_format: str | None = None


class OptionView(BaseModel):
    text: str = ""
    image: dict[str, Any] | None = None


class AnswerView(BaseModel, AnswerRule):
    """What an option-only baseline reads of a stored item — its options, key and format, and
    whether it has images — parsed 2–3× faster than the whole `Item` (whose validation the
    stored snapshot already passed). Scored by the same `AnswerRule`."""

    model_config = ConfigDict(extra="ignore")
    id: str
    options: list[OptionView] = Field(default_factory=list)
    answer: AnswerKey | None = None
    images: list[dict[str, Any]] = Field(default_factory=list)
    taxonomy: FormatView = Field(default_factory=FormatView)

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        return upgrade_record(data) if isinstance(data, dict) else data

    @property
    def multimodal(self) -> bool:
        return bool(self.images) or any(option.image is not None for option in self.options)


class ReviewReasonsView(BaseModel):
    model_config = ConfigDict(extra="ignore")
    review_reasons: list[str] = Field(default_factory=list)


class KeyFactsView(AnswerView):
    """`AnswerView` and the review reasons: what the solve-matrix readers need of every item
    (key, option count, dedup's answer conflicts), without validating the whole `Item`."""

    flags: ReviewReasonsView = Field(default_factory=ReviewReasonsView)


Answerable = Item | AnswerView  # what a runner can score: the whole item or its answer view


class ItemValidationError(ValueError):
    """Invalid item data, with each problem as 'field.path: reason'."""

    def __init__(self, problems: list[str], item_id: str | None = None):
        self.problems = problems
        self.item_id = item_id
        where = f"item {item_id!r}: " if item_id else ""
        super().__init__(where + "; ".join(problems))


def describe_validation_error(error: ValidationError) -> list[str]:
    problems = []
    for detail in error.errors():
        # list positions are shown 1-based, like option numbers
        path = ".".join(str(part + 1) if isinstance(part, int) else str(part) for part in detail["loc"]) or "(item)"
        message = re.sub(r"^Value error, ", "", detail["msg"])
        problems.append(f"{path}: {message}")
    return problems


def parse_item(data: dict[str, Any]) -> Item:
    """Validate a dict into an Item (schema 1 upgraded); refuse with field paths and reasons."""
    data = {key: value for key, value in data.items() if key != "multimodal"}
    try:
        return Item.model_validate(data)
    except ValidationError as error:
        item_id = data.get("id") if isinstance(data.get("id"), str) else None
        raise ItemValidationError(describe_validation_error(error), item_id) from None


def item_json_schema() -> dict[str, Any]:
    schema = Item.model_json_schema(mode="serialization")
    schema["$id"] = f"https://benchsmith.invalid/schema/item-v{SCHEMA_VERSION}.json"
    return schema
