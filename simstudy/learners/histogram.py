"""The histogram (cell-majority) classifier on a finite space, computed exactly from counts.

The space has C cells; a labelled example is a type t = (cell j, class y), t = 2 j + y. A
training sample is summarised by its count vector n (length 2C).

Rule: each cell predicts its majority class. Ties, including empty cells, go to the
majority class of the whole training sample; if that ties too, to class 0.
"""
from __future__ import annotations

import math
from itertools import combinations_with_replacement

import numba
import numpy as np

__all__ = ["compositions", "predict_cells", "misclassified_types", "empirical_risk", "loo_estimate",
           "kfold_error_distribution"]


def compositions(total: int, parts: int) -> np.ndarray:
    """All vectors of ``parts`` non-negative integers summing to ``total`` (lexicographic order)."""
    rows = []
    for combo in combinations_with_replacement(range(parts), total):
        rows.append(np.bincount(np.array(combo, dtype=int), minlength=parts))
    if total == 0:
        rows = [np.zeros(parts, dtype=int)]
    out = np.array(rows, dtype=np.int64)
    return out[np.lexsort(out.T[::-1])]


@numba.njit(cache=True)
def _predict(counts):
    C = counts.shape[0] // 2
    ones = 0
    zeros = 0
    for j in range(C):
        zeros += counts[2 * j]
        ones += counts[2 * j + 1]
    overall = 1 if ones > zeros else 0
    pred = np.empty(C, dtype=np.int64)
    for j in range(C):
        if counts[2 * j + 1] > counts[2 * j]:
            pred[j] = 1
        elif counts[2 * j + 1] < counts[2 * j]:
            pred[j] = 0
        else:
            pred[j] = overall
    return pred


def predict_cells(counts) -> np.ndarray:
    """Predicted class of each cell for a training count vector (see module docstring)."""
    return _predict(np.asarray(counts, dtype=np.int64))


def misclassified_types(counts) -> np.ndarray:
    """0/1 vector over types: 1 where the trained rule errs on that type (true risk = M . p)."""
    pred = predict_cells(counts)
    C = pred.shape[0]
    out = np.zeros(2 * C, dtype=np.int64)
    out[2 * np.arange(C) + (1 - pred)] = 1
    return out


def empirical_risk(counts) -> float:
    """Resubstitution error of the rule trained on the counts."""
    counts = np.asarray(counts)
    return float(misclassified_types(counts) @ counts) / counts.sum()


@numba.njit(cache=True)
def _errors_on(test, train):
    pred = _predict(train)
    e = 0
    for j in range(pred.shape[0]):
        e += test[2 * j + 1 - pred[j]]
    return e


def loo_estimate(counts) -> float:
    """Leave-one-out estimate: each example is predicted by the rule trained without it."""
    counts = np.asarray(counts, dtype=np.int64)
    errors = 0
    for t in np.flatnonzero(counts):
        one = np.zeros_like(counts)
        one[t] = 1
        errors += counts[t] * _errors_on(one, counts - one)
    return errors / counts.sum()


@numba.njit(cache=True)
def _log_choose(n, k):
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


@numba.njit(cache=True)
def _kfold_dp(n, K, fold_compositions, out):
    T = n.shape[0]
    N = 0
    for t in range(T):
        N += n[t]
    m = N // K
    strides = np.empty(T, dtype=np.int64)
    size = 1
    for t in range(T - 1, -1, -1):
        strides[t] = size
        size *= n[t] + 1
    dist = np.zeros((size, N + 1))
    start = 0
    for t in range(T):
        start += n[t] * strides[t]
    dist[start, 0] = 1.0
    r = np.empty(T, dtype=np.int64)
    for level in range(K):
        new = np.zeros((size, N + 1))
        remaining = N - level * m
        log_total = _log_choose(remaining, m)
        for s in range(size):
            has = False
            for e in range(N + 1):
                if dist[s, e] != 0.0:
                    has = True
                    break
            if not has:
                continue
            rest = s
            for t in range(T):
                r[t] = rest // strides[t]
                rest -= r[t] * strides[t]
            for c in range(fold_compositions.shape[0]):
                f = fold_compositions[c]
                ok = True
                for t in range(T):
                    if f[t] > r[t]:
                        ok = False
                        break
                if not ok:
                    continue
                logp = -log_total
                s2 = s
                for t in range(T):
                    logp += _log_choose(r[t], f[t])
                    s2 -= f[t] * strides[t]
                prob = np.exp(logp)
                err = _errors_on(f, n - f)
                for e in range(N + 1 - err):
                    if dist[s, e] != 0.0:
                        new[s2, e + err] += prob * dist[s, e]
        dist = new
    for e in range(N + 1):
        out[e] = dist[0, e]


def kfold_error_distribution(counts, K: int) -> np.ndarray:
    """Distribution of the number of K-fold CV errors over uniformly random fold assignments.

    The N = sum(counts) examples are split into K folds of N/K uniformly at random. Given the
    counts still unassigned, the next fold's type composition is multivariate hypergeometric;
    a dynamic program over the remaining counts and the errors so far sums over all
    assignments exactly. The K-fold estimate is E / N with E distributed as returned.

    Returns
    -------
    ndarray, shape (N + 1,)
        P(E = e) for e = 0..N.
    """
    n = np.asarray(counts, dtype=np.int64)
    N = int(n.sum())
    if N % K:
        raise ValueError(f"N={N} is not a multiple of K={K}.")
    out = np.zeros(N + 1)
    _kfold_dp(n, int(K), compositions(N // K, n.shape[0]), out)
    return out
