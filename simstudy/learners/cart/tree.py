"""A fitted tree and its prediction: the node arrays and the descent from root to leaf."""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

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


@numba.njit(cache=True)
def _predict(X, feature, threshold, left, right, leaf_class, out):
    for i in range(X.shape[0]):
        out[i] = leaf_class[_leaf_of(X, i, feature, threshold, left, right)]


def predict_cart(tree: CartTree, X) -> np.ndarray:
    """Predicted labels of X (float32 features, or :class:`RankedFeatures`)."""
    X = X.X if isinstance(X, RankedFeatures) else np.ascontiguousarray(X, dtype=np.float32)
    out = np.empty(X.shape[0], np.int64)
    _predict(X, tree.feature, tree.threshold, tree.left, tree.right, tree.leaf_class, out)
    return tree.classes[out]
