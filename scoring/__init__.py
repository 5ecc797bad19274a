"""The one definition of "correct": typed answer keys by format, the typed Score, and the
checkers (`scoring.portable`, stdlib-only, copied whole into every release's harness folder).

Below every other package: `scoring` imports nothing of benchsmith's.
"""

from scoring.keys import (
    KEY_FORMATS,
    AnswerKey,
    ChoiceKey,
    ExpressionKey,
    JudgedKey,
    NumericKey,
    PartsKey,
    SetKey,
    TextKey,
    key_from_legacy,
    key_from_text,
    key_text,
    parse_key,
)
from scoring.score import DecidedBy, Outcome, Score, score_key

__all__ = ["KEY_FORMATS", "AnswerKey", "ChoiceKey", "DecidedBy", "ExpressionKey", "JudgedKey", "NumericKey",
           "Outcome", "PartsKey", "Score", "SetKey", "TextKey", "key_from_legacy", "key_from_text", "key_text",
           "parse_key", "score_key"]
