"""A plain, per-sample implementation of Nedelko's estimates (slow; for checks and benchmarks).

It computes the same quantities as :class:`simstudy.studies.nedelko_fisher.worker.FisherRiskWorker`
the obvious way: ``np.linalg.solve`` per fit, a refit for every left-out point and fold, and a
brute-force search over all candidate thresholds. The tests prove the batched kernel equal to
it; ``benchmarks/run.py`` measures the speed-up.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["reference_fit", "reference_estimates", "ReferenceEstimates"]


def reference_fit(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Fisher direction and ERM threshold for one training set (same conventions as the kernel)."""
    if np.all(y == 1):
        return np.zeros(X.shape[1]), -np.inf
    if np.all(y == 0):
        return np.zeros(X.shape[1]), np.inf
    m1, m0 = X[y == 1].mean(0), X[y == 0].mean(0)
    S = sum(((X[y == c] - m).T @ (X[y == c] - m)) / np.sum(y == c) for c, m in ((1, m1), (0, m0)))
    d = m1 - m0
    if abs(np.linalg.det(S)) > 1e-12:
        w = np.linalg.solve(S, d)
    else:  # the adjugate limit of the kernel (2-D)
        w = np.array([[S[1, 1], -S[0, 1]], [-S[1, 0], S[0, 0]]]) @ d
        if np.linalg.norm(w) < 1e-12:
            w = d
    p = X @ w
    u = np.unique(p)
    candidates = np.concatenate([[-np.inf], (u[:-1] + u[1:]) / 2, [np.inf]])
    errors = np.array([np.sum((p > c).astype(int) != y) for c in candidates])
    best = errors.min()
    finite = [c for c, e in zip(candidates, errors) if e == best and np.isfinite(c)]
    mid = w @ (m1 + m0) / 2
    if finite:
        return w, float(min(finite, key=lambda t: abs(t - mid)))
    return w, (-np.inf if errors[0] == best else np.inf)


@dataclass(frozen=True)
class ReferenceEstimates:
    """Estimates for one sample, computed by refitting."""

    w: np.ndarray
    c: float
    empirical: float
    loo: float
    kfold: float
    err1: float  # leave-one-out bootstrap error Err(1)


def reference_estimates(X, y, folds, boot) -> ReferenceEstimates:
    """Empirical, leave-one-out, K-fold and Err(1) bootstrap estimates by plain refitting.

    Parameters
    ----------
    X : ndarray (N, 2); y : ndarray (N,)
    folds : ndarray (N,) of fold labels 0..K-1
    boot : ndarray (B, N) of bootstrap counts
    """
    N = len(y)
    pred = lambda w, c, Z: (Z @ w > c).astype(int)  # noqa: E731
    w, c = reference_fit(X, y)
    emp = float(np.mean(pred(w, c, X) != y))
    loo = float(np.mean([pred(*reference_fit(np.delete(X, i, 0), np.delete(y, i)), X[i:i + 1])[0] != y[i]
                         for i in range(N)]))
    kf = 0
    for k in np.unique(folds):
        test = folds == k
        kf += np.sum(pred(*reference_fit(X[~test], y[~test]), X[test]) != y[test])
    per_point = [[] for _ in range(N)]
    for counts in boot:
        idx = np.repeat(np.arange(N), counts.astype(int))
        wb, cb = reference_fit(X[idx], y[idx])
        for i in np.flatnonzero(counts == 0):
            per_point[i].append(pred(wb, cb, X[i:i + 1])[0] != y[i])
    oob = [np.mean(v) for v in per_point if v]
    err1 = float(np.mean(oob)) if oob else float("nan")  # no bootstrap resamples: undefined
    return ReferenceEstimates(w, c, emp, loo, kf / N, err1)
