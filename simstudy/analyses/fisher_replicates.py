"""The study's replicates of Nedelko's Fisher experiment, with the tie-rule uniforms.

Per replicate r of condition (N, R0) the study's generator ``replicate_rng(seed, key, r)``
draws, in this order (the order of ``simstudy.studies.nedelko_fisher.worker.draw``):

1. the sample: X (N x 2 standard normals), then the labels (N uniforms);
2. the K-fold labels (a permutation), when K > 0;
3. the B bootstrap count vectors (one multinomial call), when B > 0;
4. the tie-rule uniforms, only for ``tie_rule="random"``: one ``rng.random(F)`` for the
   F fits in the worker's order (F = 1 + N + K + B: full sample, leave-one-out 1..N,
   folds 1..K, bootstrap 1..B; F = 1 for the R_hat calibration, which fits the full sample
   only); see :func:`simstudy.learners.fisher.tie_uniforms`.

Steps 1-3 are the study's existing streams, so the samples here are the study's samples and
the other tie rules draw exactly what the study draws today.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from simstudy.learners.fisher import fisher_fit, predict_rules, tie_uniforms
from simstudy.populations.base import Population
from simstudy.populations.synthetic import LogisticPopulation, linear_rule_risk
from simstudy.rng import condition_key, replicate_rng
from simstudy.schemes import KFold

__all__ = ["FisherReplicates", "FisherEstimates", "study_key", "draw_replicates", "logistic_replicates",
           "fit_estimates", "logistic_risk"]


@dataclass(frozen=True)
class FisherReplicates:
    """Samples of one condition and everything drawn for their fits."""

    X: np.ndarray             # (R, N, 2)
    y: np.ndarray             # (R, N)
    folds: np.ndarray         # (R, N) fold labels (zeros when K = 0)
    boot: np.ndarray          # (R, B, N) bootstrap counts
    uniforms: np.ndarray | None  # (R, F) tie-rule uniforms, None unless tie_rule="random"
    K: int


@dataclass(frozen=True)
class FisherEstimates:
    """Per-sample true risk and estimates of the full-sample rule (arrays of length R)."""

    true_risk: np.ndarray
    empirical: np.ndarray
    loo: np.ndarray
    kfold: np.ndarray
    w: np.ndarray             # (R, 2) full-sample direction
    c: np.ndarray             # (R,) full-sample threshold


def study_key(N: int, bayes_error: float, purpose: str = "study") -> str:
    """The condition key of the Nedelko Fisher study (``make_conditions`` of the study)."""
    return condition_key({"study": "nedelko_fisher", "purpose": purpose, "N": int(N),
                          "bayes_error": float(bayes_error)})


def draw_replicates(population: Population, N: int, key: str, seed: int, replicates: range, K: int = 5,
                    B: int = 50, tie_rule: str = "random", fits: int | None = None) -> FisherReplicates:
    """Draw the replicates of one condition in the documented order (module docstring).

    ``fits`` is F, the number of uniforms per replicate (default 1 + N + K + B).
    """
    R = len(replicates)
    F = 1 + N + K + B if fits is None else int(fits)
    X, y = np.empty((R, N, 2)), np.empty((R, N), dtype=np.int64)
    folds, boot = np.zeros((R, N), dtype=np.int64), np.empty((R, B, N))
    uniforms = np.empty((R, F)) if tie_rule == "random" else None
    for j, r in enumerate(replicates):
        rng = replicate_rng(seed, key, r)
        s = population.sample(N, rng)
        X[j], y[j] = s.X, s.y
        if K:
            folds[j] = KFold(K).labels(N, rng)
        if B:
            boot[j] = rng.multinomial(N, np.full(N, 1.0 / N), size=B)
        u = tie_uniforms(rng, F, tie_rule)
        if uniforms is not None:
            uniforms[j] = u
    return FisherReplicates(X, y, folds, boot, uniforms, K)


def logistic_replicates(N: int, bayes_error: float, seed: int, replicates: range, K: int = 5, B: int = 50,
                        tie_rule: str = "random", purpose: str = "study", fits: int | None = None) -> FisherReplicates:
    """:func:`draw_replicates` for the study's logistic model and condition key."""
    return draw_replicates(LogisticPopulation(bayes_error), N, study_key(N, bayes_error, purpose), seed, replicates,
                           K, B, tie_rule, fits)


def logistic_risk(bayes_error: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The exact risk (w, c) -> R of linear rules in the logistic model with Bayes error R0."""
    alpha = LogisticPopulation(bayes_error).alpha
    return lambda w, c: linear_rule_risk(w, c, alpha=alpha)


def fit_estimates(rep: FisherReplicates, tie_rule: str, risk: Callable, loo: bool = True) -> FisherEstimates:
    """Fit the full sample, and with ``loo`` the N leave-one-out and K fold training sets.

    Fit f uses the uniform ``rep.uniforms[:, f]`` in the documented fit order.
    """
    R, N = rep.y.shape
    K = rep.K if loo else 0
    test = (rep.folds[:, None, :] == np.arange(K)[None, :, None]).astype(float)         # (R, K, N)
    parts = [np.ones((R, 1, N))] + ([1.0 - np.eye(N)[None].repeat(R, 0), 1.0 - test] if loo else [])
    W = np.concatenate(parts, axis=1)
    u = None if rep.uniforms is None else rep.uniforms[:, :W.shape[1]]
    rules = fisher_fit(rep.X, rep.y, W, tie_rule, u)
    loss = predict_rules(rules, rep.X) != rep.y[:, None, :]
    nan = np.full(R, np.nan)
    return FisherEstimates(
        true_risk=risk(rules.w[:, 0], rules.c[:, 0]),
        empirical=loss[:, 0].mean(axis=1),
        loo=np.diagonal(loss[:, 1:1 + N], axis1=1, axis2=2).mean(axis=1) if loo else nan,
        kfold=(loss[:, 1 + N:] * test).sum(axis=(1, 2)) / N if loo else nan,
        w=rules.w[:, 0], c=rules.c[:, 0])
