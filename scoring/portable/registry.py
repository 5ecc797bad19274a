"""The answer formats, by name: adding a format is a module in `formats/` and a line here."""

from __future__ import annotations

from .formats.base import AnswerFormat
from .formats.choice import ChoiceFormat

FORMATS: dict[str, AnswerFormat] = {
    "choice": ChoiceFormat(),
}


def get_format(name: str) -> AnswerFormat:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown answer format {name!r} (one of {', '.join(FORMATS)})") from None


def checker_versions() -> dict[str, str]:
    """Every format's checker version: what `rescore` compares with a record's."""
    return {name: fmt.version for name, fmt in FORMATS.items()}
