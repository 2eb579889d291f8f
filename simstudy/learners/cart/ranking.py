"""Features ranked once per sample: the representation every growth kernel reads."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from simstudy.learners.cart.criteria import _FEATURE_THRESHOLD


@numba.njit(cache=True)
def _rank_features(X, ranks, values, n_values):
    """ranks[f, i] = rank of X[i, f] among the distinct values of feature f (sorted)."""
    n, p = X.shape
    for f in range(p):
        lo = X[0, f]
        hi = X[0, f]
        integral = True
        for i in range(n):
            v = X[i, f]
            lo = min(lo, v)
            hi = max(hi, v)
            if v != math.floor(v):
                integral = False
        if integral and hi - lo < 65536:  # small integers: counting instead of sorting
            span = int(hi - lo) + 1
            code = np.full(span, -1, np.int64)
            for i in range(n):
                code[int(X[i, f] - lo)] = 0
            k = 0
            for j in range(span):
                if code[j] == 0:
                    code[j] = k
                    values[f, k] = lo + j
                    k += 1
            n_values[f] = k
            for i in range(n):
                ranks[f, i] = code[int(X[i, f] - lo)]
            continue
        distinct = np.unique(X[:, f])
        k = distinct.shape[0]
        for j in range(k):
            values[f, j] = distinct[j]
        n_values[f] = k
        for i in range(n):
            ranks[f, i] = np.searchsorted(distinct, X[i, f])


@numba.njit(cache=True)
def _close_values(values, n_values):
    """Per feature: do two consecutive distinct values lie within scikit-learn's 1e-7 (so that
    some split candidates between them are skipped)? Gaps only widen in row subsets."""
    close = np.zeros(values.shape[0], np.bool_)
    for f in range(values.shape[0]):
        for j in range(n_values[f] - 1):
            if values[f, j + 1] <= values[f, j] + _FEATURE_THRESHOLD:
                close[f] = True
                break
    return close


def rank_column(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One column ranked as a feature: (rank of each entry as int64, the distinct values
    ascending): ``np.unique(x, return_inverse=True)``'s two outputs, swapped. ``x``: float64, no NaN."""
    n = x.shape[0]
    ranks = np.empty((1, n), np.int32)
    values = np.empty((1, n), np.float64)
    n_values = np.empty(1, np.int64)
    _rank_features(x.reshape(n, 1), ranks, values, n_values)
    return ranks[0].astype(np.int64), values[0, :n_values[0]]


@dataclass(frozen=True)
class RankedFeatures:
    """Features with their per-feature ranks, computed once for a sample.

    Row subsets (``ranked[mask]``) keep the sample's ranks: a rank whose value is absent from
    a subset is simply empty there, so training folds need no re-ranking.
    """

    X: np.ndarray          # (n, p) float32
    ranks: np.ndarray      # (p, n) int32
    values: np.ndarray     # (p, n) distinct values per feature, ascending
    n_values: np.ndarray   # (p,)
    close: np.ndarray      # (p,) bool, see _close_values

    @classmethod
    def from_array(cls, X: np.ndarray) -> "RankedFeatures":
        X = np.ascontiguousarray(X, dtype=np.float32)
        n, p = X.shape
        ranks = np.empty((p, n), np.int32)
        values = np.empty((p, max(n, 1)), np.float64)
        n_values = np.empty(p, np.int64)
        _rank_features(X, ranks, values, n_values)
        return cls(X, ranks, values, n_values, _close_values(values, n_values))

    def __getitem__(self, rows) -> "RankedFeatures":
        return RankedFeatures(self.X[rows], np.ascontiguousarray(self.ranks[:, rows]), self.values, self.n_values,
                              self.close)

    @property
    def shape(self):
        return self.X.shape
