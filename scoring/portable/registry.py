"""The answer formats, by name: adding a format is a module in `formats/` and a line here."""

from __future__ import annotations

from .formats.base import AnswerFormat
from .formats.choice import ChoiceFormat
from .formats.expression import ExpressionFormat
from .formats.judged import JudgedFormat
from .formats.numeric import NumericFormat
from .formats.parts import PartsFormat
from .formats.set import SetFormat
from .formats.text import TextFormat

FORMATS: dict[str, AnswerFormat] = {
    "choice": ChoiceFormat(),
    "numeric": NumericFormat(),
    "text": TextFormat(),
    "set": SetFormat(),
    "expression": ExpressionFormat(),
    "judged": JudgedFormat(),
}
FORMATS["parts"] = PartsFormat(FORMATS)  # checks each part with the formats above


def get_format(name: str) -> AnswerFormat:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown answer format {name!r} (one of {', '.join(FORMATS)})") from None


def checker_versions() -> dict[str, str]:
    """Every format's checker version: what `rescore` compares with a record's."""
    return {name: fmt.version for name, fmt in FORMATS.items()}


def instruction(key: dict[str, object]) -> str:
    """The prompt's instruction for a key ("" for choice: its prompts carry their own)."""
    return get_format(str(key.get("format", ""))).instruction(dict(key))


def answer_text(key: dict[str, object]) -> str:
    """A key as plain text (a release's answer column, a reviewer's view)."""
    return get_format(str(key.get("format", ""))).answer_text(dict(key))
