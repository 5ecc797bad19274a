"""Small subsets that predict full-set accuracy, and the estimate from a model's answers on one.

Selection: the training models' 2PL fit; the items sorted by difficulty and cut into k strata,
one item drawn from each (seeded), so the subset spans the difficulty range as the full set does.
(Picking the most informative items per ability target did better on ARC but up to 1.5× worse
than random on CommonsenseQA and QuAIL under family hold-out: the items that look most
discriminating on the training families are not so on new ones.)

Estimate: the model's ability by MAP on the subset items it answered; its full-set accuracy is
(correct on the subset + Σ over the other items of P(correct | θ̂)) / N — the subset's own score
where it was seen, the fit's prediction where not. The interval draws θ from its posterior
(normal, the MAP's standard error) and adds the binomial spread of the unseen items.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from curation.errors import BenchsmithError
from evaluation.records import AccuracyEstimate, SubsetSpec, now_iso
from filtering.irt.responses import Responses
from filtering.irt.twopl import TwoPL, ability_map, fit_2pl, probability

METHOD = "difficulty-stratified draw from a 2PL fit; estimate: subset score + 2PL prediction of the other items"


def select_items(fit: TwoPL, k: int, seed: int = 0) -> np.ndarray:
    """Indices of k items, one drawn from each of k difficulty strata."""
    n_items = len(fit.b)
    if k >= n_items:
        return np.arange(n_items)
    rng = np.random.default_rng(seed)
    strata = np.array_split(np.argsort(fit.b, kind="stable"), k)
    return np.sort(np.array([rng.choice(stratum) for stratum in strata]))


def make_subset(responses: Responses, k: int, seed: int = 0) -> SubsetSpec:
    if k < 1:
        raise BenchsmithError("--k must be at least 1")
    answered = responses.answered
    if (answered.sum(axis=1) > 0).sum() < 2:
        raise BenchsmithError("choosing a subset needs answers from at least 2 models")
    keep = np.flatnonzero(answered.sum(axis=1) > 0)
    responses = responses.take(models=keep)
    fit = fit_2pl(np.nan_to_num(responses.correct), responses.answered.astype(float))
    picked = select_items(fit, min(k, len(responses.items)), seed)
    items = [responses.items[j] for j in picked]
    return SubsetSpec(created_at=now_iso(), method=METHOD, items=items,
                      content_hashes={i: responses.hashes[i] for i in items if i in responses.hashes},
                      all_items=list(responses.items), discrimination=[round(float(v), 5) for v in fit.a],
                      difficulty=[round(float(v), 5) for v in fit.b], training_models=list(responses.models),
                      source=responses.source)


@dataclass
class SubsetAnswers:
    models: list[str]
    correct: np.ndarray  # models × subset items, NaN where not answered


def estimate(spec: SubsetSpec, answers: SubsetAnswers, level: float = 0.9, draws: int = 400,
             seed: int = 0) -> list[AccuracyEstimate]:
    position = {item: j for j, item in enumerate(spec.all_items)}
    seen = np.array([position[i] for i in spec.items])
    a, b = np.asarray(spec.discrimination), np.asarray(spec.difficulty)
    unseen = np.setdiff1d(np.arange(len(spec.all_items)), seen)
    w = ~np.isnan(answers.correct)
    theta, se = ability_map(np.nan_to_num(answers.correct), w.astype(float), a[seen], b[seen])
    rng = np.random.default_rng(seed)
    tail = (1 - level) / 2
    rows = []
    for m, model in enumerate(answers.models):
        if not w[m].any():
            continue
        # items of the subset this model did not answer are predicted like the unseen ones
        predicted = np.concatenate([unseen, seen[~w[m]]])
        observed = float(np.nansum(answers.correct[m]))
        total = len(spec.all_items)
        point = (observed + probability(np.array([theta[m]]), a[predicted], b[predicted]).sum()) / total
        thetas = rng.normal(theta[m], se[m], draws)
        p = probability(thetas, a[predicted], b[predicted])  # draws × predicted
        expected = (observed + p.sum(axis=1)) / total
        spread = np.sqrt((p * (1 - p)).sum(axis=1)) / total
        sample = expected + spread * rng.standard_normal(draws)
        low, high = np.quantile(sample, [tail, 1 - tail])
        rows.append(AccuracyEstimate(model=model, accuracy=round(float(point), 4),
                                     low=round(float(max(low, observed / total)), 4),
                                     high=round(float(min(high, (observed + len(predicted)) / total)), 4),
                                     answered=int(w[m].sum()), ability=round(float(theta[m]), 4)))
    return rows


def subset_answers(spec: SubsetSpec, responses: Responses) -> tuple[SubsetAnswers, list[str]]:
    """The subset's columns of `responses` (models with none of them left out, and said so)."""
    column = {item: j for j, item in enumerate(responses.items)}
    notes = []
    missing = [i for i in spec.items if i not in column]
    if len(missing) == len(spec.items):
        raise BenchsmithError("none of the subset's items have answers here")
    if missing:
        notes.append(f"{len(missing)} subset item(s) without any answer here: predicted from the fit instead")
    changed = [i for i in spec.items if i in column and i in spec.content_hashes and i in responses.hashes
               and responses.hashes[i] != spec.content_hashes[i]]
    if changed:
        notes.append(f"{len(changed)} subset item(s) changed since the subset was made: their answers are left out")
    correct = np.full((len(responses.models), len(spec.items)), np.nan)
    for s, item in enumerate(spec.items):
        if item in column and item not in changed:
            correct[:, s] = responses.correct[:, column[item]]
    silent = [m for m, row in zip(responses.models, correct, strict=True) if np.isnan(row).all()]
    if silent:
        notes.append(f"{len(silent)} model(s) with no answer on the subset, not estimated: {', '.join(silent[:10])}")
    return SubsetAnswers(list(responses.models), correct), notes


def load_subset(path: Path) -> SubsetSpec:
    try:
        spec = SubsetSpec.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BenchsmithError(f"{path}: cannot read the subset: {error.strerror}") from None
    except UnicodeDecodeError:
        raise BenchsmithError(f"{path}: not a subset written by `analyze subset` (not UTF-8 JSON)") from None
    except ValidationError as error:
        first = error.errors()[0]
        raise BenchsmithError(f"{path}: not a subset written by `analyze subset` "
                              f"({'.'.join(map(str, first['loc']))}: {first['msg']})") from None
    if len(spec.discrimination) != len(spec.all_items) or len(spec.difficulty) != len(spec.all_items):
        raise BenchsmithError(f"{path}: the item parameters do not match the item list")
    if not set(spec.items) <= set(spec.all_items):
        raise BenchsmithError(f"{path}: subset items missing from the item list")
    return spec
