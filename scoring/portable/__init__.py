"""benchsmith's scoring, stdlib-only and self-contained: benchsmith imports it as
`scoring.portable`, and every release copies this folder whole into `harness/` so that lm-eval,
inspect, HRET and VLMEvalKit score with exactly these files. Only relative imports inside."""

from .registry import FORMATS, checker_versions, get_format
from .scorer import check_answer, score_response
from .verdict import DECIDED, OUTCOMES, REFUSED_REASONS, TRUNCATED_REASONS, Verdict

__all__ = ["DECIDED", "FORMATS", "OUTCOMES", "REFUSED_REASONS", "TRUNCATED_REASONS", "Verdict", "check_answer",
           "checker_versions", "get_format", "score_response"]
