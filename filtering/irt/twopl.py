"""A two-parameter logistic IRT model, P(correct | θ) = σ(a·(θ − b)).

Fitted by damped joint maximum a posteriori: alternating vectorised Newton steps on the
abilities (one per model) and Newton steps on (a, b) (one 2×2 system per item), each step capped, with weak
normal priors — θ ~ N(0, 1), a ~ N(1, 1), b ~ N(0, 3²) to start, the item priors then learned across items — so an item every model solves (or none
does) and a model with few answers stay finite. The discrimination prior is normal, not
lognormal, on purpose: a negative discrimination (the strong models miss it) is the mis-key
signal, and a lognormal prior cannot show it. Abilities are standardised after each round
(mean 0, sd 1 over the models) so the scale is that of a N(0, 1) population, as in marginal ML.

Benchmarks have the shape this suits: few models (tens) and many items (thousands), so each
ability rests on thousands of answers and each item's fit is a small logistic regression on
nearly known abilities. Missing cells are masked out (weight 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from scipy.special import expit


@dataclass(frozen=True)
class Priors:
    theta_sd: float = 1.0
    a_mean: float = 1.0
    a_sd: float = 1.0
    b_mean: float = 0.0
    b_sd: float = 3.0

    def learned(self, a: np.ndarray, b: np.ndarray) -> Priors:
        """Item priors set from the items' current estimates (empirical Bayes), with floors so that
        neither the shrinkage nor a few odd items can pin them down."""
        return replace(self, a_mean=float(np.clip(a.mean(), 0.5, 3.0)), a_sd=max(0.5, float(a.std())),
                       b_mean=float(b.mean()), b_sd=max(0.5, float(b.std())))


@dataclass
class TwoPL:
    a: np.ndarray  # discrimination, per item
    b: np.ndarray  # difficulty, per item
    theta: np.ndarray  # ability, per model
    theta_se: np.ndarray  # per model
    iterations: int = 0
    converged: bool = True
    priors: Priors = field(default_factory=lambda: Priors())

    def p(self, theta: np.ndarray | None = None) -> np.ndarray:
        """P(correct), models × items."""
        return probability(self.theta if theta is None else theta, self.a, self.b)


def probability(theta: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    z = np.subtract.outer(theta, b)
    z *= a
    return expit(z, out=z)


STEP_CAP = 1.0
Mask = np.ndarray | None  # models × items, 1 where answered; None when every cell is


def _prepared(y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, Mask]:
    answered = w > 0
    if answered.all():
        return y.astype(float), None
    return np.where(answered, y, 0.0).astype(float), answered.astype(float)


def _masked(x: np.ndarray, w: Mask) -> np.ndarray:
    if w is not None:
        x *= w
    return x


def _moments(theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per item: Σ x, Σ θ·x, Σ θ²·x over the models (one matrix product)."""
    return np.stack([np.ones_like(theta), theta, theta * theta]) @ x


def _theta_step(y: np.ndarray, w: Mask, a: np.ndarray, b: np.ndarray, theta: np.ndarray,
                priors: Priors) -> tuple[np.ndarray, np.ndarray]:
    """One Newton step on every ability (items fixed); returns the new θ and its information."""
    p = probability(theta, a, b)
    gradient = _masked(y - p, w) @ a - theta / priors.theta_sd**2
    p *= 1 - p
    information = _masked(p, w) @ (a * a) + 1 / priors.theta_sd**2
    return theta + np.clip(gradient / information, -STEP_CAP, STEP_CAP), information


def _item_objective(y: np.ndarray, w: Mask, theta: np.ndarray, a: np.ndarray, b: np.ndarray,
                    priors: Priors) -> np.ndarray:
    """Per item: log-likelihood of its answers plus the log priors of (a, b)."""
    z = a * np.subtract.outer(theta, b)
    loglik = _masked(y * z - np.logaddexp(0, z), w).sum(axis=0)
    return loglik - (a - priors.a_mean) ** 2 / (2 * priors.a_sd**2) - (b - priors.b_mean) ** 2 / (2 * priors.b_sd**2)


def _item_step(y: np.ndarray, w: Mask, theta: np.ndarray, a: np.ndarray, b: np.ndarray,
               priors: Priors, safeguard: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """One Newton step on every (a, b) (abilities fixed; a 2×2 system per item), halved
    where it would lower the item's posterior: near a = 0 the difficulty is barely identified and
    plain steps oscillate."""
    p = probability(theta, a, b)
    residual = _moments(theta, _masked(y - p, w))
    p *= 1 - p
    v = _moments(theta, _masked(p, w))
    # sums over models of residual·(θ − b)^k and v·(θ − b)^k from the moments about 0
    r0 = residual[0]
    r1 = residual[1] - b * r0
    v0, v1t, v2t = v
    v1 = v1t - b * v0
    v2 = v2t - 2 * b * v1t + b * b * v0
    g_a = r1 - (a - priors.a_mean) / priors.a_sd**2
    g_b = -a * r0 - (b - priors.b_mean) / priors.b_sd**2
    i_aa = v2 + 1 / priors.a_sd**2
    i_bb = a * a * v0 + 1 / priors.b_sd**2
    # Newton (observed information) where it is positive definite — scoring alone overshoots back
    # and forth on items far out — else scoring (expected information: always positive definite)
    i_ab = -a * v1 + r0
    det = i_aa * i_bb - i_ab * i_ab
    fisher = det <= 1e-9 * i_aa * i_bb
    i_ab = np.where(fisher, -a * v1, i_ab)
    det = np.where(fisher, i_aa * i_bb - i_ab * i_ab, det)
    step_a = np.clip((i_bb * g_a - i_ab * g_b) / det, -STEP_CAP, STEP_CAP)
    step_b = np.clip((i_aa * g_b - i_ab * g_a) / det, -STEP_CAP, STEP_CAP)
    new_a, new_b = a + step_a, b + step_b
    large = np.flatnonzero(np.maximum(np.abs(step_a), np.abs(step_b)) > 0.05)  # small steps near the optimum are safe
    if not len(large) or not safeguard:
        return new_a, new_b
    cols = (slice(None), large)
    wl = None if w is None else w[cols]
    before = _item_objective(y[cols], wl, theta, a[large], b[large], priors)
    after = _item_objective(y[cols], wl, theta, new_a[large], new_b[large], priors)
    worse, before = large[after < before], before[after < before]
    scale = 1.0
    for _ in range(4):
        if not len(worse):
            break
        scale /= 2
        new_a[worse], new_b[worse] = a[worse] + scale * step_a[worse], b[worse] + scale * step_b[worse]
        cols = (slice(None), worse)
        still = _item_objective(y[cols], None if w is None else w[cols], theta, new_a[worse], new_b[worse],
                                priors) < before
        worse, before = worse[still], before[still]
    new_a[worse], new_b[worse] = a[worse], b[worse]
    return new_a, new_b


def _start(y: np.ndarray, w: Mask, priors: Priors) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    answered = np.ones_like(y) if w is None else w
    share = (y.sum(axis=1) + 0.5) / (answered.sum(axis=1) + 1)
    logit = np.log(share / (1 - share))
    spread = logit.std()
    theta = (logit - logit.mean()) / spread if spread > 0 else np.zeros_like(logit)
    item_share = (y.sum(axis=0) + 0.5) / (answered.sum(axis=0) + 1)
    return theta, np.full(y.shape[1], priors.a_mean), -np.log(item_share / (1 - item_share)) / priors.a_mean


LEARN_PRIORS_FROM = 50  # items: fewer make the item priors' own estimates too noisy
BOOTSTRAP_STEPS = 1


def fit_2pl(y: np.ndarray, w: np.ndarray, priors: Priors = Priors(), max_iter: int = 200,
            tol: float = 1e-4) -> TwoPL:
    """y: models × items, share correct in [0, 1] (anything where w is 0); w: 1 where answered.

    Rounds of (abilities, items, standardise, item priors from the items) until the abilities
    settle; then the items alone (independent given the abilities) until each settles, so a few
    flat ones cost no full rounds. Learning the item priors across items (with `LEARN_PRIORS_FROM`
    items or more) brings recovery to what the true abilities would give (checked in the tests)."""
    learn = y.shape[1] >= LEARN_PRIORS_FROM
    y, mask = _prepared(y, w)
    theta, a, b = _start(y, mask, priors)
    iteration = 0
    for iteration in range(1, max_iter + 1):  # noqa: B007
        new_theta, _ = _theta_step(y, mask, a, b, theta, priors)
        a, b = _item_step(y, mask, new_theta, a, b, priors)
        mean, sd = new_theta.mean(), new_theta.std()
        if sd > 0 and len(new_theta) > 1:
            new_theta, a, b = (new_theta - mean) / sd, a * sd, (b - mean) / sd
        if learn:
            priors = priors.learned(a, b)
        change = float(np.abs(new_theta - theta).max(initial=0))
        theta = new_theta
        if change < tol:
            break
    active = np.arange(y.shape[1])
    for _ in range(max_iter):
        cols = (slice(None), active)
        new_a, new_b = _item_step(y[cols], None if mask is None else mask[cols], theta, a[active], b[active], priors)
        moved = np.maximum(np.abs(new_a - a[active]), np.abs(new_b - b[active])) > tol * 10
        a[active], b[active] = new_a, new_b
        active = active[moved]
        if not len(active):
            break
    theta, information = _theta_step(y, mask, a, b, theta, priors)
    return TwoPL(a, b, theta, 1 / np.sqrt(information), iteration, not len(active), priors)


def bootstrap_items(y: np.ndarray, w: np.ndarray, fit: TwoPL, resamples: int,
                    seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) of each item under `resamples` resamplings of the models, abilities held at the fit's:
    two arrays resamples × items."""
    rng = np.random.default_rng(seed)
    y, mask = _prepared(y, w)
    models = y.shape[0]
    a_draws = np.empty((resamples, y.shape[1]))
    b_draws = np.empty((resamples, y.shape[1]))
    for r in range(resamples):
        rows = rng.integers(0, models, models)
        a, b = fit.a, fit.b
        for _ in range(BOOTSTRAP_STEPS):  # unguarded Newton steps from the full fit's values: a cheap refit
            a, b = _item_step(y[rows], None if mask is None else mask[rows], fit.theta[rows], a, b, fit.priors,
                              safeguard=False)
        a_draws[r], b_draws[r] = a, b
    return a_draws, b_draws
