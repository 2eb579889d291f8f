"""What the nedelko_fisher study records: estimates and exact risks of Fisher's discriminant.

Per replicate (a sample of N points from the model with Bayes error R0), Fisher's
discriminant with an ERM threshold (:mod:`simstudy.learners.fisher`) is trained on the whole
sample; its true risk R is exact (:func:`simstudy.populations.synthetic.linear_rule_risk`).
Estimates of R:

- ``loo``: leave-one-out CV (N exact downdated fits);
- ``kfold``: K-fold CV (one random partition into K equal folds);
- ``empirical``: the empirical risk (resubstitution);
- ``boot632`` and ``boot632plus``: Efron's .632 and .632+ bootstrap (B resamples).

``rhat`` (empirical risk plus a bias correction) is added at aggregation (:mod:`.aggregate`).
All fits of a chunk of samples are computed together.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from simstudy.learners.fisher import fisher_fit, predict_rules
from simstudy.populations.synthetic import LogisticPopulation, linear_rule_risk
from simstudy.rng import condition_key, replicate_rng
from simstudy.runner import Chunk
from simstudy.schemes import KFold

__all__ = ["FisherCondition", "FisherRiskWorker", "OptimismWorker", "bootstrap_632", "make_conditions", "draw"]


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


def draw(cond: FisherCondition, population: LogisticPopulation, seed: int, replicates: range, K: int, B: int):
    N = cond.sample_size
    X = np.empty((len(replicates), N, 2))
    y = np.empty((len(replicates), N), dtype=np.int64)
    folds = np.empty((len(replicates), N), dtype=np.int64)
    boot = np.empty((len(replicates), B, N))
    for j, r in enumerate(replicates):
        rng = replicate_rng(seed, cond.key, r)
        s = population.sample(N, rng)
        X[j], y[j] = s.X, s.y
        if K:
            folds[j] = KFold(K).labels(N, rng)
        if B:
            boot[j] = rng.multinomial(N, np.full(N, 1.0 / N), size=B)
    return X, y, folds, boot


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


@dataclass
class FisherRiskWorker:
    """All estimates for the replicates of one chunk, batched across replicates."""

    conditions: list[FisherCondition]
    seed: int
    K: int = 5
    bootstrap: int = 50

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        N, K, B = cond.sample_size, self.K, self.bootstrap
        population = LogisticPopulation(cond.bayes_error)
        reps = range(chunk.start, chunk.stop)
        X, y, folds, boot = draw(cond, population, self.seed, reps, K, B)
        R = len(reps)
        eye = np.eye(N)
        fold_onehot = (folds[:, None, :] == np.arange(K)[None, :, None]).astype(float)   # (R, K, N)
        weights = np.concatenate([np.ones((R, 1, N)), 1.0 - eye[None].repeat(R, 0),
                                  1.0 - fold_onehot] + ([boot] if B else []), axis=1)
        rules = fisher_fit(X, y, weights)
        pred = predict_rules(rules, X)                                                  # (R, F, N)
        loss = pred != y[:, None, :]
        full = slice(0, 1)
        loo = slice(1, 1 + N)
        kf = slice(1 + N, 1 + N + K)
        bs = slice(1 + N + K, 1 + N + K + B)
        true_risk = linear_rule_risk(rules.w[:, 0], rules.c[:, 0], alpha=population.alpha)
        emp = loss[:, full].mean(axis=(1, 2))
        loo_est = np.diagonal(loss[:, loo], axis1=1, axis2=2).mean(axis=1)
        kfold_est = (loss[:, kf] * fold_onehot).sum(axis=(1, 2)) / N
        frame = pd.DataFrame({
            "sample_size": N, "bayes_error": cond.bayes_error, "condition_key": cond.key,
            "replicate": np.arange(chunk.start, chunk.stop), "true_risk": true_risk,
            "empirical": emp, "loo": loo_est, "kfold": kfold_est,
        })
        if B:  # study.bootstrap = 0 skips the bootstrap estimates
            _, frame["boot632"], frame["boot632plus"] = bootstrap_632(loss[:, bs], boot == 0, emp, y, pred[:, 0])
        frame["error"] = ""
        return frame


@dataclass
class OptimismWorker:
    """Calibration replicates for R_hat: empirical and true risk of the full-sample rule only."""

    conditions: list[FisherCondition]
    seed: int

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        population = LogisticPopulation(cond.bayes_error)
        X, y, _, _ = draw(cond, population, self.seed, range(chunk.start, chunk.stop), 0, 0)
        rules = fisher_fit(X, y, np.ones((X.shape[0], 1, cond.sample_size)))
        emp = (predict_rules(rules, X)[:, 0] != y).mean(axis=1)
        true_risk = linear_rule_risk(rules.w[:, 0], rules.c[:, 0], alpha=population.alpha)
        return pd.DataFrame({"sample_size": cond.sample_size, "bayes_error": cond.bayes_error,
                             "condition_key": cond.key, "replicate": np.arange(chunk.start, chunk.stop),
                             "empirical": emp, "true_risk": true_risk})


def warm_up() -> None:
    """Load the Fisher and exact-risk kernels in a fresh worker (see :mod:`simstudy.warmup`)."""
    X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 2.0], [0.5, -1.0]])
    y = np.array([0, 1, 1, 0])
    rules = fisher_fit(X[None], y[None], np.ones((1, 1, 4)))
    predict_rules(rules, X[None])
    linear_rule_risk(rules.w.reshape(-1, 2), rules.c.reshape(-1), alpha=1.0)
