"""Exact expectations of the histogram classifier's risk estimates (Nedelko's Figure 4).

A discrete space of C cells and classes {0, 1}; a distribution p over the 2C types
(cell, class). Samples of size N are enumerated as multinomial count vectors n; for each,
the trained cell-majority rule (:mod:`simstudy.learners.histogram`) has true risk M(n) . p,
empirical risk and leave-one-out estimate as functions of n, and a K-fold estimate whose
distribution over uniformly random fold assignments comes from an exact dynamic program.
Every expectation below is a finite sum: nothing is simulated.

For each distribution of the grid (all p with coordinates in {0, h, 2h, ..., 1}) we report
the expected true risk, the expected value of each estimate, and the expected error
functions Delta (:mod:`simstudy.inference.error_functions`) of each estimate.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from simstudy.inference.error_functions import ERROR_FUNCTIONS
from simstudy.learners.histogram import (
    compositions, empirical_risk, kfold_error_distribution, kfold_loss_distribution, loo_estimate, misclassified_types,
)
from simstudy.studies.nedelko_histogram import libm

__all__ = ["ESTIMATORS", "SampleTables", "sample_tables", "simplex_grid", "sample_probabilities",
           "exact_expectations"]
ESTIMATORS = ("loo", "kfold", "empirical")


@dataclass(frozen=True)
class SampleTables:
    """Everything about the samples of size N that does not depend on the distribution."""

    counts: np.ndarray         # (S, T) count vectors
    misclassified: np.ndarray  # (S, T) loss of the trained rule on each type (1/2: a coin-decided cell)
    empirical: np.ndarray      # (S,)
    loo: np.ndarray            # (S,)
    kfold_values: np.ndarray   # (V,) possible K-fold estimates: e / N, or e / (2N) for the coin rule
    kfold: np.ndarray          # (S, V) their probabilities over uniformly random fold assignments
    log_coef: np.ndarray       # (S,) log multinomial coefficient N! / prod n_t!
    K: int
    tie: str = "overall"

    @property
    def N(self) -> int:
        return int(self.counts[0].sum())


def sample_tables(cells: int, N: int, K: int, tie: str = "overall") -> SampleTables:
    """Enumerate the count vectors of samples of size N and their distribution-free quantities
    for the classifier with tie rule ``tie`` (:mod:`simstudy.learners.histogram`)."""
    counts = compositions(N, 2 * cells)
    mis = np.array([misclassified_types(n, tie) for n in counts])
    emp = np.array([empirical_risk(n, tie) for n in counts])
    loo = np.array([loo_estimate(n, tie) for n in counts])
    if tie == "coin":   # half errors: estimates on the grid e / (2N)
        kf = np.array([kfold_loss_distribution(n, K, tie).probabilities for n in counts])
        values = np.arange(2 * N + 1) / (2 * N)
    else:
        kf = np.array([kfold_error_distribution(n, K, tie) for n in counts])
        values = np.arange(N + 1) / N
    log_coef = special.gammaln(N + 1) - special.gammaln(counts + 1).sum(axis=1)
    return SampleTables(counts, mis, emp, loo, values, kf, log_coef, K, tie)


def simplex_grid(dimension: int, steps: int) -> np.ndarray:
    """All probability vectors of length ``dimension`` with coordinates in {0, 1/steps, ..., 1}."""
    return compositions(steps, dimension) / steps


def sample_probabilities(tables: SampleTables, p: np.ndarray) -> np.ndarray:
    """Multinomial probabilities of every count vector under each distribution p (G, T) -> (G, S)."""
    # the C library's log and exp: the same bits on every CPU (NumPy's differ on AVX-512 ones)
    logp = libm.log(p)
    # 0 * log 0 = 0: a type of probability 0 contributes only when its count is 0
    with np.errstate(invalid="ignore"):
        term = np.where(tables.counts[None, :, :] == 0, 0.0, tables.counts[None, :, :] * logp[:, None, :])
    return libm.exp(tables.log_coef[None, :] + term.sum(axis=-1))


def exact_expectations(tables: SampleTables, p: np.ndarray) -> pd.DataFrame:
    """Exact expected true risk, estimates and error functions for each distribution.

    Parameters
    ----------
    tables : SampleTables
    p : ndarray, shape (G, 2C)
        Distributions over types t = 2 * cell + class.

    Returns
    -------
    DataFrame, one row per (distribution, estimator).
    """
    p = np.atleast_2d(p)
    prob = sample_probabilities(tables, p)                       # (G, S)
    risk = p @ tables.misclassified.T                            # (G, S): true risk of each sample's rule
    e_grid = tables.kfold_values
    rows = []
    bayes = np.minimum(p[:, 0::2], p[:, 1::2]).sum(axis=1)
    for g in range(p.shape[0]):
        w, R = prob[g], risk[g]
        base = {"distribution": g, **{f"p{t // 2}_{t % 2}": p[g, t] for t in range(p.shape[1])},
                "bayes_error": bayes[g], "mean_true_risk": float(w @ R), "total_probability": float(w.sum())}
        for est in ESTIMATORS:
            row = dict(base, estimator=est)
            if est == "kfold":
                joint = w[:, None] * tables.kfold                # (S, N+1)
                row["mean_estimate"] = float(joint.sum(0) @ e_grid)
                for name, fn in ERROR_FUNCTIONS.items():
                    d = fn(np.broadcast_to(e_grid, joint.shape), np.broadcast_to(R[:, None], joint.shape))
                    row[f"mean_{name}"] = _expect(joint, d)
            else:
                values = tables.loo if est == "loo" else tables.empirical
                row["mean_estimate"] = float(w @ values)
                for name, fn in ERROR_FUNCTIONS.items():
                    row[f"mean_{name}"] = _expect(w, fn(values, R))
            row["bias"] = row["mean_estimate"] - row["mean_true_risk"]
            rows.append(row)
    return pd.DataFrame(rows)


def _expect(weights: np.ndarray, values: np.ndarray) -> float:
    """sum(weights * values) with 0 * inf = 0 (impossible samples do not count)."""
    mask = weights > 0
    return float(np.sum(weights[mask] * values[mask]))
