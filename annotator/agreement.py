"""Agreement statistics for the stats tab; they live in `evaluation.agreement` so that the
report's judge meta-evaluation uses the very same figures (read-only use of evaluation)."""

from evaluation.agreement import Metric, icc, krippendorff_alpha

__all__ = ["Metric", "icc", "krippendorff_alpha"]
