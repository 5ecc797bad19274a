"""How well each automatic decider agrees with people's verdicts, per answer format.

A person's verdict (`records.HumanVerdict`) carries the score it overrides (`before`) and what
another tool said of the response (`external`), so each response a person decided gives one pair
per decider that had decided it:

- each checker (`checker:NAME`): its outcome — `correct` accepts; `wrong`, `unparseable` and
  `error` reject (`undecided` is no decision);
- the answer judge (`judge:MODEL`): its verdict, as the record's outcome or written beside the
  checker's (`--judge-all`);
- another tool's own verdict (`external:SOURCE`, e.g. KMMMU's LLM judge in its CSV).

The person accepts when the verdict is `correct` (`incorrect` and `no answer` reject). Per format
and decider: n, agreement, Cohen's κ with a seeded percentile-bootstrap 95% interval over the
responses, false accepts (the decider accepts what people reject) and false rejects; for
checkers, how often people found the answer read right. Beside them, per format, the share of
the runs' responses the judge decided (`FormatShare`, counted by whoever loaded the runs).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from evaluation.records import HumanVerdict
from evaluation.resampling import bootstrap_interval

ALL_FORMATS = "all"
DECIDED = ("correct", "wrong", "unparseable", "error")
DeciderKind = Literal["checker", "judge", "external"]
RESAMPLES = 2000
SEED = 0


@dataclass(frozen=True)
class Decision:
    kind: DeciderKind
    decider: str
    accepts: bool


def decisions(verdict: HumanVerdict) -> Iterator[Decision]:
    """What each automatic decider had said of the response the person decided."""
    before = verdict.before
    if before is not None:
        checker_outcome = before.outcome if before.decided_by == "checker" else before.details.get("checker_outcome")
        if checker_outcome in DECIDED and before.checker:
            yield Decision("checker", f"checker:{before.checker}", checker_outcome == "correct")
        beside = before.details.get("judge")
        if before.decided_by == "judge" and before.outcome in ("correct", "wrong"):
            yield Decision("judge", f"judge:{before.judge_model}", before.outcome == "correct")
        elif isinstance(beside, dict) and isinstance(beside.get("verdict"), bool):
            yield Decision("judge", f"judge:{beside.get('model')}", beside["verdict"])
    external = verdict.external or {}
    if isinstance(external.get("is_correct"), bool):
        yield Decision("external", f"external:{external.get('source') or 'tool'}", external["is_correct"])


def _kappa(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """Cohen's κ of two 0/1 raters along `axis` (NaN where chance agreement is total)."""
    observed = np.mean(a == b, axis=axis)
    pa, pb = np.mean(a, axis=axis), np.mean(b, axis=axis)
    expected = pa * pb + (1 - pa) * (1 - pb)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected == 1, np.nan, (observed - expected) / (1 - expected))


def cohen_kappa(decider: Iterable[bool], people: Iterable[bool]) -> float | None:
    a, b = np.asarray(list(decider), dtype=float), np.asarray(list(people), dtype=float)
    if a.size == 0:
        return None
    value = float(_kappa(a, b))
    return None if np.isnan(value) else value


def kappa_interval(decider: Iterable[bool], people: Iterable[bool], *, seed: int = SEED,
                   resamples: int = RESAMPLES) -> tuple[float, float] | None:
    """Percentile-bootstrap 95% interval of κ, resampling the responses (pairs kept together)."""
    a, b = np.asarray(list(decider), dtype=float), np.asarray(list(people), dtype=float)
    return bootstrap_interval([a, b], _kappa, seed=seed, resamples=resamples, paired=True, vectorized=True)[0]


@dataclass
class DeciderAgreement:
    answer_format: str  # a format, or "all"
    decider: str  # checker:NAME, judge:MODEL, external:SOURCE
    kind: DeciderKind
    n: int = 0
    agree: int = 0
    false_accepts: int = 0  # the decider accepts, people reject
    false_rejects: int = 0  # the decider rejects, people accept
    people_accept: int = 0
    extraction_checked: int = 0  # responses whose reading people judged (checkers)
    extraction_right: int = 0
    kappa: float | None = None
    kappa_ci: tuple[float, float] | None = None
    _pairs: list[tuple[bool, bool]] = field(default_factory=list, repr=False)

    @property
    def agreement(self) -> float | None:
        return self.agree / self.n if self.n else None

    def as_dict(self) -> dict[str, Any]:
        return {"format": self.answer_format, "decider": self.decider, "kind": self.kind, "n": self.n,
                "agree": self.agree, "agreement": self.agreement, "kappa": self.kappa,
                "kappa_ci": list(self.kappa_ci) if self.kappa_ci else None, "false_accepts": self.false_accepts,
                "false_rejects": self.false_rejects, "people_accept": self.people_accept,
                "extraction_checked": self.extraction_checked, "extraction_right": self.extraction_right}


@dataclass(frozen=True)
class FormatShare:
    """Per answer format, over the responses of the runs loaded for review: how many the judge decided."""

    answer_format: str
    responses: int
    judged: int
    verdicts: int = 0  # responses people decided

    @property
    def share_judged(self) -> float | None:
        return self.judged / self.responses if self.responses else None

    def as_dict(self) -> dict[str, Any]:
        return {"format": self.answer_format, "responses": self.responses, "judged": self.judged,
                "share_judged": self.share_judged, "verdicts": self.verdicts}


@dataclass
class VerdictAgreement:
    deciders: list[DeciderAgreement]
    formats: list[FormatShare]
    verdicts: int

    def as_dict(self) -> dict[str, Any]:
        return {"verdicts": self.verdicts, "deciders": [row.as_dict() for row in self.deciders],
                "formats": [row.as_dict() for row in self.formats],
                "interval": f"percentile bootstrap over responses, {RESAMPLES} resamples, seed {SEED}, 95%"}


def verdict_agreement(verdicts: Iterable[HumanVerdict], responses: Mapping[str, tuple[int, int]] | None = None, *,
                      seed: int = SEED, resamples: int = RESAMPLES) -> VerdictAgreement:
    """Agreement of every decider with people, per format and over all formats; `responses`:
    format → (responses in the reviewed runs, of them decided by the judge)."""
    rows: dict[tuple[str, str], DeciderAgreement] = {}
    per_format: dict[str, int] = {}
    total = 0
    for verdict in verdicts:
        total += 1
        fmt = verdict.answer_format or "unknown"
        per_format[fmt] = per_format.get(fmt, 0) + 1
        people = verdict.verdict == "correct"
        for decision in decisions(verdict):
            for group in (fmt, ALL_FORMATS):
                row = rows.setdefault((group, decision.decider), DeciderAgreement(group, decision.decider, decision.kind))
                row.n += 1
                row.agree += decision.accepts == people
                row.false_accepts += decision.accepts and not people
                row.false_rejects += people and not decision.accepts
                row.people_accept += people
                if decision.kind == "checker" and verdict.extraction_ok is not None:
                    row.extraction_checked += 1
                    row.extraction_right += verdict.extraction_ok
                row._pairs.append((decision.accepts, people))
    for row in rows.values():
        said, judged = [pair[0] for pair in row._pairs], [pair[1] for pair in row._pairs]
        row.kappa = cohen_kappa(said, judged)
        row.kappa_ci = kappa_interval(said, judged, seed=seed, resamples=resamples)
    order = {"checker": 0, "judge": 1, "external": 2}
    deciders = sorted(rows.values(), key=lambda r: (r.answer_format == ALL_FORMATS, r.answer_format,
                                                    order[r.kind], r.decider))
    counted = dict(responses or {})
    formats = [FormatShare(fmt, *counted.get(fmt, (0, 0)), per_format.get(fmt, 0))
               for fmt in sorted(set(counted) | set(per_format))]
    return VerdictAgreement(deciders, formats, total)
