"""Models as annotators: which option the answers say is right, and how likely the key is wrong.

Two views of the same choices, each a likelihood of the item's choices under "t is the right
option", multiplied with one prior that favours the key (`key_prior`):

- by ability (`_curve_loglik`): for each item and each option t the choices are explained under "t is the right answer": the
chance of choosing t follows a 2PL curve in the models' abilities (fitted per item and option,
abilities held at the whole fit's), and a model that does not choose t picks among the other
options at fixed rates (the item's distractor shares). The likelihoods of the item's choices
under each t, with a prior that favours the key (`key_prior`), give the posterior over the right
option. A strong model's choice weighs most because the curve must rise through it: a hard item
whose weak models flock to a lure keeps its key (the key's share rises with ability, the lure's
falls), while a mis-keyed item's true answer is the option the strong models converge on;
- by agreement (`_agreement_loglik`, one-coin Dawid–Skene): model m picks the right option with
  chance s_m, else another at random; EM alternates the items' posteriors with each s_m, so a
  model that agrees with the consensus counts for more (weight logit(s_m) + log(K − 1), never
  below 0: a model worse than chance carries no information, not negative information). It sees
  what the curves cannot: an easy item where most models choose an option other than the key.

Each view alone ranked seeded mis-keys well in a different place (the curves are fooled by easy
mis-keyed items, agreement by hard items with a lure); together they rank better than either.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from filtering.irt.twopl import Priors, _item_objective, _item_step


@dataclass
class Consensus:
    posterior: np.ndarray  # items × options: P(right option = o)
    key_wrong: np.ndarray  # per item, P(right option ≠ key); NaN without a key or choices
    key_surprise: np.ndarray  # per item, −log P(right option = key), which does not saturate as key_wrong → 1
    option: np.ndarray  # per item, the most probable option (0: none)


def consensus(choice: np.ndarray, theta: np.ndarray, keys: np.ndarray, options: np.ndarray, priors: Priors,
              key_prior: float = 0.8) -> Consensus:
    """choice: models × items (0 = no option); theta: per model; keys, options: per item (0 = unknown)."""
    n_items = choice.shape[1]
    width = int(max(options.max(initial=0), choice.max(initial=0), 2))
    k = np.maximum(np.where(options > 0, options, width), 2)
    keyed = (keys > 0) & (keys <= k)
    log_prior = np.log(1.0 / k[:, None]) * np.ones((1, width))
    rows = np.flatnonzero(keyed)
    log_prior[rows] = np.log((1 - key_prior) / (k[rows, None] - 1))
    log_prior[rows, keys[rows] - 1] = np.log(key_prior)
    log_prior[np.arange(width)[None, :] >= k[:, None]] = -np.inf  # options the item does not have
    loglik = _curve_loglik(choice, theta, k, width, priors) + _agreement_loglik(choice, log_prior, k, width)
    log_post = log_prior + loglik
    log_post = log_post - logsumexp(log_post, axis=1, keepdims=True)
    posterior = np.exp(log_post)
    any_choice = (choice > 0).any(axis=0)
    key_wrong = np.full(n_items, np.nan)
    surprise = np.full(n_items, np.nan)
    scored = keyed & any_choice
    surprise[scored] = -log_post[scored, keys[scored] - 1]
    key_wrong[scored] = -np.expm1(-surprise[scored])
    option = np.where(any_choice, posterior.argmax(axis=1) + 1, 0)
    return Consensus(posterior, key_wrong, surprise, option)


def _normalised(log_post: np.ndarray) -> np.ndarray:
    log_post = log_post - log_post.max(axis=1, keepdims=True)
    posterior = np.exp(log_post)
    return posterior / posterior.sum(axis=1, keepdims=True)


def _curve_loglik(choice: np.ndarray, theta: np.ndarray, k: np.ndarray, width: int, priors: Priors,
                  steps: int = 5) -> np.ndarray:
    n_items = choice.shape[1]
    chose = (choice > 0).astype(float)
    counts = np.stack([(choice == t).sum(axis=0) for t in range(1, width + 1)], axis=1).astype(float)
    loglik = np.zeros((n_items, width))
    for t in range(1, width + 1):
        y = (choice == t).astype(float)
        share = (counts[:, t - 1] + 0.5) / (chose.sum(axis=0) + 1)
        a = np.full(n_items, priors.a_mean)
        b = np.log((1 - share) / share) / priors.a_mean
        for _ in range(steps):
            a, b = _item_step(y, chose, theta, a, b, priors)
        others = counts.copy()
        others[:, t - 1] = 0
        rates = (others + 0.5) / (others.sum(axis=1, keepdims=True) + 0.5 * (k[:, None] - 1))
        loglik[:, t - 1] = _item_objective(y, chose, theta, a, b, priors) + (others * np.log(rates)).sum(axis=1)
    return loglik


def _agreement_loglik(choice: np.ndarray, log_prior: np.ndarray, k: np.ndarray, width: int,
                      iterations: int = 30) -> np.ndarray:
    picked = [(choice == o) for o in range(1, width + 1)]
    chose = choice > 0
    posterior = _normalised(log_prior)
    skill = np.full(choice.shape[0], 0.5)
    loglik = np.zeros_like(log_prior)
    for _ in range(iterations):
        hit = sum((picked[o] * posterior[:, o][None, :]).sum(axis=1) for o in range(width))
        skill = np.clip((hit + 1) / (chose.sum(axis=1) + 2), 0.02, 0.98)
        weight = np.maximum(np.log(skill / (1 - skill))[:, None] + np.log(k - 1)[None, :], 0.0)  # models × items
        loglik = np.stack([(picked[o] * weight).sum(axis=0) for o in range(width)], axis=1)
        new = _normalised(log_prior + loglik)
        done = np.abs(new - posterior).max(initial=0) < 1e-6
        posterior = new
        if done:
            break
    return loglik
