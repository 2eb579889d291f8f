"""What the nedelko_fisher study records: estimates and exact risks of Fisher's discriminant.

Per replicate (a sample of N points from the model with Bayes error R0), Fisher's
discriminant with an ERM threshold (:mod:`simstudy.learners.linear.fisher`, threshold ties broken by
``study.tie_rule``) is trained on the whole sample; its true risk R is exact
(:func:`simstudy.populations.synthetic.linear_rule_risk`). Estimates of R:

- ``loo``: leave-one-out CV (N exact downdated fits);
- ``kfold``: K-fold CV (one random partition into K equal folds);
- ``empirical``: the empirical risk (resubstitution);
- ``boot632`` and ``boot632plus``: Efron's .632 and .632+ bootstrap (B resamples).

``rhat`` (empirical risk plus a bias correction) is added at aggregation (:mod:`.aggregate`).
``minimisers`` is the number of thresholds with the smallest training error of the
full-sample fit (the tie rule matters only when it is above 1). With
``study.tie_rule_sensitivity`` the same samples are refitted under each listed rule as well:
columns ``<quantity>__<rule>`` (``true_risk``, ``loo``, ``kfold``, ``boot632``,
``boot632plus``; the empirical risk is the same under every rule, ties having equal training
error). All fits of a chunk of samples are computed together, and the directions once for
all rules.

Draw order of replicate r of a condition, from its own generator
``replicate_rng(seed, condition key, r)`` (:func:`draw`):

1. the sample: X (N x 2 standard normals), then the labels (N uniforms);
2. the K-fold labels (a permutation), when K > 0;
3. the B bootstrap count vectors (one multinomial call), when B > 0;
4. when a rule in use is ``"random"``: the tie-rule uniforms, one ``rng.random(F)`` for the F
   fits in the order full sample, leave-one-out 1..N, folds 1..K, bootstrap 1..B
   (F = 1 + N + K + B; F = 1 for the R_hat calibration, which fits the full sample only;
   see :func:`simstudy.learners.linear.threshold.tie_uniforms`).

The uniforms come last, so the samples, folds and bootstrap counts are the same under every
tie rule (the rules are compared on the same samples).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from simstudy.cv.splits import KFold
from simstudy.learners.linear.fisher import FisherDirections, LinearRules, fisher_directions
from simstudy.learners.linear.threshold import tie_uniforms
from simstudy.populations.base import Population
from simstudy.populations.synthetic import LogisticPopulation, linear_rule_risk
from simstudy.rng import condition_key, replicate_rng
from simstudy.studies.base import Chunk
from simstudy.populations.checks import draw_sample

__all__ = ["FisherCondition", "FisherDraws", "FisherRiskWorker", "OptimismWorker", "SENSITIVITY_COLUMNS",
           "bootstrap_632", "make_conditions", "draw", "fit_weights", "rule_estimates"]

#: Per-rule columns of ``study.tie_rule_sensitivity`` (``<name>__<rule>``).
SENSITIVITY_COLUMNS = ("true_risk", "loo", "kfold", "boot632", "boot632plus")


@dataclass(frozen=True)
class FisherCondition:
    """Sample size N and Bayes error R0 of one cell of the design."""

    sample_size: int
    bayes_error: float
    key: str
    purpose: str = "study"

    def label(self) -> str:
        return f"N={self.sample_size}, R0={self.bayes_error:g}"

    def selection(self) -> str:
        grid = "study.rhat_grid" if self.purpose == "rhat_calibration" else "study.bayes_error"
        return f"study.sample_size={self.sample_size} {grid}=[{self.bayes_error:g}]"


def make_conditions(sample_sizes: Sequence[int], bayes_errors: Sequence[float], purpose: str = "study"):
    """Conditions for every (N, R0); ``purpose`` separates the R_hat calibration streams."""
    return [FisherCondition(int(N), float(r0), condition_key({"study": "nedelko_fisher", "purpose": purpose,
                                                               "N": int(N), "bayes_error": float(r0)}), purpose)
            for N in sample_sizes for r0 in bayes_errors]


@dataclass(frozen=True)
class FisherDraws:
    """Everything drawn for a batch of replicates of one condition (module docstring).

    Attributes
    ----------
    X : ndarray (R, N, 2); y : ndarray (R, N)
    folds : ndarray (R, N)
        Fold labels 0..K-1 (zeros when K = 0).
    boot : ndarray (R, B, N)
        Bootstrap counts.
    uniforms : ndarray (R, F) or None
        The tie-rule uniforms of the F fits of :func:`fit_weights` (None when not drawn).
    K : int
    """

    X: np.ndarray
    y: np.ndarray
    folds: np.ndarray
    boot: np.ndarray
    uniforms: np.ndarray | None
    K: int

    @property
    def fold_onehot(self) -> np.ndarray:
        """(R, K, N): point i is in fold k."""
        return (self.folds[:, None, :] == np.arange(self.K)[None, :, None]).astype(float)


def draw(N: int, key: str, population: Population, seed: int, replicates: range, K: int, B: int,
         uniforms: bool = False) -> FisherDraws:
    """Draw replicates ``replicates`` of the condition with key ``key`` in the documented order.

    ``uniforms``: also draw the tie-rule uniforms (step 4 of the module docstring).
    """
    R = len(replicates)
    X = np.empty((R, N, 2))
    y = np.empty((R, N), dtype=np.int64)
    folds = np.zeros((R, N), dtype=np.int64)
    boot = np.empty((R, B, N))
    u = np.empty((R, 1 + (N + K if K else 0) + B)) if uniforms else None   # one per fit of fit_weights
    for j, r in enumerate(replicates):
        rng = replicate_rng(seed, key, r)
        s = draw_sample(population, N, rng)
        X[j], y[j] = s.X, s.y
        if K:
            folds[j] = KFold(K).labels(N, rng)
        if B:
            boot[j] = rng.multinomial(N, np.full(N, 1.0 / N), size=B)
        if uniforms:
            u[j] = tie_uniforms(rng, u.shape[1], "random")
    return FisherDraws(X, y, folds, boot, u, K)


def fit_weights(draws: FisherDraws) -> np.ndarray:
    """Point weights (R, F, N) of the fits in the documented order: the full sample, then (when
    K > 0) the N leave-one-out and the K fold training sets, then the B bootstrap samples."""
    R, N = draws.y.shape
    parts = [np.ones((R, 1, N))]
    if draws.K:
        parts += [1.0 - np.eye(N)[None].repeat(R, 0), 1.0 - draws.fold_onehot]
    if draws.boot.shape[1]:
        parts.append(draws.boot)
    return np.concatenate(parts, axis=1)


def bootstrap_632(errors_oob: np.ndarray, oob: np.ndarray, emp: np.ndarray, y: np.ndarray, pred_full: np.ndarray):
    """Efron & Tibshirani (1997) .632 and .632+ estimates.

    Parameters
    ----------
    errors_oob : ndarray (R, B, N)
        Loss of the b-th bootstrap rule on point i.
    oob : ndarray of bool (R, B, N)
        Point i is out of bootstrap sample b.
    emp : ndarray (R,)
        Empirical risk (resubstitution error) of the full-sample rule.
    y, pred_full : ndarray (R, N)
        Labels and the full-sample rule's predictions (for the no-information rate).

    Returns
    -------
    err1, e632, e632plus : ndarray (R,)
        Leave-one-out bootstrap error Err(1) (mean over points that are out of at least one
        resample of their mean out-of-bag loss), .632 and .632+ estimates.
    """
    n_oob = oob.sum(axis=1)                                   # (R, N)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_point = (errors_oob * oob).sum(axis=1) / n_oob
    err1 = np.nanmean(np.where(n_oob > 0, per_point, np.nan), axis=1)
    e632 = 0.368 * emp + 0.632 * err1
    p1 = y.mean(axis=1)
    q1 = pred_full.mean(axis=1)
    gamma = p1 * (1 - q1) + (1 - p1) * q1                     # no-information error rate
    err1_prime = np.minimum(err1, gamma)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where((err1_prime > emp) & (gamma > emp), (err1_prime - emp) / (gamma - emp), 0.0)
    rel = np.clip(rel, 0.0, 1.0)                              # relative overfitting rate R'
    weight = 0.632 / (1 - 0.368 * rel)
    e632plus = (1 - weight) * emp + weight * err1_prime
    return err1, e632, e632plus


def rule_estimates(directions: FisherDirections, rules: LinearRules, draws: FisherDraws, alpha: float,
                   bootstrap: int) -> dict[str, np.ndarray]:
    """True risk and estimates (arrays of length R) of ``rules``, the fits of ``directions`` under
    one tie rule.

    The fits are in the order of :func:`fit_weights` with K = ``draws.K`` folds and ``bootstrap``
    resamples; without folds only ``true_risk`` and ``empirical`` are returned.
    """
    R, N = draws.y.shape
    K, B = draws.K, bootstrap
    pred = directions.sample_predictions(rules)                                      # (R, F, N)
    loss = pred != draws.y[:, None, :]
    out = {"true_risk": linear_rule_risk(rules.w[:, 0], rules.c[:, 0], alpha=alpha),
           "empirical": loss[:, slice(0, 1)].mean(axis=(1, 2))}
    if K:
        out["loo"] = np.diagonal(loss[:, 1:1 + N], axis1=1, axis2=2).mean(axis=1)
        out["kfold"] = (loss[:, 1 + N:1 + N + K] * draws.fold_onehot).sum(axis=(1, 2)) / N
    if B:  # study.bootstrap = 0 skips the bootstrap estimates
        bs = slice(1 + N + K, 1 + N + K + B)
        _, out["boot632"], out["boot632plus"] = bootstrap_632(loss[:, bs], draws.boot == 0, out["empirical"],
                                                              draws.y, pred[:, 0])
    return out


@dataclass
class FisherRiskWorker:
    """All estimates for the replicates of one chunk, batched across replicates.

    ``tie_rule`` is the study's rule; each rule of ``sensitivity`` adds the columns
    ``<quantity>__<rule>`` computed on the same samples (module docstring).
    """

    conditions: list[FisherCondition]
    seed: int
    K: int = 5
    bootstrap: int = 50
    tie_rule: str = "midpoint"
    sensitivity: tuple[str, ...] = ()

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        N, K, B = cond.sample_size, self.K, self.bootstrap
        population = LogisticPopulation(cond.bayes_error)
        rules = (self.tie_rule, *self.sensitivity)
        draws = draw(N, cond.key, population, self.seed, range(chunk.start, chunk.stop), K, B,
                      uniforms="random" in rules)
        directions = fisher_directions(draws.X, draws.y, fit_weights(draws))
        fitted = directions.rules_by_tie_rule(rules, draws.uniforms)   # one sort of the candidates for all rules
        main = rule_estimates(directions, fitted[self.tie_rule], draws, population.alpha, B)
        frame = pd.DataFrame({
            "sample_size": N, "bayes_error": cond.bayes_error, "condition_key": cond.key,
            "replicate": np.arange(chunk.start, chunk.stop), "true_risk": main["true_risk"],
            "empirical": main["empirical"], "loo": main["loo"], "kfold": main["kfold"],
        })
        if B:
            frame["boot632"], frame["boot632plus"] = main["boot632"], main["boot632plus"]
        frame["minimisers"] = directions.minimisers(slice(0, 1))[:, 0]
        for rule in self.sensitivity:
            other = rule_estimates(directions, fitted[rule], draws, population.alpha, B)
            for name in SENSITIVITY_COLUMNS:
                if name in other:
                    frame[f"{name}__{rule}"] = other[name]
        frame["error"] = ""
        return frame


@dataclass
class OptimismWorker:
    """Calibration replicates for the oracle R_hat: empirical and true risk of the full-sample rule."""

    conditions: list[FisherCondition]
    seed: int
    tie_rule: str = "midpoint"

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        population = LogisticPopulation(cond.bayes_error)
        draws = draw(cond.sample_size, cond.key, population, self.seed, range(chunk.start, chunk.stop), 0, 0,
                     uniforms=self.tie_rule == "random")
        directions = fisher_directions(draws.X, draws.y, fit_weights(draws))
        est = rule_estimates(directions, directions.rules(self.tie_rule, draws.uniforms), draws, population.alpha, 0)
        return pd.DataFrame({"sample_size": cond.sample_size, "bayes_error": cond.bayes_error,
                             "condition_key": cond.key, "replicate": np.arange(chunk.start, chunk.stop),
                             "empirical": est["empirical"], "true_risk": est["true_risk"]})
