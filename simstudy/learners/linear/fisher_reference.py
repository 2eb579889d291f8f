"""A plain, per-sample implementation of Nedelko's estimates (slow; for checks and benchmarks).

It computes the same quantities as :class:`simstudy.studies.nedelko_fisher.worker.FisherRiskWorker`
the obvious way: ``np.linalg.solve`` per fit, a refit for every left-out point and fold, and a
brute-force search over all candidate thresholds. The tests prove the batched kernel equal to
it; ``benchmarks/run.py`` measures the speed-up.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Candidate", "reference_candidates", "reference_minimisers", "reference_threshold", "reference_fit",
           "reference_estimates", "ReferenceEstimates"]

TIE_TOL = 1e-9  # errors within TIE_TOL of the smallest are ties, as in the kernel


@dataclass(frozen=True)
class Candidate:
    """One candidate threshold of "predict 1 iff projection > threshold" and its training error."""

    threshold: float
    error: float


def reference_candidates(proj, y, weights=None) -> list[Candidate]:
    """All candidate thresholds in increasing order, each with its weighted training error.

    -inf, the midpoints between consecutive distinct projections of the points of positive
    weight, +inf; the error of each is counted point by point (no running sums).
    """
    proj, y = np.asarray(proj, dtype=float), np.asarray(y)
    weights = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    train = weights > 0
    values = sorted(set(proj[train].tolist()))
    thresholds = [-np.inf] + [(a + b) / 2 for a, b in zip(values[:-1], values[1:])] + [np.inf]
    return [Candidate(t, float(sum(w for p, label, w in zip(proj[train], y[train], weights[train])
                                   if int(p > t) != label)))
            for t in thresholds]


def reference_minimisers(proj, y, weights=None) -> list[Candidate]:
    """The candidates with the smallest training error (within TIE_TOL), in increasing order."""
    cands = reference_candidates(proj, y, weights)
    best = min(c.error for c in cands)
    return [c for c in cands if c.error <= best + TIE_TOL]


def reference_threshold(proj, y, weights=None, prefer: float = 0.0, tie_rule: str = "midpoint",
                        u: float | None = None) -> Candidate:
    """The minimiser chosen by ``tie_rule`` (definitions in :mod:`simstudy.learners.linear.fisher`)."""
    mins = reference_minimisers(proj, y, weights)
    if tie_rule == "first":
        return mins[0]
    if tie_rule == "last":
        return mins[-1]
    if tie_rule == "random":
        return mins[min(int(u * len(mins)), len(mins) - 1)]
    if tie_rule != "midpoint":
        raise ValueError(tie_rule)
    finite = [c for c in mins if np.isfinite(c.threshold)]
    if finite:  # min() keeps the first (lowest) of equally close thresholds
        return min(finite, key=lambda c: abs(c.threshold - prefer))
    return mins[0]  # -inf if it is a minimiser, else +inf


def reference_fit(X: np.ndarray, y: np.ndarray, tie_rule: str = "midpoint",
                  u: float | None = None) -> tuple[np.ndarray, float]:
    """Fisher direction and ERM threshold for one training set (same conventions as the kernel).

    ``u`` in [0, 1) is the uniform of this fit for ``tie_rule="random"``.
    """
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
    chosen = reference_threshold(X @ w, y, None, float(w @ (m1 + m0) / 2), tie_rule, u)
    return w, float(chosen.threshold)


@dataclass(frozen=True)
class ReferenceEstimates:
    """Estimates for one sample, computed by refitting."""

    w: np.ndarray
    c: float
    empirical: float
    loo: float
    kfold: float
    err1: float  # leave-one-out bootstrap error Err(1)


def reference_estimates(X, y, folds, boot, tie_rule: str = "midpoint", uniforms=None) -> ReferenceEstimates:
    """Empirical, leave-one-out, K-fold and Err(1) bootstrap estimates by plain refitting.

    Parameters
    ----------
    X : ndarray (N, 2); y : ndarray (N,)
    folds : ndarray (N,) of fold labels 0..K-1
    boot : ndarray (B, N) of bootstrap counts
    tie_rule : str
        The threshold tie rule (:mod:`simstudy.learners.linear.fisher`).
    uniforms : ndarray (1 + N + K + B,), optional
        For ``tie_rule="random"``: the uniforms of the fits in the study's order (full sample,
        leave-one-out 1..N, folds 0..K-1, bootstrap 1..B).
    """
    N, K = len(y), len(np.unique(folds))
    u = (lambda f: None) if uniforms is None else (lambda f: float(uniforms[f]))  # noqa: E731
    fit = lambda Xt, yt, f: reference_fit(Xt, yt, tie_rule, u(f))  # noqa: E731
    pred = lambda w, c, Z: (Z @ w > c).astype(int)  # noqa: E731
    w, c = fit(X, y, 0)
    emp = float(np.mean(pred(w, c, X) != y))
    loo = float(np.mean([pred(*fit(np.delete(X, i, 0), np.delete(y, i), 1 + i), X[i:i + 1])[0] != y[i]
                         for i in range(N)]))
    kf = 0
    for k in np.unique(folds):
        test = folds == k
        kf += np.sum(pred(*fit(X[~test], y[~test], 1 + N + int(k)), X[test]) != y[test])
    per_point = [[] for _ in range(N)]
    for b, counts in enumerate(boot):
        idx = np.repeat(np.arange(N), counts.astype(int))
        wb, cb = fit(X[idx], y[idx], 1 + N + K + b)
        for i in np.flatnonzero(counts == 0):
            per_point[i].append(pred(wb, cb, X[i:i + 1])[0] != y[i])
    oob = [np.mean(v) for v in per_point if v]
    err1 = float(np.mean(oob)) if oob else float("nan")  # no bootstrap resamples: undefined
    return ReferenceEstimates(w, c, emp, loo, kf / N, err1)
