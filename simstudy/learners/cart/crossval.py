"""Cross-validation of the tree in one compiled call: K-fold (:func:`cross_validate_cart`) and any
sequence of train/test splits (:func:`predict_splits_cart`: 5x2, train/validation, nested CV)."""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from simstudy.learners.contracts import require_fold_labels, require_rows
from simstudy.learners.cart.grow import _empty_nodes, _grow, _kernel_inputs, _seed, _trim
from simstudy.learners.cart.pool import _new_pool, _sample_histogram
from simstudy.learners.cart.tree import CartTree, _leaves_of


@dataclass(frozen=True)
class CartFolds:
    """K-fold CV of the tree on one sample.

    Attributes
    ----------
    predictions : ndarray (n,)
        Each row's label predicted by the tree grown without the row's fold, in the label
        space of ``y`` (for any loss; the 0-1 loss is ``predictions != y``).
    models : list of CartTree or None
        ``models[k]`` was grown without fold k (None when not kept).
    """

    predictions: np.ndarray
    models: list[CartTree] | None


@numba.njit(inline="always", cache=True)
def _training_rows(labels, k, samples):
    """The rows outside fold k, in row order, into ``samples``; returns their number."""
    m = 0
    for i in range(labels.shape[0]):
        if labels[i] != k:
            samples[m] = i
            m += 1
    return m


@numba.njit(inline="always", cache=True)
def _append_nodes(nodes, offset, tree):
    """Copy a tree's node arrays into ``nodes`` from ``offset`` on; returns the end offset."""
    end = offset + tree.feature.shape[0]
    nodes.feature[offset:end] = tree.feature
    nodes.threshold[offset:end] = tree.threshold
    nodes.left[offset:end] = tree.left
    nodes.right[offset:end] = tree.right
    nodes.leaf_class[offset:end] = tree.leaf_class
    return end


@numba.njit(cache=True)
def _cross_validate(X, sample, labels, K, seeds, rules):
    """K-fold CV in one call: the tree of fold k is grown on the rows with ``labels != k`` (in row
    order, exactly as :func:`fit_cart` on that subset) with seed ``seeds[k]`` and predicts the
    rows of fold k. Returns each row's predicted class (encoded), and the K trees' node arrays
    concatenated (tree k occupies ``offsets[k]:offsets[k + 1]``; child indices are local)."""
    n = labels.shape[0]
    pool = _new_pool(sample.n_values, sample.n_classes)
    full = _sample_histogram(pool, sample.row_bins, sample.y)  # each root: full minus fold k's rows
    predicted = np.empty(n, np.int64)
    nodes = _empty_nodes(K * (2 * n + 1))
    offsets = np.zeros(K + 1, np.int64)
    samples = np.empty(n, np.int64)
    held_out = np.empty(n, np.int64)
    leaves = np.empty(n, np.int64)
    for k in range(K):
        m = _training_rows(labels, k, samples)
        n_out = 0
        for i in range(n):
            if labels[i] == k:
                held_out[n_out] = i
                n_out += 1
        tree = _grow(sample, samples[:m], rules, seeds[k], pool, full, held_out[:n_out])
        offsets[k + 1] = _append_nodes(nodes, offsets[k], tree)
        _leaves_of(X, held_out[:n_out], tree.feature, tree.threshold, tree.left, leaves)
        for j in range(n_out):
            predicted[held_out[j]] = tree.leaf_class[leaves[j]]
    return predicted, offsets, _trim(nodes, offsets[K])


def cross_validate_cart(X, y: np.ndarray, labels: np.ndarray, K: int, seeds, criterion: str = "gini",
                        max_depth: int | None = None, min_samples_split: int = 2, min_samples_leaf: int = 1,
                        keep_models: bool = True, ties: str = "draw") -> CartFolds:
    """K-fold CV of the tree in one compiled call (no per-fold Python work).

    Fold k's tree is exactly ``fit_cart(X[labels != k], y[labels != k], seeds[k], ...)``.

    Parameters
    ----------
    X : ndarray (n, p) or RankedFeatures
    y : ndarray (n,)
    labels : ndarray (n,) of int
        Fold of each row, 0..K-1.
    K : int
    seeds : sequence of K ints
        Seeds of the folds' tie-breaking.
    keep_models : bool
        Return the K trees (for exact errors on a population) or only the predictions.
    ties : {"draw", "shuffle"}
        The tie rule (:data:`simstudy.learners.cart.params.TIE_RULES`).

    Returns
    -------
    CartFolds
    """
    ranked, classes, sample, rules = _kernel_inputs(X, y, criterion, max_depth, min_samples_split, min_samples_leaf,
                                                    ties)
    require_fold_labels("CART cross-validation", labels, ranked.X.shape[0], K)
    seeds = np.asarray([_seed(s) for s in seeds], dtype=np.int64)
    if len(seeds) != K:
        raise ValueError(f"seeds: {len(seeds)} seeds given for K={K} folds; pass one per fold.")
    predicted, offsets, nodes = _cross_validate(ranked.X, sample, np.ascontiguousarray(labels, dtype=np.int64),
                                                int(K), seeds, rules)
    models = None
    if keep_models:
        models = [CartTree(*(a[offsets[k]:offsets[k + 1]] for a in nodes), classes=classes) for k in range(K)]
    return CartFolds(classes[predicted], models)


@numba.njit(cache=True)
def _predict_splits(X, sample, train_rows, train_ptr, test_rows, test_ptr, seeds, rules):
    """Grow one tree per split and predict that split's test rows, all in one call.

    Split s trains on ``train_rows[train_ptr[s]:train_ptr[s + 1]]`` (exactly as :func:`fit_cart`
    on those rows) with seed ``seeds[s]`` and predicts the rows
    ``test_rows[test_ptr[s]:test_ptr[s + 1]]``; returns their predicted classes (encoded),
    concatenated in the same layout as ``test_rows``."""
    n_splits = seeds.shape[0]
    pool = _new_pool(sample.n_values, sample.n_classes)
    predicted = np.empty(test_rows.shape[0], np.int64)
    longest = 0
    for s in range(n_splits):
        longest = max(longest, train_ptr[s + 1] - train_ptr[s])
    samples = np.empty(longest, np.int64)
    n = sample.y.shape[0]
    full = _sample_histogram(pool, sample.row_bins, sample.y)  # each root: full minus the rows not trained on
    in_train = np.zeros(n, np.bool_)
    absent = np.empty(n, np.int64)
    longest_test = 0
    for s in range(n_splits):
        longest_test = max(longest_test, test_ptr[s + 1] - test_ptr[s])
    leaves = np.empty(longest_test, np.int64)
    for s in range(n_splits):
        m = train_ptr[s + 1] - train_ptr[s]
        samples[:m] = train_rows[train_ptr[s]:train_ptr[s + 1]]   # _grow reorders its rows in place
        in_train[:] = False
        for i in range(m):
            in_train[samples[i]] = True
        n_absent = 0
        for i in range(n):
            if not in_train[i]:
                absent[n_absent] = i
                n_absent += 1
        distinct = n - n_absent == m  # no row twice (a bootstrap set): else the root is built from its rows
        tree = _grow(sample, samples[:m], rules, seeds[s], pool, full if distinct else full[:0], absent[:n_absent])
        lo, hi = test_ptr[s], test_ptr[s + 1]
        _leaves_of(X, test_rows[lo:hi], tree.feature, tree.threshold, tree.left, leaves)
        for j in range(hi - lo):
            predicted[lo + j] = tree.leaf_class[leaves[j]]
    return predicted


def _concatenate(parts) -> tuple[np.ndarray, np.ndarray]:
    """Row arrays as one int64 array and the offsets of each part (CSR layout)."""
    parts = [np.asarray(p, dtype=np.int64) for p in parts]
    ptr = np.zeros(len(parts) + 1, np.int64)
    ptr[1:] = np.cumsum([p.size for p in parts])
    return (np.concatenate(parts) if parts else np.empty(0, np.int64)), ptr


def predict_splits_cart(X, y: np.ndarray, trains, tests, seeds, criterion: str = "gini",
                        max_depth: int | None = None, min_samples_split: int = 2, min_samples_leaf: int = 1,
                        ties: str = "draw") -> list[np.ndarray]:
    """The trees of many train/test splits of one sample in one compiled call.

    Split s's tree is ``fit_cart(X[trains[s]], y[trains[s]], seeds[s], ...)`` whenever every
    training set holds every class of ``y`` (always true with two classes: a one-class
    training set gives a one-leaf tree either way); the caller falls back to :func:`fit_cart`
    otherwise (see :meth:`CartLearner.split_predictions`).

    Parameters
    ----------
    X : ndarray (n, p) or RankedFeatures
    y : ndarray (n,)
    trains, tests : sequences of row-position arrays, one pair per split
    seeds : sequence of ints, one per split

    Returns
    -------
    list of ndarray
        The predicted labels of each split's test rows, in the order given.
    """
    if not (len(trains) == len(tests) == len(seeds)):
        raise ValueError(f"trains, tests and seeds must have one entry per split; got {len(trains)}, {len(tests)} "
                         f"and {len(seeds)}.")
    ranked, classes, sample, rules = _kernel_inputs(X, y, criterion, max_depth, min_samples_split, min_samples_leaf,
                                                    ties)
    train_rows, train_ptr = _concatenate(trains)
    test_rows, test_ptr = _concatenate(tests)
    require_rows("CART splits", train_rows, ranked.X.shape[0], "training rows")
    require_rows("CART splits", test_rows, ranked.X.shape[0], "test rows")
    seeds = np.asarray([_seed(s) for s in seeds], dtype=np.int64)
    predicted = classes[_predict_splits(ranked.X, sample, train_rows, train_ptr, test_rows, test_ptr, seeds, rules)]
    return [predicted[test_ptr[s]:test_ptr[s + 1]] for s in range(len(seeds))]
