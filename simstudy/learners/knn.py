"""Exact k-nearest-neighbour classification on a finite population, by precomputed neighbour lists.

When training sets are drawn from a finite population (the rows of a data set), every
training and query point is a population row. For each row we precompute, once, the L
nearest rows in the order (squared Euclidean distance, row index). A model is then just the
multiset of its training rows (a count per population row), and predicting a query row walks
its list until k training points are met, so the exact error of a model on the whole
population (Bayle et al.'s target) costs about N k / (training fraction) memory reads instead
of N x n_train distance computations. Rows whose list holds fewer than k training points are
predicted by brute force over the training rows in the same (distance, row index) order, so
both paths give identical answers.

Tie rules (documented, deterministic): among training points at equal distance the one with
the smaller population row index comes first; copies of one row (sampling with replacement)
are separate training points; a vote tie goes to the smaller class label (impossible for
two classes with odd k).
"""
from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba
import numpy as np

__all__ = ["KnnModel", "PopulationKNN", "neighbour_lists", "supported_knn_params"]

log = logging.getLogger("simstudy")


@numba.njit(parallel=True, cache=True)
def _neighbour_lists(X, L, out):
    N, p = X.shape
    for q in numba.prange(N):
        d = np.empty(N)
        for j in range(N):
            s = 0.0
            for f in range(p):
                t = X[q, f] - X[j, f]
                s += t * t
            d[j] = s
        threshold = np.partition(d, L - 1)[L - 1]
        candidates = np.flatnonzero(d <= threshold)              # ascending row index
        order = np.argsort(d[candidates], kind="mergesort")       # stable: ties keep row order
        for i in range(L):
            out[q, i] = candidates[order[i]]


def neighbour_lists(X: np.ndarray, length: int) -> np.ndarray:
    """For each row of X, the ``length`` nearest rows (itself included) by (distance, index)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    length = int(min(length, X.shape[0]))
    out = np.empty((X.shape[0], length), np.int32)
    _neighbour_lists(X, length, out)
    return out


@numba.njit(cache=True)
def _predict_rows(queries, counts, union_rows, lists, X, y, k, n_classes, out):
    """Predictions of M models (training multisets ``counts``, shape (N, M)) at the query rows.

    One walk along each query's neighbour list serves all M models (hits are rare, so the
    walk, not the models, dominates); models still short of k neighbours at the end of the
    list are finished by brute force over ``union_rows`` (rows in any model, ascending).
    """
    M = counts.shape[1]
    L = lists.shape[1]
    in_any = np.zeros(counts.shape[0], np.bool_)
    in_any[union_rows] = True
    p = X.shape[1]
    votes = np.zeros((M, n_classes), np.int64)
    need = np.empty(M, np.int64)
    best_d = np.empty(k)
    best_row = np.empty(k, np.int64)
    d = np.empty(union_rows.shape[0])
    for qi in range(queries.shape[0]):
        q = queries[qi]
        votes[:, :] = 0
        need[:] = k
        pending = M
        for t in range(L):
            j = lists[q, t]
            if not in_any[j]:
                continue
            for mi in range(M):
                c = counts[j, mi]
                if c > 0 and need[mi] > 0:
                    take = min(c, need[mi])
                    votes[mi, y[j]] += take
                    need[mi] -= take
                    if need[mi] == 0:
                        pending -= 1
            if pending == 0:
                break
        if pending > 0:  # list exhausted for some model: brute force in the same (distance, row) order
            for i in range(union_rows.shape[0]):
                j = union_rows[i]
                s = 0.0
                for f in range(p):
                    t2 = X[q, f] - X[j, f]
                    s += t2 * t2
                d[i] = s
            for mi in range(M):
                if need[mi] == 0:
                    continue
                m = 0
                for i in range(union_rows.shape[0]):   # ascending rows: a later row never beats an
                    j = union_rows[i]                    # earlier one at equal distance
                    for _ in range(counts[j, mi]):
                        if m == k and d[i] >= best_d[k - 1]:
                            break
                        pos = m if m < k else k - 1
                        while pos > 0 and best_d[pos - 1] > d[i]:
                            best_d[pos] = best_d[pos - 1]
                            best_row[pos] = best_row[pos - 1]
                            pos -= 1
                        best_d[pos] = d[i]
                        best_row[pos] = j
                        if m < k:
                            m += 1
                votes[mi, :] = 0
                for i in range(m):
                    votes[mi, y[best_row[i]]] += 1
        for mi in range(M):
            best = 0
            for c in range(1, n_classes):
                if votes[mi, c] > votes[mi, best]:
                    best = c
            out[mi, qi] = best


@dataclass(frozen=True)
class KnnModel:
    """A fitted k-NN model: the multiset of its training rows."""

    counts: np.ndarray       # (N,) int32 multiplicity of each population row
    rows: np.ndarray         # distinct training rows, ascending


def supported_knn_params(estimator) -> tuple[bool, str]:
    """Whether :class:`PopulationKNN` reproduces a ``KNeighborsClassifier`` (and why not)."""
    if type(estimator).__name__ != "KNeighborsClassifier":
        return False, f"{type(estimator).__name__} is not KNeighborsClassifier"
    params = estimator.get_params(deep=False)
    if params["weights"] != "uniform":
        return False, f"weights={params['weights']!r} (only 'uniform')"
    metric, power = params["metric"], params["p"]
    if not (metric == "euclidean" or (metric == "minkowski" and power == 2)) or params["metric_params"]:
        return False, f"metric={metric!r}, p={power!r} (only Euclidean distance)"
    return True, ""


def _cache_dir() -> Path:
    root = os.environ.get("SIMSTUDY_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "simstudy")
    return Path(root) / "knn"


class PopulationKNN:
    """k-NN classifier on a finite population, exact, with population errors in milliseconds.

    Parameters
    ----------
    estimator : KNeighborsClassifier
        Its ``n_neighbors`` is used (uniform weights, Euclidean distance).
    X : ndarray, shape (N, p)
        The population's features.
    y : ndarray of int, shape (N,)
        Its labels (0..C-1).
    name : str
    list_length : int
        Neighbours stored per row (memory N x list_length x 4 bytes); rows whose list is
        exhausted fall back to brute force.

    Notes
    -----
    The neighbour lists are computed once per data set and cached in
    ``$SIMSTUDY_CACHE/knn`` (default ``~/.cache/simstudy/knn``), keyed by a hash of X and the
    list length; worker processes memory-map the cached file instead of receiving a copy.
    """

    dtype = np.float64

    def __init__(self, estimator, X: np.ndarray, y: np.ndarray, name: str = "knn", list_length: int = 2048):
        ok, why = supported_knn_params(estimator)
        if not ok:
            raise ValueError(f"PopulationKNN cannot reproduce this estimator: {why}")
        self.template = estimator
        self.name = name
        self.k = int(estimator.get_params()["n_neighbors"])
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.int64)
        self.n_classes = int(self.y.max()) + 1
        self.list_length = int(min(list_length, self.X.shape[0]))
        digest = hashlib.sha256(self.X.tobytes()).hexdigest()[:20]
        self.cache_path = _cache_dir() / f"{digest}_L{self.list_length}.npy"
        self._lists: np.ndarray | None = None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "estimator": "KNeighborsClassifier", "engine": "simstudy population k-NN",
                "n_neighbors": self.k, "list_length": self.list_length}

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_lists"] = None          # workers memory-map the cached lists
        return state

    @property
    def lists(self) -> np.ndarray:
        if self._lists is None:
            self._lists = self.build_index()
        return self._lists

    def build_index(self) -> np.ndarray:
        """Load the cached neighbour lists (memory-mapped), computing and caching them if absent."""
        path = self.cache_path
        if path.exists():
            try:
                lists = np.load(path, mmap_mode="r")
                if lists.shape == (self.X.shape[0], self.list_length):
                    return lists
            except (ValueError, OSError):
                pass
        log.info("k-NN: computing the %d nearest rows of each of %d population rows (once; cached in %s)",
                 self.list_length, self.X.shape[0], path.parent)
        lists = neighbour_lists(self.X, self.list_length)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
        np.save(tmp, lists)
        os.replace(tmp, path)
        return np.load(path, mmap_mode="r")

    # -- the learner protocol (simstudy.learners.base): a sample's state is its population rows
    task = "classification"

    def start(self, sample) -> np.ndarray:
        """The sample's population row indices (the model is the multiset of its training rows)."""
        if sample.index is None:
            raise ValueError("the population k-NN needs samples drawn from a finite population (row indices).")
        return np.asarray(sample.index)

    def fit(self, state: np.ndarray, rows: np.ndarray, rng: np.random.Generator) -> KnnModel:
        return self.fit_rows(state[rows])

    def predict(self, state: np.ndarray, model: KnnModel, rows: np.ndarray) -> np.ndarray:
        return self.predict_rows(model, state[rows])

    def fit_rows(self, rows: np.ndarray) -> KnnModel:
        """The model trained on the population rows ``rows`` (repeats allowed)."""
        counts = np.bincount(rows, minlength=self.X.shape[0]).astype(np.int32)
        return KnnModel(counts, np.flatnonzero(counts))

    def predict_rows(self, model: KnnModel, rows: np.ndarray) -> np.ndarray:
        """Predicted labels of the population rows ``rows``."""
        return self._predict_many([model], rows)[0]

    def _predict_many(self, models: list[KnnModel], rows: np.ndarray) -> np.ndarray:
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        counts = np.stack([m.counts for m in models], axis=1)      # (N, M): one row per list entry
        union = np.flatnonzero(counts.sum(axis=1)).astype(np.int64)
        out = np.empty((len(models), rows.shape[0]), np.int64)
        _predict_rows(rows, counts, union, self.lists, self.X, self.y, self.k, self.n_classes, out)
        return out

    def population_errors(self, models: list[KnnModel], population=None) -> np.ndarray:
        """Exact error of each model on the whole population (one list walk serves all models).

        ``population`` must be the one whose rows this k-NN indexes (checked by shape)."""
        if population is not None and getattr(population, "X", self.X).shape != self.X.shape:
            raise ValueError("the population k-NN indexes another population than the one asked for.")
        pred = self._predict_many(models, np.arange(self.X.shape[0]))
        return np.mean(pred != self.y, axis=1)
