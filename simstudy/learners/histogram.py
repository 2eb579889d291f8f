"""The histogram (cell-majority) classifier on a finite space, computed exactly from counts.

The space has C cells; a labelled example is a type t = (cell j, class y), t = 2 j + y. A
training sample is summarised by its count vector n (length 2C).

Rule: each cell predicts its majority class. A cell whose two class counts are equal (a
tie, including an empty cell) is decided by the tie rule ``tie``:

- ``"overall"`` (default): the majority class of the whole training sample; if that ties
  too, class 0.
- ``"zero"``: class 0 (a fixed class; by the symmetry of the classes "one" gives mirrored
  results).
- ``"coin"``: a fair coin, evaluated in expectation: the cell errs with probability 1/2 on
  either class, so every loss, risk and estimate is the expectation over the coin flips.

Nedelko's paper does not state its rule; see ``experiments/nedelko_histogram_readings.py``.
Losses are counted internally in half-errors (integers), so that the coin rule's 1/2 is exact.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations_with_replacement

import numba
import numpy as np

__all__ = ["TIE_RULES", "KFoldLossDistribution", "compositions", "predict_cells", "misclassified_types",
           "empirical_risk", "loo_estimate", "kfold_error_distribution", "kfold_loss_distribution"]

#: Tie rules of the histogram classifier, in the order of their numba codes.
TIE_RULES = ("overall", "zero", "coin")


def _tie_code(tie: str) -> int:
    if tie not in TIE_RULES:
        raise ValueError(f"tie must be one of {TIE_RULES}; got {tie!r}.")
    return TIE_RULES.index(tie)


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
def _predict2(counts, tie):
    """Twice the probability that each cell predicts class 1: 0, 1 (coin) or 2."""
    C = counts.shape[0] // 2
    ones = 0
    zeros = 0
    for j in range(C):
        zeros += counts[2 * j]
        ones += counts[2 * j + 1]
    if tie == 0:                      # "overall": majority of the sample, class 0 if tied
        tied = 2 if ones > zeros else 0
    elif tie == 1:                    # "zero"
        tied = 0
    else:                             # "coin"
        tied = 1
    pred = np.empty(C, dtype=np.int64)
    for j in range(C):
        if counts[2 * j + 1] > counts[2 * j]:
            pred[j] = 2
        elif counts[2 * j + 1] < counts[2 * j]:
            pred[j] = 0
        else:
            pred[j] = tied
    return pred


@numba.njit(cache=True)
def _half_errors_on(test, train, tie):
    """2 x (expected number of errors) on the test counts of the rule trained on the train counts."""
    pred = _predict2(train, tie)
    e = 0
    for j in range(pred.shape[0]):
        e += test[2 * j] * pred[j] + test[2 * j + 1] * (2 - pred[j])   # class 0 errs on "1", class 1 on "0"
    return e


def predict_cells(counts, tie: str = "overall") -> np.ndarray:
    """Probability that each cell predicts class 1 (0 or 1; 1/2 for a coin-decided tie)."""
    return _predict2(np.asarray(counts, dtype=np.int64), _tie_code(tie)) / 2


def misclassified_types(counts, tie: str = "overall") -> np.ndarray:
    """Loss of the trained rule on each type: true risk = M . p.

    Integers 0/1 (dtype int64) for the deterministic rules; 0, 1/2, 1 (float) for ``"coin"``.
    """
    pred2 = _predict2(np.asarray(counts, dtype=np.int64), _tie_code(tie))
    out = np.empty(2 * pred2.shape[0], dtype=np.int64)
    out[0::2], out[1::2] = pred2, 2 - pred2            # class 0 errs when "1" is predicted
    return out / 2 if tie == "coin" else out // 2


def empirical_risk(counts, tie: str = "overall") -> float:
    """Resubstitution error of the rule trained on the counts."""
    counts = np.asarray(counts)
    return float(misclassified_types(counts, tie) @ counts) / counts.sum()


def loo_estimate(counts, tie: str = "overall") -> float:
    """Leave-one-out estimate: each example is predicted by the rule trained without it."""
    counts = np.asarray(counts, dtype=np.int64)
    code = _tie_code(tie)
    half_errors = 0
    for t in np.flatnonzero(counts):
        one = np.zeros_like(counts)
        one[t] = 1
        half_errors += counts[t] * _half_errors_on(one, counts - one, code)
    return half_errors / (2 * counts.sum())


@numba.njit(cache=True)
def _log_choose(n, k):
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


@numba.njit(cache=True)
def _kfold_dp(n, K, fold_compositions, tie, out):
    """P(2E = e) for e = 0..2N, E the number of K-fold errors, over uniform fold assignments."""
    T = n.shape[0]
    N = 0
    for t in range(T):
        N += n[t]
    m = N // K
    E = 2 * N
    strides = np.empty(T, dtype=np.int64)
    size = 1
    for t in range(T - 1, -1, -1):
        strides[t] = size
        size *= n[t] + 1
    dist = np.zeros((size, E + 1))
    start = 0
    for t in range(T):
        start += n[t] * strides[t]
    dist[start, 0] = 1.0
    r = np.empty(T, dtype=np.int64)
    for level in range(K):
        new = np.zeros((size, E + 1))
        remaining = N - level * m
        log_total = _log_choose(remaining, m)
        for s in range(size):
            has = False
            for e in range(E + 1):
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
                logp = -log_total          # multivariate hypergeometric: prod C(r_t, f_t) / C(remaining, m)
                s2 = s
                for t in range(T):
                    logp += _log_choose(r[t], f[t])
                    s2 -= f[t] * strides[t]
                prob = np.exp(logp)
                err = _half_errors_on(f, n - f, tie)
                for e in range(E + 1 - err):
                    if dist[s, e] != 0.0:
                        new[s2, e + err] += prob * dist[s, e]
        dist = new
    for e in range(E + 1):
        out[e] = dist[0, e]


@dataclass(frozen=True)
class KFoldLossDistribution:
    """Distribution of the K-fold CV estimate of one sample over its random fold assignments.

    Attributes
    ----------
    values : ndarray, shape (2N + 1,)
        The possible estimates e / (2N), e = 0..2N (half-errors: a coin tie costs 1/2).
    probabilities : ndarray, shape (2N + 1,)
        Their probabilities (summing to 1).
    """

    values: np.ndarray
    probabilities: np.ndarray

    @property
    def mean(self) -> float:
        """The complete K-fold estimate: the average over all fold assignments."""
        return float(self.values @ self.probabilities)


def kfold_loss_distribution(counts, K: int, tie: str = "overall") -> KFoldLossDistribution:
    """Distribution of the K-fold CV estimate over uniformly random fold assignments.

    The N = sum(counts) examples are split into K folds of N/K uniformly at random. Given the
    counts still unassigned, the next fold's type composition is multivariate hypergeometric;
    a dynamic program over the remaining counts and the (half-)errors so far sums over all
    assignments exactly.
    """
    n = np.asarray(counts, dtype=np.int64)
    N = int(n.sum())
    if N % K:
        raise ValueError(f"N={N} is not a multiple of K={K}.")
    out = np.zeros(2 * N + 1)
    _kfold_dp(n, int(K), compositions(N // K, n.shape[0]), _tie_code(tie), out)
    return KFoldLossDistribution(np.arange(2 * N + 1) / (2 * N), out)


def kfold_error_distribution(counts, K: int, tie: str = "overall") -> np.ndarray:
    """Distribution of the number of K-fold CV errors over uniformly random fold assignments.

    For the deterministic tie rules (``"overall"``, ``"zero"``); see
    :func:`kfold_loss_distribution` for the coin rule and the method. The K-fold estimate is
    E / N with E distributed as returned.

    Returns
    -------
    ndarray, shape (N + 1,)
        P(E = e) for e = 0..N.
    """
    if tie == "coin":
        raise ValueError("the coin rule makes half errors; use kfold_loss_distribution.")
    return kfold_loss_distribution(counts, K, tie).probabilities[0::2].copy()
