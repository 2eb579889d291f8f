"""k-nearest-neighbour regression for the models of one sample (``KNeighborsRegressor``'s rule).

The rule, for a model trained on a multiset of the sample's rows: the prediction at x is the
mean of the targets of the k training points nearest to x, with

- distances squared Euclidean, summed feature by feature in float64 (as scikit-learn's KD and
  ball trees compute them, so the order of the neighbours is theirs);
- neighbours in increasing distance, equal distances by increasing sample position (scikit-learn
  leaves that order to its search structure), copies of a row counted separately;
- the mean computed as scikit-learn's ``predict`` computes it, ``np.mean`` over the k targets in
  that order, so that a prediction with the same neighbours in the same order is scikit-learn's
  to the last bit.

It is scikit-learn's ``KNeighborsRegressor(weights="uniform")`` with the Euclidean metric except
where two distances tie at the k-th place (then the sample position decides), tested against it
on random data. What it saves: a study evaluates every fold model of a sample on the same large
evaluation set (the truth of an infinite population), and scikit-learn searches it once per
model. Here the ``width`` nearest sample positions of every evaluation point are found once per
sample (one pass over the sample per point, :func:`_nearest_positions`), and each model takes its
first k training points along them (:func:`_take_neighbours`); a point for which they hold fewer
than k of a model's training points is finished by brute force for that model
(:func:`_brute_neighbours`), with the same rule.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from simstudy.learners.contracts import KernelInputError, require_sample
from simstudy.learners.knn.population import neighbour_count, supported_knn_params
from simstudy.learners.knn.walks import _distance

__all__ = ["SampleKNNRegressor", "KnnRegressionModel", "supported_knn_regressor_params"]

#: Nearest sample positions kept per evaluation point (a fold model leaves out n/K of them).
WIDTH = 48


@numba.njit(cache=True)
def _nearest_positions(Q, S, width, order):
    """``order[q]`` = the ``width`` sample positions nearest to Q[q] by (distance, position)."""
    n = S.shape[0]
    best = np.empty(width)
    for q in range(Q.shape[0]):
        filled = 0
        for j in range(n):
            d = _distance(Q, q, S, j)
            if filled == width and d >= best[width - 1]:   # a later position never passes an equal one
                continue
            pos = filled if filled < width else width - 1
            while pos > 0 and best[pos - 1] > d:
                best[pos] = best[pos - 1]
                order[q, pos] = order[q, pos - 1]
                pos -= 1
            best[pos] = d
            order[q, pos] = j
            if filled < width:
                filled += 1


@numba.njit(inline="always", cache=True)
def _take(j, counts, k, out, q, got):
    """Sample position j met: its copies in the training set fill ``out[q, got:k]``; returns the new ``got``."""
    c = counts[j]
    while c > 0 and got < k:
        out[q, got] = j
        got += 1
        c -= 1
    return got


@numba.njit(cache=True)
def _take_neighbours(order, counts, k, out, short):
    """``out[q]`` = the first k training points (positions, copies repeated) along ``order[q]``;
    ``short[q]`` where ``order[q]`` holds fewer than k of them."""
    for q in range(order.shape[0]):
        got = 0
        for t in range(order.shape[1]):
            got = _take(order[q, t], counts, k, out, q, got)
            if got == k:
                break
        short[q] = got < k


@numba.njit(cache=True)
def _brute_neighbours(which, Q, S, counts, k, out):
    """``out[q]`` for q in ``which``: the k nearest training points among all sample positions."""
    n = S.shape[0]
    d = np.empty(n)
    for q in which:
        for j in range(n):
            d[j] = _distance(Q, q, S, j) if counts[j] > 0 else np.inf
        ranked = np.argsort(d, kind="mergesort")          # stable: equal distances by position
        got = 0
        for t in range(n):
            got = _take(ranked[t], counts, k, out, q, got)
            if got == k:
                break


@dataclass(frozen=True)
class KnnRegressionSample:
    """A sample prepared for :class:`SampleKNNRegressor`: features (float64, C order) and targets."""

    X: np.ndarray
    y: np.ndarray


@dataclass(frozen=True)
class KnnRegressionModel:
    """A fitted model: its sample and the copies of each sample position in its training set."""

    sample: KnnRegressionSample
    counts: np.ndarray  # (n,) int64


def supported_knn_regressor_params(estimator) -> tuple[bool, str]:
    """Whether :class:`SampleKNNRegressor` gives a ``KNeighborsRegressor``'s predictions (and why not)."""
    return supported_knn_params(estimator, "KNeighborsRegressor")


class SampleKNNRegressor:
    """The learner (:mod:`simstudy.learners.base`) of :func:`supported_knn_regressor_params`' estimators.

    Parameters
    ----------
    estimator : KNeighborsRegressor or int
        The estimator, or k itself.
    name : str
    """

    task = "regression"
    dtype = np.float64

    def __init__(self, estimator, name: str = "knn"):
        self.k = neighbour_count(estimator, "KNeighborsRegressor", "SampleKNNRegressor")
        self.name = name
        self._near: tuple[Any, np.ndarray, np.ndarray] | None = None   # (sample, queries, their nearest positions)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "estimator": "KNeighborsRegressor", "engine": "simstudy sample k-NN",
                "n_neighbors": self.k, "width": WIDTH}

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_near"] = None
        return state

    def start(self, sample) -> KnnRegressionSample:
        require_sample("k-NN regression", sample.X, sample.y)
        return KnnRegressionSample(np.ascontiguousarray(sample.X, dtype=np.float64),
                                   np.ascontiguousarray(sample.y, dtype=np.float64))

    def fit(self, state: KnnRegressionSample, rows: np.ndarray, rng: np.random.Generator) -> KnnRegressionModel:
        """The model trained on the sample's rows ``rows`` (repeats are copies); draws nothing."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size < self.k:
            raise ValueError(f"k-NN regression with n_neighbors={self.k} needs at least {self.k} training points, "
                             f"got {rows.size}: lower n_neighbors or use larger samples")
        return KnnRegressionModel(state, np.bincount(rows, minlength=state.X.shape[0]).astype(np.int64))

    def predict(self, state: KnnRegressionSample, model: KnnRegressionModel, rows: np.ndarray) -> np.ndarray:
        """Predictions at the sample's rows ``rows``."""
        return self._predict(model, np.ascontiguousarray(state.X[rows]), keep=False)

    def predict_features(self, model: KnnRegressionModel, X: np.ndarray) -> np.ndarray:
        """Predictions at features X; the nearest sample positions of X are kept for the next
        model of the same sample (the fold models evaluated on one evaluation set)."""
        return self._predict(model, X, keep=True)

    def _predict(self, model: KnnRegressionModel, X: np.ndarray, keep: bool) -> np.ndarray:
        sample = model.sample
        Q = np.ascontiguousarray(X, dtype=np.float64)
        if Q.ndim != 2 or Q.shape[1] != sample.X.shape[1]:
            raise KernelInputError(f"k-NN regression: features of shape {Q.shape} for a sample of {sample.X.shape[1]} "
                                   "features; give the same features.")
        near = self._near
        if near is not None and near[0] is sample and near[1] is X:   # references held: no stale identity
            order = near[2]
        else:
            order = np.empty((Q.shape[0], min(WIDTH, sample.X.shape[0])), np.int64)
            _nearest_positions(Q, sample.X, order.shape[1], order)
            if keep:
                self._near = (sample, X, order)
        idx = np.empty((Q.shape[0], self.k), np.int64)
        short = np.empty(Q.shape[0], np.bool_)
        _take_neighbours(order, model.counts, self.k, idx, short)
        which = np.flatnonzero(short)
        if which.size:
            _brute_neighbours(which, Q, sample.X, model.counts, self.k, idx)
        # scikit-learn's KNeighborsRegressor.predict: np.mean(_y[neigh_ind], axis=1) with _y (n, 1)
        return np.mean(sample.y.reshape(-1, 1)[idx], axis=1).ravel()
