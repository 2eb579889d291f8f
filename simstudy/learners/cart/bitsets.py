"""Exact error counts of many trees on one fixed data set (e.g. a finite population)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numba
import numpy as np
from numba.core import types
from numba.core.extending import intrinsic

from simstudy.learners.cart.tree import CartTree, _leaf_of
from simstudy.learners.contracts import require_features, require_sample


@numba.njit(cache=True)
def _count_errors(X, y, feature, threshold, left, right, leaf_label):
    """Number of rows of X whose leaf label differs from y (no intermediate arrays)."""
    errors = 0
    for i in range(X.shape[0]):
        if leaf_label[_leaf_of(X, i, feature, threshold, left, right)] != y[i]:
            errors += 1
    return errors


@intrinsic
def _popcount(typingctx, x):
    """Number of set bits of a uint64 (LLVM's ctpop: one instruction where the CPU has popcnt)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen


#: Row bitsets are used when every feature has at most this many distinct values.
_BITSET_MAX_VALUES = 64


@numba.njit(cache=True)
def _build_bitsets(X, values, n_values, below):
    """below[f, j] = bitset of the rows i with X[i, f] <= values[f, j]."""
    n, p = X.shape
    for f in range(p):
        for i in range(n):
            x = X[i, f]
            word = i >> 6
            bit = np.uint64(1) << np.uint64(i & 63)
            for j in range(n_values[f]):
                if x <= values[f, j]:
                    below[f, j, word] |= bit


@numba.njit(cache=True)
def _tree_depth(left):
    """The depth of a tree (the root alone: 0) when children are numbered after their parent
    (as the grow kernel numbers them), else the number of nodes (a bound)."""
    depth = np.zeros(left.shape[0], np.int64)
    deepest = 0
    for node in range(left.shape[0]):
        if left[node] >= 0:
            if left[node] <= node or left[node] + 1 >= left.shape[0]:
                return left.shape[0]
            depth[left[node]] = depth[left[node] + 1] = depth[node] + 1
            deepest = max(deepest, depth[node] + 1)
    return deepest


@numba.njit(cache=True)
def _tree_errors_bitsets(feature, threshold, left, leaf_label, values, n_values, below, labels, wrong, all_rows):
    """Errors of one tree on the rows of a population, from row bitsets: a node's rows are its
    parent's AND (left) or AND NOT (right) the bitset of "x_f <= threshold"; a leaf adds the
    number of its rows whose label differs from the leaf's (counted from its parent's rows
    directly, without storing them). Depth first, one bitset per level."""
    n_words = all_rows.shape[0]
    n_nodes = feature.shape[0]
    rows = np.empty((_tree_depth(left) + 1, n_words), np.uint64)  # rows[level]
    rows[0] = all_rows
    st_node = np.empty(n_nodes + 1, np.int64)
    st_parent = np.empty(n_nodes + 1, np.int64)
    st_level = np.empty(n_nodes + 1, np.int64)
    st_node[0], st_parent[0], st_level[0] = 0, -1, 0
    top = 1
    errors = 0
    zero, ones = np.uint64(0), ~np.uint64(0)
    while top > 0:
        top -= 1
        node, parent, level = st_node[top], st_parent[top], st_level[top]
        leaf = left[node] < 0
        mask = wrong[labels.shape[0]]
        if leaf:  # its rows with another label are errors
            c = np.searchsorted(labels, leaf_label[node])
            if c < labels.shape[0] and labels[c] == leaf_label[node]:
                mask = wrong[c]
        if parent < 0:  # the root
            if leaf:
                for w in range(n_words):
                    errors += _popcount(all_rows[w] & mask[w])
                continue
        else:  # this node's rows: its parent's (at level - 1) AND the side of the split
            f = feature[parent]
            nv = n_values[f]
            j = np.searchsorted(values[f, :nv], threshold[parent], side="right") - 1  # x <= thr iff x <= values[j]
            go_left = node == left[parent]
            up = rows[level - 1]
            if j < 0 or j >= nv - 1:  # every row of the parent goes to one side
                whole = (j >= nv - 1) == go_left
                if leaf:
                    if whole:
                        for w in range(n_words):
                            errors += _popcount(up[w] & mask[w])
                    continue
                cur = rows[level]
                for w in range(n_words):
                    cur[w] = up[w] if whole else zero
            else:  # the side of "x_f <= values[f, j]": its bitset, or the complement (XOR all ones)
                bits = below[f, j]
                flip = zero if go_left else ones
                if leaf:
                    for w in range(n_words):
                        errors += _popcount(up[w] & (bits[w] ^ flip) & mask[w])
                    continue
                cur = rows[level]
                for w in range(n_words):
                    cur[w] = up[w] & (bits[w] ^ flip)
        # children: right pushed first so that the left subtree is done before the right child
        # overwrites the levels below this node
        st_node[top], st_parent[top], st_level[top] = left[node] + 1, node, level + 1
        top += 1
        st_node[top], st_parent[top], st_level[top] = left[node], node, level + 1
        top += 1
    return errors


@dataclass(frozen=True)
class PopulationBitsets:
    """A fixed data set as row bitsets, for counting the errors of many trees on it exactly.

    Built when every feature has at most 64 distinct values (Letter: 16): ``below[f, j]`` holds
    the rows with ``x_f <= values[f, j]``, ``wrong[c]`` the rows whose label is not
    ``labels[c]`` (``wrong[-1]``: every row). A tree's error count then costs a few hundred
    word operations per node instead of one descent per row.
    """

    values: np.ndarray    # (p, J) float64, distinct float32 values per feature, ascending
    n_values: np.ndarray  # (p,)
    below: np.ndarray     # (p, J, W) uint64
    labels: np.ndarray    # (C,) int64, ascending
    wrong: np.ndarray     # (C + 1, W) uint64
    all_rows: np.ndarray  # (W,) uint64
    n_rows: int

    @classmethod
    def build(cls, X: np.ndarray, y: np.ndarray) -> "PopulationBitsets | None":
        """Bitsets of float32 features X (n, p) and integer labels y, or None when a feature has
        more than 64 distinct values."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        n, p = X.shape
        distinct = [np.unique(X[:, f]) for f in range(p)]
        if max((len(d) for d in distinct), default=0) > _BITSET_MAX_VALUES:
            return None
        J = max(len(d) for d in distinct)
        values = np.full((p, J), np.inf)
        n_values = np.array([len(d) for d in distinct], dtype=np.int64)
        for f, d in enumerate(distinct):
            values[f, :len(d)] = d
        W = (n + 63) // 64
        below = np.zeros((p, J, W), np.uint64)
        _build_bitsets(X, values, n_values, below)
        all_rows = _bitset(np.ones(n, bool), W)
        labels = np.unique(np.asarray(y, dtype=np.int64))
        wrong = np.stack([_bitset(np.asarray(y) != c, W) for c in labels] + [all_rows])
        return cls(values, n_values, below, labels, wrong, all_rows, n)

    def errors(self, tree: CartTree) -> int:
        """Number of rows the tree misclassifies."""
        return int(_tree_errors_bitsets(tree.feature, tree.threshold, tree.left,
                                        tree.classes[tree.leaf_class].astype(np.int64), self.values, self.n_values,
                                        self.below, self.labels, self.wrong, self.all_rows))


def _bitset(mask: np.ndarray, n_words: int) -> np.ndarray:
    """Pack a boolean row mask into uint64 words (bit i of word i // 64 is row i)."""
    bits = np.packbits(np.concatenate([mask, np.zeros(n_words * 64 - len(mask), bool)]), bitorder="little")
    return bits.view("<u8").astype(np.uint64)  # little-endian words: row i is bit i % 64 of word i // 64


class _BitsetCache:
    """The bitsets of the last data set seen in this process: found by identity of the arrays
    (cheap, the usual case within a chunk), else by content (each chunk a worker receives
    carries its own copy of the population), else built."""

    def __init__(self):
        self.arrays: tuple | None = None
        self.content: tuple | None = None
        self.bitsets: PopulationBitsets | None = None

    def get(self, X: np.ndarray, y: np.ndarray) -> PopulationBitsets | None:
        if self.arrays is not None and self.arrays[0] is X and self.arrays[1] is y:
            return self.bitsets
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        y64 = np.ascontiguousarray(y, dtype=np.int64)
        content = (X32.shape, hashlib.sha1(X32.data).hexdigest(), hashlib.sha1(y64.data).hexdigest())
        if content != self.content:
            self.bitsets, self.content = PopulationBitsets.build(X32, y64), content
        self.arrays = (X, y)  # holding them keeps the identity check valid
        return self.bitsets


_BITSETS = _BitsetCache()


def population_errors(trees: list[CartTree], X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Error rates of several trees on the same data (e.g. a finite population).

    With few distinct values per feature (at most 64) the data's row bitsets are built once per
    process and data set (:class:`PopulationBitsets`); otherwise each row descends each tree.
    Both count exactly the rows with ``predict != y``.

    Parameters
    ----------
    trees : list of CartTree (integer class labels)
    X : ndarray (N, p), converted to float32 (the dtype the trees were grown on)
    y : ndarray (N,) integer labels
    """
    require_sample("CART population errors", X, y)
    if trees:  # one reduction over all the trees' split features
        require_features("CART population errors", X, int(np.concatenate([t.feature for t in trees]).max()) + 1)
    bitsets = _BITSETS.get(X, y)
    if bitsets is not None:
        return np.array([bitsets.errors(t) for t in trees]) / bitsets.n_rows
    X = np.ascontiguousarray(X, dtype=np.float32)
    y = np.ascontiguousarray(y, dtype=np.int64)
    return np.array([_count_errors(X, y, t.feature, t.threshold, t.left, t.right,
                                   t.classes[t.leaf_class].astype(np.int64)) for t in trees]) / len(y)
