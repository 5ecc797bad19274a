"""Suspect items, ranked: the evidence that an item's key or wording is broken, as one score.

Signals, each a strength s in [0, 1], combined as a noisy-or: evidence = Σ −log(1 − s) ranks the
items (it does not saturate), score = 1 − exp(−evidence) = 1 − Π(1 − s) is what a person reads.
- the models-as-annotators consensus puts the key in doubt (`consensus`): s = P(key wrong). A
  choice item's ballots are the options chosen; an open item's (numeric, text, set …) the
  answers normalised by its format (`responses.Responses.votes`: the key's answer, and each
  other answer given), so strong models agreeing on one value that is not the key's put a
  numeric key in doubt as they do an option;
- negative or near-zero discrimination: the stronger a model, the likelier it misses the item;
- no option chosen above chance by the strongest third of the models (ambiguous or broken);
- dedup found the same question with another key (an answer conflict);
- many unparseable or error answers.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from evaluation.filter_records import Suspect
from filtering.irt.analysis import Analysis
from filtering.irt.consensus import consensus
from filtering.irt.responses import Responses

NEGATIVE_SURE, NEGATIVE, FLAT = 0.5, 0.3, 0.15
AMBIGUOUS, CONFLICT = 0.3, 0.4
FLAT_BELOW = 0.2  # discrimination under this counts as near zero
MIN_STRONG = 3  # strong models that must have chosen an option before "no option above chance" is said
UNPARSEABLE_FROM = 0.25
CONFLICT_PARTNER = re.compile(r"answer conflict with (\S+)")  # dedup's wording (curation/steps/dedup_stage.py)


def ballots(r: Responses) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """What the consensus reads, models × items: a choice item's option chosen, with its key option
    and option count; an open item's answer code (`Responses.votes`), with the key's code (1) and
    the number of answers given (at least 2). None when no model chose or said anything."""
    n_items = len(r.items)
    shape = r.correct.shape
    chosen = r.choice.copy() if r.choice is not None else np.zeros(shape, dtype=np.int16)
    keys = r.keys.copy() if r.keys is not None else np.zeros(n_items, dtype=np.int16)
    options = r.options.copy() if r.options is not None else np.zeros(n_items, dtype=np.int16)
    if r.votes is not None and r.answer_labels:
        cols = np.array([j for j, item_id in enumerate(r.items) if item_id in r.answer_labels], dtype=np.int64)
        chosen[:, cols] = r.votes[:, cols]
        keys[cols] = 1
        options[cols] = [max(2, len(r.answer_labels[r.items[j]])) for j in cols.tolist()]
    return (chosen, keys, options) if chosen.any() else None


class _Evidence:
    """Per item: the evidence summed over the signals (Σ −log(1 − s)) and the reasons said, in the
    order the signals are read."""

    def __init__(self, n_items: int) -> None:
        self.total = np.zeros(n_items)
        self.reasons: list[list[str]] = [[] for _ in range(n_items)]

    def add(self, j: int, strength: float, reason: str) -> None:
        self.total[j] += _weight(strength)
        self.reasons[j].append(reason)


class _Consensus(NamedTuple):
    """Per item: P(key wrong), the option (or answer code) the consensus picks and its posterior;
    NaN and 0 where no model chose or said anything."""

    key_wrong: np.ndarray
    option: np.ndarray
    posterior: np.ndarray


def find_suspects(analysis: Analysis, min_score: float = 0.2, key_prior: float = 0.8) -> list[Suspect]:
    r = analysis.responses
    evidence = _Evidence(len(r.items))
    found = _consensus_evidence(analysis, evidence, min_score, key_prior)
    _discrimination_evidence(analysis, evidence)
    _ambiguity_evidence(analysis, evidence)
    position = {item_id: j for j, item_id in enumerate(r.items)}
    for item_id, found_conflicts in r.conflicts.items():
        j = position[item_id]
        evidence.total[j] += _weight(CONFLICT)
        evidence.reasons[j].extend(f"dedup: {reason}" for reason in found_conflicts)
    _unparseable_evidence(r, evidence)
    rows = []
    for j in np.argsort(-evidence.total, kind="stable").tolist():
        score = -float(np.expm1(-evidence.total[j]))
        if score < min_score or not evidence.reasons[j]:
            continue
        said = r.answer_labels.get(r.items[j])
        if said is not None and r.votes is not None:
            rows.append(_open_suspect(analysis, j, said, score, float(evidence.total[j]), evidence.reasons[j],
                                      found.key_wrong[j], found.option[j], found.posterior[j]))
        else:
            rows.append(_choice_suspect(analysis, j, score, float(evidence.total[j]), evidence.reasons[j], found))
    return rows


def _consensus_evidence(analysis: Analysis, evidence: _Evidence, min_score: float, key_prior: float) -> _Consensus:
    """The models-as-annotators consensus: its surprise at the key as evidence, and a reason where
    it doubts the key."""
    r, fit = analysis.responses, analysis.fit
    n_items = len(r.items)
    keys = r.keys if r.keys is not None else np.zeros(n_items, dtype=np.int16)
    found_ballots = ballots(r)
    if found_ballots is None:
        return _Consensus(np.full(n_items, np.nan), np.zeros(n_items, dtype=int), np.full(n_items, np.nan))
    chosen, ballot_keys, ballot_options = found_ballots
    found = consensus(chosen, fit.theta, ballot_keys, ballot_options, fit.priors, key_prior)
    key_wrong, option = found.key_wrong, found.option
    option_post = found.posterior[np.arange(n_items), np.maximum(option, 1) - 1]
    evidence.total += np.nan_to_num(found.key_surprise)
    for j in np.flatnonzero(np.isfinite(key_wrong)).tolist():
        said = r.answer_labels.get(r.items[j])
        pick = f"option {option[j]}" if said is None else _named(said, option[j])
        key = str(keys[j]) if said is None else repr(said[0])
        if key_wrong[j] >= 0.5:
            evidence.reasons[j].append(f"models' consensus picks {pick} (posterior {option_post[j]:.2f}), "
                                       f"the key says {key}: P(key wrong) = {key_wrong[j]:.2f}")
        elif key_wrong[j] >= min_score:
            evidence.reasons[j].append(f"models' consensus doubts the key {key}: P(key wrong) = {key_wrong[j]:.2f}")
    return _Consensus(key_wrong, option, option_post)


def _discrimination_evidence(analysis: Analysis, evidence: _Evidence) -> None:
    """Negative or near-zero discrimination: the stronger a model, the likelier it misses the item."""
    for j, a in enumerate(analysis.fit.a.tolist()):
        high = analysis.a_high[j]
        if analysis.n[j] < 2:
            continue
        if a < 0 and np.isfinite(high) and high < 0:
            evidence.add(j, NEGATIVE_SURE,
                         f"negative discrimination {a:.2f} (interval top {high:.2f}): stronger models miss it more")
        elif a < 0:
            evidence.add(j, NEGATIVE, f"negative discrimination {a:.2f}: stronger models miss it more")
        elif a < FLAT_BELOW:
            evidence.add(j, FLAT, f"near-zero discrimination {a:.2f}: the item does not separate strong from weak models")


def _ambiguity_evidence(analysis: Analysis, evidence: _Evidence) -> None:
    """No option chosen above chance by the strongest third of the models."""
    r = analysis.responses
    if analysis.option_share_strong is None or r.choice is None:
        return
    strong_chose = (r.choice[analysis.strong] > 0).sum(axis=0)
    width = analysis.option_share_strong.shape[1]
    k = np.where(r.options > 0, r.options, width) if r.options is not None else np.full(len(r.items), width)
    top = np.nan_to_num(analysis.option_share_strong, nan=0.0).max(axis=1)
    for j in np.flatnonzero((strong_chose >= MIN_STRONG) & (top <= 1 / np.maximum(k, 2) + 0.15)).tolist():
        evidence.add(j, AMBIGUOUS, f"no option chosen above chance by the strongest third (top share {top[j]:.2f} of "
                                   f"{strong_chose[j]} models, {k[j]} options)")


def _unparseable_evidence(r: Responses, evidence: _Evidence) -> None:
    """Many unparseable or error answers."""
    if r.unparseable is None or r.cells is None:
        return
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(r.cells > 0, r.unparseable / np.maximum(r.cells, 1), 0.0)
    for j in np.flatnonzero(rate >= UNPARSEABLE_FROM).tolist():
        evidence.add(j, float(min(0.4, rate[j] / 2)), f"{r.unparseable[j]} of {r.cells[j]} answers unparseable or error")


def _choice_suspect(analysis: Analysis, j: int, score: float, evidence: float, reasons: list[str],
                    found: _Consensus) -> Suspect:
    """A choice item's suspect: options by number, with the counts of the models choosing each."""
    r, fit, strong = analysis.responses, analysis.fit, analysis.option_share_strong
    item_id = r.items[j]
    keys = r.keys if r.keys is not None else np.zeros(len(r.items), dtype=np.int16)
    counts = counts_strong = {}
    if r.choice is not None:
        width = int(max(r.choice.max(initial=0), 0))
        counts = _counts(np.array([(r.choice[:, j] == o).sum() for o in range(1, width + 1)]))
        counts_strong = _counts(np.array([(r.choice[analysis.strong, j] == o).sum() for o in range(1, width + 1)]))
    key_wrong, posterior = found.key_wrong[j], found.posterior[j]
    return Suspect(
        item_id=item_id, content_hash=r.hashes.get(item_id), score=round(score, 4), evidence=round(evidence, 3),
        reasons=reasons, key=int(keys[j]) or None, consensus_option=int(found.option[j]) or None,
        key_wrong_posterior=None if not np.isfinite(key_wrong) else round(float(key_wrong), 4),
        consensus_posterior=None if not np.isfinite(posterior) else round(float(posterior), 4),
        discrimination=round(float(fit.a[j]), 4),
        discrimination_high=None if not np.isfinite(analysis.a_high[j]) else round(float(analysis.a_high[j]), 4),
        share_correct=None if not np.isfinite(analysis.share[j]) else round(float(analysis.share[j]), 4),
        options_strong={} if strong is None else {str(o + 1): round(float(v), 4) for o, v in enumerate(strong[j])
                                                  if np.isfinite(v)},
        n=int(analysis.n[j]), option_counts=counts, option_counts_strong=counts_strong,
        conflict_partners=_conflict_partners(r, item_id))


def _open_suspect(analysis: Analysis, j: int, said: list[str], score: float, evidence: float, reasons: list[str],
                  key_wrong: float, option: int, posterior: float) -> Suspect:
    """An open item's suspect: the answers by name (the key's first), never option numbers."""
    r, fit = analysis.responses, analysis.fit
    assert r.votes is not None
    item_id = r.items[j]

    def counted(votes: np.ndarray) -> dict[str, int]:
        return {said[code - 1]: int(n) for code in range(1, len(said) + 1) if (n := int((votes == code).sum()))}

    return Suspect(
        item_id=item_id, content_hash=r.hashes.get(item_id), score=round(score, 4), evidence=round(evidence, 3),
        reasons=reasons, answer_format=r.formats.get(item_id), key_answer=said[0],
        consensus_answer=said[option - 1] if 0 < option <= len(said) else None,
        key_wrong_posterior=None if not np.isfinite(key_wrong) else round(float(key_wrong), 4),
        consensus_posterior=None if not np.isfinite(posterior) else round(float(posterior), 4),
        discrimination=round(float(fit.a[j]), 4),
        discrimination_high=None if not np.isfinite(analysis.a_high[j]) else round(float(analysis.a_high[j]), 4),
        share_correct=None if not np.isfinite(analysis.share[j]) else round(float(analysis.share[j]), 4),
        n=int(analysis.n[j]), answer_counts=counted(r.votes[:, j]),
        answer_counts_strong=counted(r.votes[analysis.strong, j]),
        conflict_partners=_conflict_partners(r, item_id))


def _conflict_partners(r: Responses, item_id: str) -> list[str]:
    """The items dedup found with another key, named in its answer-conflict reasons."""
    return sorted({m.group(1) for reason in r.conflicts.get(item_id, []) if (m := CONFLICT_PARTNER.match(reason))})


def _named(said: list[str], option: int) -> str:
    """The consensus answer of an open item by name. With one answer given (the key's), the consensus
    reads two codes, the second standing for "something else"; no model said it by name."""
    if 0 < option <= len(said):
        return f"the answer {said[option - 1]!r}"
    return "an answer other than the key's (none given by name)"


def _counts(row: np.ndarray) -> dict[str, int]:
    return {str(o + 1): int(v) for o, v in enumerate(row) if v}


def _weight(strength: float) -> float:
    return -float(np.log1p(-min(strength, 0.999999)))
