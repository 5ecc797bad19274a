"""Answer keys, one typed model per format, discriminated by `format`.

`key.model_dump()` is the plain dict the portable checkers take (`scoring.portable`), so the
stored form, the release's `key` column and what a harness scores with are one JSON shape.
What each format's checker accepts is written in its module (`scoring/portable/formats/`) and
summed up in `scoring/README.md`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

from scoring.portable import answer_text, guess_key


class _Key(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def text(self) -> str:
        """The key as plain text (the portable format's `answer_text`: one definition)."""
        return answer_text(self.as_dict())


class ChoiceKey(_Key):
    """Option numbers, 1-based. Several listed: any one is correct, unless `require_all`."""

    format: Literal["choice"] = "choice"
    options: list[int] = Field(min_length=1, description="1-based option numbers")
    require_all: bool = Field(False, description="the response must list exactly these options")

    @field_validator("options")
    @classmethod
    def _distinct(cls, options: list[int]) -> list[int]:
        if len(set(options)) != len(options):
            raise ValueError("answer lists an option twice")
        if any(number < 1 for number in options):
            raise ValueError("option numbers start at 1")
        return options



class NumericKey(_Key):
    """A number (as written: `7`, `0.5`, `1/2`, `\\frac{4}{\\sqrt{7}}`), an absolute and/or relative
    tolerance, and the unit the paper states (a response's unit is compared when it gives one).
    Without a tolerance the key's written precision decides (`0.012` accepts `0.0120`, not
    `0.013`; `50.0` accepts `50`; integers and fractions are exact)."""

    format: Literal["numeric"] = "numeric"
    value: str = Field(min_length=1)
    tolerance: float | None = Field(None, ge=0, description="absolute tolerance")
    relative_tolerance: float | None = Field(None, ge=0, description="e.g. 0.01 for 1%")
    unit: str | None = None



class TextKey(_Key):
    """Accepted answers (any one matches after normalisation). A response that matches none is
    `wrong` only when `strict`; otherwise `undecided` (a judge or a person decides)."""

    format: Literal["text"] = "text"
    accepted: list[str] = Field(min_length=1)
    normalise: Literal["default", "exact"] = Field(
        "default", description="default: NFKC, case, spaces and punctuation folded; exact: NFC only")
    strict: bool = False



class SetKey(_Key):
    """ㄱㄴㄷ letters (or circled numbers, or labels such as A, B): the set named, order and
    spacing ignored."""

    format: Literal["set"] = "set"
    members: list[str] = Field(min_length=1)



class ExpressionKey(_Key):
    """A mathematical expression in LaTeX, compared for equivalence (Math-Verify)."""

    format: Literal["expression"] = "expression"
    latex: str = Field(min_length=1)



class JudgedKey(_Key):
    """What only a judge (or a person) can check: a reference answer and a rubric."""

    format: Literal["judged"] = "judged"
    reference: str = Field(min_length=1)
    rubric: str | None = None



PartKey = Annotated[ChoiceKey | NumericKey | TextKey | SetKey | ExpressionKey | JudgedKey,
                    Field(discriminator="format")]


class PartsKey(_Key):
    """A multi-part answer ((1) … (2) …): one key per part, correct only when every part is."""

    format: Literal["parts"] = "parts"
    parts: list[PartKey] = Field(min_length=2)
    labels: list[str] | None = Field(None, description="how the paper labels the parts, e.g. (1), (2)")

    @model_validator(mode="after")
    def _labels_fit(self) -> PartsKey:
        if self.labels is not None and len(self.labels) != len(self.parts):
            raise ValueError("labels must name every part")
        return self



AnswerKey = Annotated[ChoiceKey | NumericKey | TextKey | SetKey | ExpressionKey | JudgedKey | PartsKey,
                      Field(discriminator="format")]
KEY_FORMATS: tuple[str, ...] = tuple(
    get_args(model.model_fields["format"].annotation)[0]
    for model in (ChoiceKey, NumericKey, TextKey, SetKey, ExpressionKey, JudgedKey, PartsKey))
_ADAPTER: TypeAdapter[Any] = TypeAdapter(AnswerKey)


def parse_key(data: Any) -> AnswerKey:
    """A key from its JSON dict (validated; raises pydantic's ValidationError)."""
    return _ADAPTER.validate_python(data)  # type: ignore[no-any-return]


def key_from_legacy(answer: Any, require_all: bool = False) -> Any:
    """A schema-1 answer (an option number or a list of them) as a choice key dict; anything
    else is returned as it is, for validation to judge."""
    if isinstance(answer, bool):
        return answer
    if isinstance(answer, int):
        return {"format": "choice", "options": [answer], "require_all": require_all}
    if isinstance(answer, list) and answer and all(isinstance(n, int) and not isinstance(n, bool) for n in answer):
        return {"format": "choice", "options": list(answer), "require_all": require_all}
    return answer


def key_text(key: Any) -> str:
    """A key (typed or its dict) as plain text: what a release's answer column shows."""
    return answer_text(key if isinstance(key, dict) else key.as_dict())


def key_from_text(answer: str, question_type: str | None = None, n_options: int = 0) -> AnswerKey:
    """The typed key an answer as a paper writes it means (`scoring.portable.guess_key`, with
    KMMMU's question types), validated."""
    return parse_key(guess_key(answer, question_type, n_options))
