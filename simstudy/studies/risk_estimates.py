"""Nedelko: accuracy of risk estimates for Fisher's discriminant on the 2-D logistic model.

Per replicate (a sample of N points from the model with Bayes error R0), Fisher's
discriminant with an ERM threshold (:mod:`simstudy.learners.fisher`) is trained on the whole
sample; its true risk R is exact (:func:`linear_rule_risk`). Estimates of R:

- ``loo``: leave-one-out CV (N exact downdated fits);
- ``kfold``: K-fold CV (one random partition into K equal folds);
- ``empirical``: the empirical risk (resubstitution);
- ``rhat``: empirical risk plus the maximal mean optimism b(R_emp) over the family (see
  :func:`optimism_table`);
- ``boot632`` and ``boot632plus``: Efron's .632 and .632+ bootstrap (B resamples).

Each estimate is compared with R by the error functions of
:mod:`simstudy.inference.error_functions`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from simstudy.inference.error_functions import ERROR_FUNCTIONS
from simstudy.learners.fisher import fisher_fit, predict_rules
from simstudy.metrics import mean_summary
from simstudy.populations.synthetic import LogisticPopulation, linear_rule_risk
from simstudy.rng import condition_key, replicate_rng
from simstudy.runner import Chunk
from simstudy.schemes import KFold

__all__ = ["ESTIMATORS", "FisherCondition", "FisherRiskWorker", "OptimismWorker", "make_conditions",
           "optimism_table", "apply_rhat", "aggregate", "bootstrap_632"]

ESTIMATORS = ("loo", "kfold", "empirical", "rhat", "boot632", "boot632plus")


@dataclass(frozen=True)
class FisherCondition:
    """Sample size N and Bayes error R0 of one cell of the design."""

    sample_size: int
    bayes_error: float
    key: str


def make_conditions(sample_sizes: Sequence[int], bayes_errors: Sequence[float], purpose: str = "study"):
    """Conditions for every (N, R0); ``purpose`` separates the R_hat calibration streams."""
    return [FisherCondition(int(N), float(r0), condition_key({"study": "nedelko_fisher", "purpose": purpose,
                                                               "N": int(N), "bayes_error": float(r0)}))
            for N in sample_sizes for r0 in bayes_errors]


def _draw(cond: FisherCondition, population: LogisticPopulation, seed: int, replicates: range, K: int, B: int):
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
        X, y, folds, boot = _draw(cond, population, self.seed, reps, K, B)
        R = len(reps)
        eye = np.eye(N)
        fold_onehot = (folds[:, None, :] == np.arange(K)[None, :, None]).astype(float)   # (R, K, N)
        weights = np.concatenate([np.ones((R, 1, N)), 1.0 - eye[None].repeat(R, 0),
                                  1.0 - fold_onehot, boot], axis=1)
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
        _, e632, e632plus = bootstrap_632(loss[:, bs], boot == 0, emp, y, pred[:, 0])
        return pd.DataFrame({
            "sample_size": N, "bayes_error": cond.bayes_error, "condition_key": cond.key,
            "replicate": np.arange(chunk.start, chunk.stop), "true_risk": true_risk,
            "empirical": emp, "loo": loo_est, "kfold": kfold_est, "boot632": e632, "boot632plus": e632plus,
            "error": "",
        })


@dataclass
class OptimismWorker:
    """Calibration replicates for R_hat: empirical and true risk of the full-sample rule only."""

    conditions: list[FisherCondition]
    seed: int

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        population = LogisticPopulation(cond.bayes_error)
        X, y, _, _ = _draw(cond, population, self.seed, range(chunk.start, chunk.stop), 0, 0)
        rules = fisher_fit(X, y, np.ones((X.shape[0], 1, cond.sample_size)))
        emp = (predict_rules(rules, X)[:, 0] != y).mean(axis=1)
        true_risk = linear_rule_risk(rules.w[:, 0], rules.c[:, 0], alpha=population.alpha)
        return pd.DataFrame({"sample_size": cond.sample_size, "bayes_error": cond.bayes_error,
                             "empirical": emp, "true_risk": true_risk})


def optimism_table(calibration: pd.DataFrame, min_count: int = 30) -> pd.DataFrame:
    """Maximal mean optimism b(k / N) = max over R0 of E[R - R_emp | R_emp = k / N].

    Nedelko's R_hat adds to the empirical risk an estimate of its maximal bias (his refs. 6-7,
    not available). Our documented version: on calibration samples drawn over a grid of R0
    (the distribution family) at the same N, group by the empirical risk (k errors out of N),
    take the mean optimism R - R_emp within each (R0, k) cell holding at least ``min_count``
    samples, and keep the largest over R0. Values of k with no such cell take the value of the
    nearest k that has one.

    Returns
    -------
    DataFrame with columns sample_size, errors (k), empirical_risk, bias, from_bayes_error, cells.
    """
    rows = []
    for N, g in calibration.groupby("sample_size"):
        k = np.rint(g["empirical"] * N).astype(int)
        cells = (g.assign(k=k, optimism=g["true_risk"] - g["empirical"])
                 .groupby(["k", "bayes_error"])["optimism"].agg(["mean", "count"]).reset_index())
        cells = cells[cells["count"] >= min_count]
        best = cells.loc[cells.groupby("k")["mean"].idxmax()].set_index("k")
        known = best.index.to_numpy()
        for kk in range(N + 1):
            src = known[np.argmin(np.abs(known - kk))]
            rows.append({"sample_size": N, "errors": kk, "empirical_risk": kk / N,
                         "bias": float(best.loc[src, "mean"]), "from_bayes_error": float(best.loc[src, "bayes_error"]),
                         "from_errors": int(src), "cells": int((cells["k"] == kk).sum())})
    return pd.DataFrame(rows)


def apply_rhat(records: pd.DataFrame, table: pd.DataFrame) -> pd.Series:
    """R_hat = R_emp + b(R_emp), clipped to [0, 1]."""
    lookup = {(int(r.sample_size), int(r.errors)): r.bias for r in table.itertuples()}
    k = np.rint(records["empirical"] * records["sample_size"]).astype(int)
    bias = [lookup[(int(N), int(kk))] for N, kk in zip(records["sample_size"], k)]
    return np.clip(records["empirical"] + np.asarray(bias), 0.0, 1.0)


def aggregate(records: pd.DataFrame) -> pd.DataFrame:
    """One row per (N, R0, estimator): means, bias, RMSE and mean error functions with MC SEs."""
    rows = []
    for (N, r0), g in records.groupby(["sample_size", "bayes_error"], sort=True):
        ok = g[g["error"] == ""]
        truth = ok["true_risk"].to_numpy()
        tr = mean_summary(truth)
        for est in ESTIMATORS:
            if est not in ok:
                continue
            e = ok[est].to_numpy()
            diff = mean_summary(e - truth)
            sq = mean_summary((e - truth) ** 2)
            row = {"sample_size": N, "bayes_error": r0, "estimator": est, "replicates": len(ok),
                   "failed": len(g) - len(ok), "mean_estimate": e.mean(), "mean_estimate_se": mean_summary(e).se,
                   "mean_true_risk": tr.mean, "mean_true_risk_se": tr.se, "bias": diff.mean, "bias_se": diff.se,
                   "rmse": np.sqrt(sq.mean), "rmse_se": sq.se / (2 * np.sqrt(sq.mean)) if sq.mean > 0 else np.nan}
            for name, fn in ERROR_FUNCTIONS.items():
                d = fn(np.clip(e, 0, 1), truth)
                finite = np.isfinite(d)
                row[f"mean_{name}"] = d.mean() if finite.all() else np.inf
                row[f"mean_{name}_se"] = mean_summary(d).se if finite.all() else np.nan
                row[f"infinite_{name}"] = int((~finite).sum())
            rows.append(row)
    return pd.DataFrame(rows)
