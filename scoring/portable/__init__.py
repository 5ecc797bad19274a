"""benchsmith's scoring, stdlib-only and self-contained: benchsmith imports it as
`scoring.portable`, and every release copies this folder whole into `harness/benchsmith_scoring/`
so that lm-eval, inspect, HRET and VLMEvalKit score with exactly these files. Only relative
imports inside."""

from .extraction import final_answer
from .guess import QUESTION_TYPES, guess_key, options_in_text
from .registry import FORMATS, answer_text, checker_versions, get_format, instruction
from .scorer import check_answer, score_response
from .verdict import DECIDED, OUTCOMES, REFUSED_REASONS, TRUNCATED_REASONS, Verdict

__all__ = ["DECIDED", "FORMATS", "OUTCOMES", "QUESTION_TYPES", "REFUSED_REASONS", "TRUNCATED_REASONS", "Verdict",
           "answer_text", "check_answer", "checker_versions", "final_answer", "get_format", "guess_key", "instruction", "options_in_text",
           "score_response"]
