"""K-fold cross-validation of the tree in one compiled call."""
from __future__ import annotations

import numba
import numpy as np

from simstudy.learners.cart.criteria import _ENTROPY, _GINI
from simstudy.learners.cart.grow import _grow
from simstudy.learners.cart.pool import _new_pool
from simstudy.learners.cart.ranking import RankedFeatures
from simstudy.learners.cart.tree import CartTree, _leaf_of
from simstudy.learners.crossval import CrossValidation


@numba.njit(cache=True)
def _cross_validate(X, ranks, values, n_values, close, y, n_classes, labels, K, seeds, criterion, max_depth,
                    min_split, min_leaf):
    """K-fold CV in one call: the tree of fold k is grown on the rows with ``labels != k`` (in row
    order, exactly as :func:`fit_cart` on that subset) with seed ``seeds[k]`` and predicts the
    rows of fold k. Returns the per-row misclassification flags and the K trees' node arrays,
    concatenated (tree k occupies ``offsets[k]:offsets[k + 1]``; child indices are local)."""
    n = labels.shape[0]
    pool = _new_pool(n_values, n_classes, ranks.shape[0])
    wrong = np.zeros(n, np.bool_)
    cap = K * (2 * n + 1)
    feature = np.empty(cap, np.int64)
    threshold = np.empty(cap)
    left = np.empty(cap, np.int64)
    right = np.empty(cap, np.int64)
    leaf_class = np.empty(cap, np.int64)
    offsets = np.zeros(K + 1, np.int64)
    samples = np.empty(n, np.int64)
    for k in range(K):
        m = 0
        for i in range(n):
            if labels[i] != k:
                samples[m] = i
                m += 1
        fe, th, le, ri, lc = _grow(ranks, values, n_values, close, y, n_classes, samples[:m], criterion, max_depth,
                                   min_split, min_leaf, seeds[k], pool)
        o = offsets[k]
        count = fe.shape[0]
        feature[o:o + count] = fe
        threshold[o:o + count] = th
        left[o:o + count] = le
        right[o:o + count] = ri
        leaf_class[o:o + count] = lc
        offsets[k + 1] = o + count
        for i in range(n):
            if labels[i] == k:
                wrong[i] = lc[_leaf_of(X, i, fe, th, le, ri)] != y[i]
    total = offsets[K]
    return wrong, offsets, feature[:total], threshold[:total], left[:total], right[:total], leaf_class[:total]


def cross_validate_cart(X, y: np.ndarray, labels: np.ndarray, K: int, seeds, criterion: str = "gini",
                        max_depth: int | None = None, min_samples_split: int = 2, min_samples_leaf: int = 1,
                        keep_models: bool = True) -> CrossValidation:
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
        Seeds of the folds' feature orders.
    keep_models : bool
        Return the K trees (for exact errors on a population) or only the losses.
    """
    ranked = X if isinstance(X, RankedFeatures) else RankedFeatures.from_array(X)
    classes, y_enc = np.unique(y, return_inverse=True)
    seeds = np.asarray([int(s) % (2**32 - 1) for s in seeds], dtype=np.int64)
    if len(seeds) != K:
        raise ValueError(f"seeds: {len(seeds)} seeds given for K={K} folds; pass one per fold.")
    wrong, offsets, *nodes = _cross_validate(
        ranked.X, ranked.ranks, ranked.values, ranked.n_values, ranked.close, y_enc.astype(np.int64), len(classes),
        np.ascontiguousarray(labels, dtype=np.int64), int(K), seeds, _GINI if criterion == "gini" else _ENTROPY,
        -1 if max_depth is None else int(max_depth), int(min_samples_split), int(min_samples_leaf))
    models = None
    if keep_models:
        models = [CartTree(*(a[offsets[k]:offsets[k + 1]] for a in nodes), classes=classes) for k in range(K)]
    return CrossValidation(wrong.astype(float), models)
