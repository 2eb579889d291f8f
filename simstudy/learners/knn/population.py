"""Exact k-nearest-neighbour classification on a finite population, by precomputed neighbour lists.

When training sets are drawn from a finite population (the rows of a data set), every
training and query point is a population row. For each row we precompute, once, the L
nearest rows in the order (squared Euclidean distance, row index). A model is then just the
multiset of its training rows, and predicting a query row walks its list until k training
points are met, so the exact error of a model on the whole population (Bayle et al.'s target)
costs about N k / (training fraction) memory reads instead of N x n_train distance
computations. Rows whose list holds fewer than k training points are predicted by brute force
over the training rows in the same (distance, row index) order, so every path gives identical
answers. The kernels are in :mod:`simstudy.learners.knn.walks`:

- population errors of the models of a replicate: one walk along every population row's list
  serves all of them; for small training sets the lists are read backwards instead (for each
  training row, the rows whose list holds it: n L entries instead of N k N / n);
- predictions at the sample's own rows (K-fold, 5x2, train/validation and nested CV fits of one
  sample): each distinct sample row's list restricted to the sample is built once per sample
  (:meth:`PopulationKNN.start`) and walked by every model fitted on the sample.

Tie rules (documented, deterministic): among training points at equal distance the one with
the smaller population row index comes first; copies of one row (sampling with replacement)
are separate training points; a vote tie goes to the smaller class label (impossible for
two classes with odd k).
"""
from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simstudy.learners.base import finite_population_data
from simstudy.learners.contracts import KernelInputError, require_rows, require_sample
from simstudy.learners.knn import walks

__all__ = ["KnnModel", "KnnState", "PopulationKNN", "neighbour_lists", "supported_knn_params"]

log = logging.getLogger("simstudy")

#: List entries kept contiguously per row for the walks (most walks end within them).
HEAD = 64
#: Entries of a sample row's list restricted to the sample (enough for training sets down to a
#: fifth of the sample; beyond, predictions fall back to brute force, exactly).
LOCAL_WIDTH = 32
#: Population errors read the lists backwards down to the depth D where a query's list holds
#: this many training rows on average (n_u D / N = 12; queries that need more walk on along
#: their list), instead of walking every list forwards (k N / n entries per query)...
REVERSE_HITS = 12
#: ... when that depth is at least this many head widths; shallower, the forward walk stays in
#: the contiguous head and wins (the cut between the two is measured by benchmarks/knn_truth_walks.py).
REVERSE_MIN_HEADS = 3


def neighbour_lists(X: np.ndarray, length: int) -> np.ndarray:
    """For each row of X, the ``length`` nearest rows (itself included) by (distance, index)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    length = int(min(length, X.shape[0]))
    out = np.empty((X.shape[0], length), np.int32)
    walks.neighbour_lists(X, length, out)
    return out


def _index_dtype(N: int) -> np.dtype:
    """The narrowest integer type holding row indices 0..N-1 (uint16 up to 65,536 rows)."""
    return np.dtype(np.uint16) if N <= 2**16 else np.dtype(np.int32)


@dataclass(frozen=True)
class KnnModel:
    """A fitted k-NN model: the multiset of its training rows.

    Attributes
    ----------
    rows : ndarray of int64
        Population rows, ascending and distinct (for a model fitted on a sample: the sample's
        distinct rows, shared by all its models).
    counts : ndarray of int32
        Copies of each of ``rows`` in the training set (0 for rows of the sample left out).
    """

    rows: np.ndarray
    counts: np.ndarray


@dataclass
class KnnState:
    """A sample prepared for the population k-NN.

    Attributes
    ----------
    index : ndarray (n,)
        The sample rows' population rows.
    rows : ndarray (n_d,)
        The distinct ones, ascending (the ``rows`` of every model fitted on the sample).
    position : ndarray (n,)
        Each sample row's place in ``rows``.
    local, length :
        Each distinct row's population list restricted to the sample (places in ``rows``; built
        on the first prediction, :func:`knn_walks.local_lists`).
    X, y :
        The distinct rows' features and labels (with ``local``).
    """

    index: np.ndarray
    rows: np.ndarray
    position: np.ndarray
    local: np.ndarray | None = field(default=None, repr=False)
    length: np.ndarray | None = field(default=None, repr=False)
    X: np.ndarray | None = field(default=None, repr=False)
    y: np.ndarray | None = field(default=None, repr=False)


def supported_knn_params(estimator, kind: str = "KNeighborsClassifier") -> tuple[bool, str]:
    """Whether the estimator is a ``kind`` (``KNeighborsClassifier``, which :class:`PopulationKNN`
    reproduces, or ``KNeighborsRegressor``) with uniform weights and Euclidean distance (and why not)."""
    from sklearn import neighbors

    if type(estimator) is not getattr(neighbors, kind):   # a subclass may predict otherwise: not reproduced
        return False, f"{type(estimator).__name__} is not sklearn.neighbors.{kind}"
    params = estimator.get_params(deep=False)
    if params["weights"] != "uniform":
        return False, f"weights={params['weights']!r} (only 'uniform')"
    metric, power = params["metric"], params["p"]
    if not (metric == "euclidean" or (metric == "minkowski" and power == 2)) or params["metric_params"]:
        return False, f"metric={metric!r}, p={power!r} (only Euclidean distance)"
    return True, ""


def neighbour_count(estimator, kind: str, learner: str) -> int:
    """k of a ``kind`` estimator that ``learner`` reproduces (:func:`supported_knn_params`), or k
    itself when ``estimator`` is an integer; ValueError naming what is not reproduced, or a k < 1."""
    if isinstance(estimator, (int, np.integer)):
        k = int(estimator)
    else:
        ok, why = supported_knn_params(estimator, kind)
        if not ok:
            raise ValueError(f"{learner} cannot reproduce this estimator: {why}")
        k = int(estimator.get_params()["n_neighbors"])
    if k < 1:
        raise ValueError(f"n_neighbors={k} is invalid: use k >= 1.")
    return k


def _cache_dir() -> Path:
    from simstudy.learners.cache import cache_root

    return cache_root() / "knn"


def _load(path: Path, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray | None:
    """A cached array, memory-mapped, or None if absent or not of the expected shape and type."""
    try:
        array = np.load(path, mmap_mode="r")
    except (ValueError, OSError):
        return None
    return array if array.shape == shape and array.dtype == dtype else None


def _save(path: Path, array: np.ndarray) -> np.ndarray:
    """Write atomically (concurrent builders race harmlessly), then memory-map."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
    np.save(tmp, array)
    os.replace(tmp, path)
    return np.load(path, mmap_mode="r")


class PopulationKNN:
    """k-NN classifier on a finite population, exact, with population errors in milliseconds.

    Parameters
    ----------
    estimator : KNeighborsClassifier or int
        Its ``n_neighbors`` is used (uniform weights, Euclidean distance); or k itself.
    X : ndarray, shape (N, p)
        The population's features.
    y : ndarray of int, shape (N,)
        Its labels (0..C-1).
    name : str
    list_length : int
        Neighbours stored per row (memory N x list_length x 2 bytes up to 65,536 rows, else 4;
        twice that again for the reverse lists); rows whose list is exhausted fall back to brute
        force.

    Notes
    -----
    The neighbour lists and their reverse are computed once per data set and cached in
    ``$SIMSTUDY_CACHE/knn`` (default ``~/.cache/simstudy/knn``), keyed by a hash of X and the
    list length; worker processes memory-map the cached files instead of receiving a copy.
    """

    dtype = np.float64
    task = "classification"

    def __init__(self, estimator, X: np.ndarray, y: np.ndarray, name: str = "knn", list_length: int = 2048):
        self.k = neighbour_count(estimator, "KNeighborsClassifier", "PopulationKNN")
        self.name = name
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.int64)
        require_sample("population k-NN", self.X, self.y)
        if self.y.min() < 0:   # labels index the kernels' vote counts
            raise KernelInputError(f"population k-NN: class labels from {self.y.min()}; it needs labels 0..C-1.")
        self.n_classes = int(self.y.max()) + 1
        self.list_length = int(min(list_length, self.X.shape[0]))
        digest = hashlib.sha256(self.X.tobytes()).hexdigest()[:20]
        self.cache_path = _cache_dir() / f"{digest}_L{self.list_length}.npy"
        self._index: dict[str, np.ndarray] | None = None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "estimator": "KNeighborsClassifier", "engine": "simstudy population k-NN",
                "n_neighbors": self.k, "list_length": self.list_length}

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_index"] = None          # workers memory-map the cached lists
        return state

    # ------------------------------------------------------------------ the index
    @property
    def lists(self) -> np.ndarray:
        """(N, L) the neighbour lists, in the narrowest integer type (memory-mapped)."""
        return self._arrays()["lists"]

    def _arrays(self) -> dict[str, np.ndarray]:
        if self._index is None:
            self._index = self.build_index()
        return self._index

    def _path(self, what: str) -> Path:
        return self.cache_path.with_name(f"{self.cache_path.stem}_{what}.npy")

    def build_index(self) -> dict[str, np.ndarray]:
        """Load the cached lists and reverse lists (memory-mapped), computing and caching them if
        absent; returns ``{"lists", "head", "reverse", "reverse_ptr"}``."""
        N, L = self.X.shape[0], self.list_length
        dtype = _index_dtype(N)
        lists = _load(self._path(f"lists_{dtype.name}"), (N, L), dtype)
        if lists is None:
            wide = _load(self.cache_path, (N, L), np.dtype(np.int32))     # int32 lists cached for any N
            if wide is None:
                log.info("k-NN: computing the %d nearest rows of each of %d population rows (once; cached in %s)",
                         L, N, self.cache_path.parent)
                wide = neighbour_lists(self.X, L)
            lists = _save(self._path(f"lists_{dtype.name}"), np.asarray(wide).astype(dtype))
        ptr = _load(self._path("reverse_ptr"), (N + 1,), np.dtype(np.int64))
        reverse = _load(self._path(f"reverse_bypos_{dtype.name}"), (N * L, 2), dtype)
        if ptr is None or reverse is None:
            ptr, reverse = np.empty(N + 1, np.int64), np.empty((N * L, 2), dtype)
            walks.reverse_lists(np.asarray(lists), ptr, reverse)
            ptr = _save(self._path("reverse_ptr"), ptr)
            reverse = _save(self._path(f"reverse_bypos_{dtype.name}"), reverse)
            self._path(f"reverse_{dtype.name}").unlink(missing_ok=True)   # reverse lists by query: not read
        head = np.ascontiguousarray(lists[:, :min(HEAD, L)])
        return {"lists": lists, "head": head, "reverse": reverse, "reverse_ptr": ptr}

    # ------------------------------------------------------------------ the learner protocol
    def start(self, sample) -> KnnState:
        """The sample's population rows (a model is a multiset of them)."""
        if sample.index is None:
            raise ValueError("the population k-NN needs samples drawn from a finite population (row indices).")
        index = np.asarray(sample.index, dtype=np.int64)
        require_rows("population k-NN", index, self.X.shape[0], "sample.index (population rows)")
        rows, position = np.unique(index, return_inverse=True)
        return KnnState(index, rows, position.astype(np.int64))

    def fit(self, state: KnnState, rows: np.ndarray, rng: np.random.Generator) -> KnnModel:
        """The model trained on the sample's rows ``rows`` (repeats are copies)."""
        counts = np.bincount(state.position[rows], minlength=state.rows.shape[0]).astype(np.int32)
        return KnnModel(state.rows, counts)

    def predict(self, state: KnnState, model: KnnModel, rows: np.ndarray) -> np.ndarray:
        """Predicted labels of the sample's rows ``rows``."""
        if model.rows is not state.rows:            # not fitted on this sample
            return self.predict_rows(model, state.index[rows])
        if state.local is None:
            self._local_lists(state)
        queries = state.position[rows]
        out = np.empty(queries.shape[0], np.int64)
        walks.predict_local(queries, state.local, state.length, model.counts, state.y, state.X, self.k,
                            self.n_classes, out)
        return out

    def _local_lists(self, state: KnnState) -> None:
        index = self._arrays()
        code = np.full(self.X.shape[0], -1, np.int32)
        code[state.rows] = np.arange(state.rows.shape[0], dtype=np.int32)
        width = min(LOCAL_WIDTH, state.rows.shape[0])
        state.local = np.empty((state.rows.shape[0], width), np.int32)
        state.length = np.empty(state.rows.shape[0], np.int64)
        walks.local_lists(state.rows, index["head"], index["lists"], code, width, state.local, state.length)
        state.X, state.y = np.ascontiguousarray(self.X[state.rows]), self.y[state.rows]

    # ------------------------------------------------------------------ population rows
    def fit_rows(self, rows: np.ndarray) -> KnnModel:
        """The model trained on the population rows ``rows`` (repeats allowed)."""
        distinct, counts = np.unique(np.asarray(rows, dtype=np.int64), return_counts=True)
        return KnnModel(distinct, counts.astype(np.int32))

    def predict_rows(self, model: KnnModel, rows: np.ndarray) -> np.ndarray:
        """Predicted labels of the population rows ``rows``."""
        return self._predict_many([model], np.asarray(rows, dtype=np.int64))[0]

    def population_errors(self, models: list[KnnModel], population=None) -> np.ndarray:
        """Exact error of each model on the whole population (one pass serves all models).

        ``population`` must be the one whose rows this k-NN indexes (checked by shape)."""
        data = finite_population_data(population)
        if population is not None and (data is None or data[0].shape != self.X.shape):
            raise ValueError("the population k-NN indexes another population than the one asked for.")
        pred = self._predict_many(models, None)
        return np.mean(pred != self.y, axis=1)

    def _predict_many(self, models: list[KnnModel], queries: np.ndarray | None) -> np.ndarray:
        """Predictions (M, queries) of the models at population rows (all rows if None): the
        reverse lists (down to a depth, then forwards) for small training sets on the whole
        population, else the forward walk; brute force where a list runs out."""
        urows, ucounts = _union(models)
        uy = self.y[urows]
        index = self._arrays()
        N, L = index["lists"].shape
        everyone = queries is None
        queries = np.arange(N) if everyone else queries
        out = np.empty((len(models), queries.shape[0]), np.int64)
        short = np.empty(queries.shape[0], np.bool_)
        code = np.full(N, -1, np.int32)
        code[urows] = np.arange(urows.shape[0], dtype=np.int32)
        H = index["head"].shape[1]
        depth = min(L, -(-REVERSE_HITS * N // max(urows.shape[0], 1)))
        if everyone and depth >= REVERSE_MIN_HEADS * H:
            walks.reverse_walk(index["reverse_ptr"], index["reverse"], urows, ucounts, uy, self.k, self.n_classes,
                               depth, index["head"], index["lists"], code, out, short)
        else:
            walks.walk_lists(queries, index["head"], index["lists"], code, ucounts, uy, self.k, self.n_classes,
                             out, short)
        which = np.flatnonzero(short)
        if which.size:
            walks.brute_force(which, queries, self.X, np.ascontiguousarray(self.X[urows].T), ucounts, uy, self.k,
                              self.n_classes, out)
        return out


def _union(models: list[KnnModel]) -> tuple[np.ndarray, np.ndarray]:
    """The union of the models' training rows (ascending) and each model's copies of them (n_u, M)."""
    first = models[0].rows
    if all(m.rows is first for m in models):         # the models of one sample
        return first, np.ascontiguousarray(np.stack([m.counts for m in models], axis=1), dtype=np.int32)
    urows = np.unique(np.concatenate([m.rows for m in models]))
    ucounts = np.zeros((urows.shape[0], len(models)), np.int32)
    for i, m in enumerate(models):
        ucounts[np.searchsorted(urows, m.rows), i] = m.counts
    return urows, ucounts
