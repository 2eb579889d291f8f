"""A fitted tree and its prediction: the node arrays and the descent from root to leaf."""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from simstudy.learners.contracts import require_features
from simstudy.learners.cart.ranking import RankedFeatures


@dataclass(frozen=True)
class CartTree:
    """A fitted tree: node arrays (children -1 for leaves) and the predicted class per node."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf_class: np.ndarray
    classes: np.ndarray

    @property
    def node_count(self) -> int:
        return int(self.feature.shape[0])


@numba.njit(cache=True, inline="always")
def _leaf_of(X, i, feature, threshold, left, right):
    """The leaf row i of X falls in (x <= threshold goes left).

    Branch-free descent: :func:`_grow` numbers the children of a node consecutively
    (``right = left + 1``), so the child is ``left + (not x <= threshold)``.
    """
    node = 0
    while left[node] >= 0:
        node = left[node] + (0 if X[i, feature[node]] <= threshold[node] else 1)
    return node


@numba.njit(cache=True, inline="always")
def _child(X, i, node, feature, threshold, left):
    """The child row i goes to from ``node``, or ``node`` itself at a leaf (a select: a leaf's
    feature -1 reads the row's last value, which the select discards)."""
    step = left[node] + (0 if X[i, feature[node]] <= threshold[node] else 1)
    return step if left[node] >= 0 else node


@numba.njit(cache=True, inline="always")
def _leaves_of(X, rows, feature, threshold, left, leaves):
    """``leaves[j]`` = the leaf row ``rows[j]`` of X falls in, as :func:`_leaf_of`.

    Four rows descend together: the four chains of dependent loads (node, feature, value,
    threshold) overlap instead of running one after the other; a row at its leaf stays there
    until the four are done."""
    n = rows.shape[0]
    j = 0
    while j + 4 <= n:
        i0, i1, i2, i3 = rows[j], rows[j + 1], rows[j + 2], rows[j + 3]
        a = b = c = d = 0
        while (left[a] & left[b] & left[c] & left[d]) >= 0:  # not all four at a leaf (leaves: -1)
            a = _child(X, i0, a, feature, threshold, left)
            b = _child(X, i1, b, feature, threshold, left)
            c = _child(X, i2, c, feature, threshold, left)
            d = _child(X, i3, d, feature, threshold, left)
        leaves[j], leaves[j + 1], leaves[j + 2], leaves[j + 3] = a, b, c, d
        j += 4
    for k in range(j, n):
        leaves[k] = _leaf_of(X, rows[k], feature, threshold, left, left)


@numba.njit(cache=True)
def _predict(X, feature, threshold, left, leaf_class, out):
    """out[i] = the class of the leaf row i of X falls in (rows descend four at a time)."""
    leaves = np.empty(X.shape[0], np.int64)
    _leaves_of(X, np.arange(X.shape[0]), feature, threshold, left, leaves)
    for i in range(X.shape[0]):
        out[i] = leaf_class[leaves[i]]


def predict_cart(tree: CartTree, X) -> np.ndarray:
    """Predicted labels of X (float32 features, or :class:`RankedFeatures`)."""
    X = X.X if isinstance(X, RankedFeatures) else np.ascontiguousarray(X, dtype=np.float32)
    require_features("CART prediction", X, int(tree.feature.max(initial=-1)) + 1)
    out = np.empty(X.shape[0], np.int64)
    _predict(X, tree.feature, tree.threshold, tree.left, tree.leaf_class, out)
    return tree.classes[out]
