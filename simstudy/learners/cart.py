"""An exact CART classification tree in numba, a drop-in for scikit-learn's default tree.

It grows the same tree as ``sklearn.tree.DecisionTreeClassifier`` (splitter "best",
criterion "gini", "entropy" or "log_loss", any ``max_depth``, ``min_samples_split``,
``min_samples_leaf``, ``max_features=None``, no weights) much faster on the small training sets
of simulation studies:

- Each feature is ranked once per sample (its distinct values, sorted; training folds reuse the
  sample's ranks, where absent values are empty ranks); a node then
  finds its best split on that feature from class counts per rank, gathered in one pass
  (O(node size + number of distinct values)), or by sorting the node's ranks when the node is
  small compared with the number of distinct values. Both are exact.
- With at most 64 distinct values per feature (Letter has 16), a node's class counts per
  (class, rank, feature) live in a pool slot: a split builds the smaller child's counts from its
  samples and gets the larger child's by subtraction; for two-class Gini all features are
  scanned at once by a branch-free loop with the feature innermost (SIMD), other criteria
  feature by feature. Nodes of at most 4 samples sort their samples instead.
- :func:`cross_validate_cart` grows the K fold trees of a sample and predicts the held-out
  folds in one compiled call (the trees of ``fit_cart`` on each training fold).
- Candidate thresholds, the split criterion and the stopping rules are scikit-learn's:
  threshold = midpoint of two consecutive distinct values (the lower value if the midpoint
  rounds up to the upper one), splits between values closer than 1e-7 are skipped, the Gini
  proxy sum_c n_{c,L}^2 / n_L + sum_c n_{c,R}^2 / n_R (entropy: -n_L H_L - n_R H_R, log base 2)
  is maximised, a node is a leaf when it has fewer than ``min_samples_split`` samples, fewer than
  ``2 min_samples_leaf``, impurity <= machine epsilon, reaches ``max_depth``, or has no valid
  split.
- Ties: features are visited in a uniformly random order drawn for every node (scikit-learn
  also visits them in a random order), thresholds of a feature in increasing order, and the
  first split with a strictly larger criterion wins. With continuous features (no exact ties)
  the tree is identical to scikit-learn's; with tied candidates (common on integer features
  such as Letter's) both pick uniformly random feature orders but from different random
  streams, so individual trees can differ while their distribution is the same (tested).
- Prediction: the majority class of the leaf, the lowest class index on ties (as ``argmax``).
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from numba.core import types
from numba.core.extending import intrinsic


@dataclass(frozen=True)
class CrossValidation:
    """Losses and fold models of :func:`cross_validate_cart` (temporary)."""

    losses: np.ndarray
    models: list | None

__all__ = ["CartTree", "CartLearner", "RankedFeatures", "cross_validate_cart", "fit_cart",
           "population_errors", "predict_cart", "supported_tree_params", "warm_up"]

_FEATURE_THRESHOLD = 1e-7
_EPSILON = np.finfo(np.float64).eps
_GINI, _ENTROPY = 0, 1


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


@numba.njit(cache=True)
def _impurity(counts, n, criterion):
    if n <= 0:
        return 0.0
    out = 0.0
    if criterion == _GINI:
        sq = 0.0
        for c in range(counts.shape[0]):
            sq += counts[c] * counts[c]
        return 1.0 - sq / (n * n)
    for c in range(counts.shape[0]):
        if counts[c] > 0:
            p = counts[c] / n
            out -= p * math.log(p) / math.log(2.0)
    return out


@numba.njit(cache=True)
def _proxy(left, n_left, right, n_right, criterion):
    if criterion == _GINI and left.shape[0] == 2:
        return (left[0] * left[0] + left[1] * left[1]) / n_left + (right[0] * right[0] + right[1] * right[1]) / n_right
    if criterion == _GINI:
        sl = 0.0
        sr = 0.0
        for c in range(left.shape[0]):
            sl += left[c] * left[c]
            sr += right[c] * right[c]
        return sl / n_left + sr / n_right
    return -n_right * _impurity(right, n_right, criterion) - n_left * _impurity(left, n_left, criterion)


@numba.njit(cache=True)
def _split_proxy(low_value, high_value, left_counts, node_counts, right_counts, n_left, m, min_leaf, criterion):
    """Criterion proxy of the split between two consecutive values (left = values <= low);
    -inf when scikit-learn would not consider it (values closer than 1e-7, a leaf too small)."""
    if high_value <= low_value + _FEATURE_THRESHOLD:
        return -np.inf
    n_right = m - n_left
    if n_left < min_leaf or n_right < min_leaf:
        return -np.inf
    for c in range(node_counts.shape[0]):
        right_counts[c] = node_counts[c] - left_counts[c]
    return _proxy(left_counts, n_left, right_counts, n_right, criterion)


@numba.njit(cache=True)
def _threshold(low_value, high_value):
    """scikit-learn's threshold: the midpoint, or the lower value if the midpoint rounds up."""
    thr = low_value / 2.0 + high_value / 2.0
    if thr == high_value or thr == np.inf or thr == -np.inf:
        thr = low_value
    return thr


_POOL_MAX_VALUES = 64
_POOL_SLOTS = 128
#: Nodes with at most this many samples are split from their samples, not from pool histograms.
_POOL_MIN_SAMPLES = 4


@numba.njit(cache=True)
def _best_split_in_bins(counts, f, lo, hi, values_f, node_counts, m, min_leaf, criterion, left_counts, right_counts,
                        clear):
    """Best split of feature ``f`` from its class counts per rank ``counts[:, lo..hi, f]`` (bins
    in increasing value; the first strictly best candidate wins). Returns (proxy, rank): ranks
    <= rank go left; proxy -inf when no candidate is valid. The threshold and the children's
    class counts are derived by the caller when it partitions the node.
    ``clear`` zeroes the bins on the way (scratch histograms)."""
    n_classes = node_counts.shape[0]
    best_proxy, best_rank = -np.inf, -1
    left_counts[:] = 0.0
    n_left = 0
    prev = -1
    for r in range(lo, hi + 1):
        cnt = 0.0
        for c in range(n_classes):
            cnt += counts[c, r, f]
        if cnt == 0.0:
            continue
        if prev >= 0:
            proxy = _split_proxy(values_f[prev], values_f[r], left_counts, node_counts, right_counts,
                                 n_left, m, min_leaf, criterion)
            if proxy > best_proxy:
                best_proxy, best_rank = proxy, prev
        for c in range(n_classes):
            left_counts[c] += counts[c, r, f]
            if clear:
                counts[c, r, f] = 0.0
        n_left += int(cnt)
        prev = r
    return best_proxy, best_rank


@numba.njit(cache=True, error_model="numpy")
def _gini2_scan_all_features(counts, n0, n1, m, min_leaf, n_bins, cum0, cum1, best_proxy, best_rank):
    """Best Gini split of every feature at once, two classes, from a node's histogram
    ``counts[class, rank, feature]``.

    The same candidates, proxy and tie rule as :func:`_best_split_in_bins` (the proxy
    (l0^2 + l1^2)/n_L + (r0^2 + r1^2)/n_R of eq. 9.13 of Breiman et al., evaluated in the same
    floating-point order; the first strictly larger candidate of a feature wins), written with
    the feature as the inner, branch-free loop so that it compiles to SIMD code. A split after
    rank r is a candidate when bin r is not empty and both sides keep ``min_leaf`` samples
    (then a later bin is not empty either: the split lies between two consecutive present
    values). The 1e-7 closeness rule is not checked here: callers scan features whose
    distinct values come that close with :func:`_best_split_in_bins`.
    """
    p = counts.shape[2]
    mf = float(m)
    lim = float(min_leaf)
    for f in range(p):
        cum0[f] = 0.0
        cum1[f] = 0.0
        best_proxy[f] = -np.inf
        best_rank[f] = -1
    for r in range(n_bins):
        for f in range(p):
            h0 = counts[0, r, f]
            h1 = counts[1, r, f]
            l0 = cum0[f] + h0
            l1 = cum1[f] + h1
            cum0[f] = l0
            cum1[f] = l1
            nl = l0 + l1
            nr = mf - nl
            r0 = n0 - l0
            r1 = n1 - l1
            proxy = (l0 * l0 + l1 * l1) / nl + (r0 * r0 + r1 * r1) / nr
            better = (h0 + h1 > 0.0) & (nl >= lim) & (nr >= lim) & (proxy > best_proxy[f])
            best_proxy[f] = proxy if better else best_proxy[f]
            best_rank[f] = r if better else best_rank[f]


@numba.njit(cache=True)
def _child_may_split(counts, m_child, depth, criterion, max_depth, min_split, min_leaf):
    """Whether a child with class counts ``counts`` can be split further (is not a leaf)."""
    if m_child < min_split or m_child < 2 * min_leaf or (max_depth >= 0 and depth >= max_depth):
        return False
    return _impurity(counts, m_child, criterion) > _EPSILON


@numba.njit(cache=True)
def _new_pool(n_values, n_classes, p):
    """Scratch histograms for :func:`_grow`: (slots, classes, ranks, features), or one dummy
    slot when a feature has too many distinct values for histogram subtraction to pay."""
    max_values = 0
    for f in range(p):
        max_values = max(max_values, n_values[f])
    if max_values <= _POOL_MAX_VALUES:
        return np.empty((_POOL_SLOTS, n_classes, max_values, p))
    return np.empty((1, 1, 1, 1))


@numba.njit(cache=True)
def _grow(ranks, values, n_values, close, y, n_classes, samples, criterion, max_depth, min_split, min_leaf, seed,
          pool):
    """Grow one tree on the rows ``samples`` of a ranked sample (``ranks[f, i]``, labels ``y[i]``
    encoded 0..n_classes-1); ``samples`` is reordered in place, ``pool`` comes from :func:`_new_pool`.
    Returns the node arrays (feature, threshold, left, right, leaf class)."""
    p = ranks.shape[0]
    n = samples.shape[0]
    np.random.seed(seed)
    features = np.arange(p)
    cap = 2 * n + 1
    feature = np.full(cap, -1, np.int64)
    threshold = np.zeros(cap)
    left = np.full(cap, -1, np.int64)
    right = np.full(cap, -1, np.int64)
    leaf_class = np.zeros(cap, np.int64)
    # stack of (start, end, depth, node id, pool slot)
    st_start = np.empty(cap, np.int64)
    st_end = np.empty(cap, np.int64)
    st_depth = np.empty(cap, np.int64)
    st_node = np.empty(cap, np.int64)
    st_slot = np.full(cap, -1, np.int64)
    st_start[0], st_end[0], st_depth[0], st_node[0] = 0, n, 0, 0
    top = 1
    node_count = 1
    max_values = 0
    for f in range(p):
        max_values = max(max_values, n_values[f])
    hist = np.zeros((n_classes, max_values, 1))
    # Histogram subtraction (few distinct values): a node's class counts per (class, rank,
    # feature) are kept in a pool slot; a split builds the smaller child's from its samples and
    # turns the parent's slot into the larger child's by subtraction. The split search then
    # scans bins (all features at once for two-class Gini).
    use_pool = pool.shape[0] > 1
    n_slots = pool.shape[0] if use_pool else 0
    free = np.arange(max(n_slots, 1) - 1, -1, -1)
    n_free = n_slots
    vector_scan = use_pool and n_classes == 2 and criterion == _GINI
    cum0 = np.empty(p)
    cum1 = np.empty(p)
    feat_proxy = np.empty(p)
    feat_rank = np.empty(p, np.int64)
    child_left_counts = np.zeros(n_classes)
    child_counts = np.zeros(n_classes)
    if use_pool:
        n_free -= 1
        root = free[n_free]
        pool[root] = 0.0
        for i in range(n):
            s_idx = samples[i]
            hs = pool[root, y[s_idx]]
            for f in range(p):  # features inner: independent increments
                hs[ranks[f, s_idx], f] += 1.0
        st_slot[0] = root
    node_counts = np.zeros(n_classes)
    left_counts = np.zeros(n_classes)
    right_counts = np.zeros(n_classes)
    order_buf = np.empty(n, np.int64)
    tmp_buf = np.empty(n, np.int64)
    idx_buf = np.empty(n, np.int64)
    sorted_y = np.empty(n, np.int64)
    ybuf = np.empty(n, np.int64)
    while top > 0:
        top -= 1
        start, end, depth, node = st_start[top], st_end[top], st_depth[top], st_node[top]
        slot = st_slot[top]
        m = end - start
        if slot >= 0 and m <= _POOL_MIN_SAMPLES:  # small node: scanning every bin costs more than its samples
            free[n_free] = slot
            n_free += 1
            slot = -1
        node_counts[:] = 0.0
        for i in range(start, end):
            node_counts[y[samples[i]]] += 1.0
        best_c = 0
        for c in range(1, n_classes):
            if node_counts[c] > node_counts[best_c]:
                best_c = c
        leaf_class[node] = best_c
        impurity = _impurity(node_counts, m, criterion)
        if m < min_split or m < 2 * min_leaf or impurity <= _EPSILON or (max_depth >= 0 and depth >= max_depth):
            if slot >= 0:
                free[n_free] = slot
                n_free += 1
            continue
        for i in range(m):  # the node's labels, gathered once for all features
            ybuf[i] = y[samples[start + i]]
        best_proxy = -np.inf
        best_feature = -1
        best_rank = -1  # split: rank <= best_rank goes left
        for a in range(p - 1, 0, -1):  # Fisher-Yates: a uniformly random feature order per node
            b = np.random.randint(0, a + 1)
            features[a], features[b] = features[b], features[a]
        if slot >= 0 and vector_scan:
            _gini2_scan_all_features(pool[slot], node_counts[0], node_counts[1], m, min_leaf, max_values,
                                     cum0, cum1, feat_proxy, feat_rank)
        for f in features:
            nv = n_values[f]
            if slot >= 0 and vector_scan and not close[f]:  # found by the all-feature scan
                if feat_proxy[f] > best_proxy:
                    best_proxy, best_feature, best_rank = feat_proxy[f], f, feat_rank[f]
            elif slot >= 0:  # class counts per rank from the pool: scan bins only
                proxy, rank = _best_split_in_bins(pool[slot], f, 0, nv - 1, values[f], node_counts, m, min_leaf,
                                                  criterion, left_counts, right_counts, False)
                if proxy > best_proxy:
                    best_proxy, best_feature, best_rank = proxy, f, rank
            elif m * 8 < nv or m <= _POOL_MIN_SAMPLES:  # small node: sort its ranks
                frow = ranks[f]
                if m <= _POOL_MIN_SAMPLES:  # stable insertion sort of (rank, position)
                    for i in range(m):
                        r = frow[samples[start + i]]
                        j = i
                        while j > 0 and order_buf[j - 1] > r:
                            order_buf[j] = order_buf[j - 1]
                            idx_buf[j] = idx_buf[j - 1]
                            j -= 1
                        order_buf[j] = r
                        idx_buf[j] = i
                    for i in range(m):
                        sorted_y[i] = ybuf[idx_buf[i]]
                else:
                    for i in range(m):
                        tmp_buf[i] = frow[samples[start + i]]
                    idx = np.argsort(tmp_buf[:m], kind="mergesort")
                    for i in range(m):
                        order_buf[i] = tmp_buf[idx[i]]
                        sorted_y[i] = ybuf[idx[i]]
                left_counts[:] = 0.0
                n_left = 0
                for j in range(m - 1):
                    left_counts[sorted_y[j]] += 1.0
                    n_left += 1
                    r0 = order_buf[j]
                    r1 = order_buf[j + 1]
                    if r1 == r0:
                        continue
                    proxy = _split_proxy(values[f, r0], values[f, r1], left_counts, node_counts, right_counts,
                                         n_left, m, min_leaf, criterion)
                    if proxy > best_proxy:
                        best_proxy, best_feature, best_rank = proxy, f, r0
            else:  # histogram of class counts per rank, built from the node's samples
                lo = nv
                hi = -1
                frow = ranks[f]
                for i in range(m):
                    r = frow[samples[start + i]]
                    hist[ybuf[i], r, 0] += 1.0
                    if r < lo:
                        lo = r
                    if r > hi:
                        hi = r
                proxy, rank = _best_split_in_bins(hist, 0, lo, hi, values[f], node_counts, m, min_leaf, criterion,
                                                  left_counts, right_counts, True)
                if proxy > best_proxy:
                    best_proxy, best_feature, best_rank = proxy, f, rank
        if best_feature < 0:
            if slot >= 0:
                free[n_free] = slot
                n_free += 1
            continue
        # partition samples[start:end]: rank <= best_rank to the left; the threshold lies between
        # the best rank's value and the next value present in the node
        next_rank = n_values[best_feature]
        i, j = start, end - 1
        frow = ranks[best_feature]
        while i <= j:
            r = frow[samples[i]]
            if r <= best_rank:
                i += 1
            else:
                if r < next_rank:
                    next_rank = r
                samples[i], samples[j] = samples[j], samples[i]
                j -= 1
        best_thr = _threshold(values[best_feature, best_rank], values[best_feature, next_rank])
        feature[node] = best_feature
        threshold[node] = best_thr
        left[node] = node_count
        right[node] = node_count + 1
        slot_left = -1
        slot_right = -1
        if slot >= 0:
            m_left = i - start
            m_right = end - i
            child_left_counts[:] = 0.0
            for k in range(start, i):
                child_left_counts[y[samples[k]]] += 1.0
            grow_left = _child_may_split(child_left_counts, m_left, depth + 1, criterion, max_depth, min_split,
                                         min_leaf)
            for c in range(n_classes):
                child_counts[c] = node_counts[c] - child_left_counts[c]
            grow_right = _child_may_split(child_counts, m_right, depth + 1, criterion, max_depth, min_split,
                                          min_leaf)
            lo_i, hi_i = (start, i) if m_left <= m_right else (i, end)
            large_grows = grow_right if m_left <= m_right else grow_left
            if hi_i - lo_i <= _POOL_MIN_SAMPLES and large_grows and max(m_left, m_right) > _POOL_MIN_SAMPLES:
                # tiny smaller child: it gets no slot; the parent's slot becomes the larger child's
                # by removing the tiny child's samples one by one
                for k in range(lo_i, hi_i):
                    s_idx = samples[k]
                    hs = pool[slot, y[s_idx]]
                    for f in range(p):
                        hs[ranks[f, s_idx], f] -= 1.0
                if m_left <= m_right:
                    slot_right = slot
                else:
                    slot_left = slot
            elif (grow_left or grow_right) and n_free > 0 and hi_i - lo_i > _POOL_MIN_SAMPLES:
                n_free -= 1
                small = free[n_free]
                pool[small] = 0.0
                for k in range(lo_i, hi_i):  # features inner: independent increments
                    s_idx = samples[k]
                    hs = pool[small, y[s_idx]]
                    for f in range(p):
                        hs[ranks[f, s_idx], f] += 1.0
                small_grows = grow_left if m_left <= m_right else grow_right
                if large_grows:
                    pool[slot] -= pool[small]
                    large_slot = slot
                else:
                    free[n_free] = slot
                    n_free += 1
                    large_slot = -1
                if small_grows:
                    small_slot = small
                else:
                    free[n_free] = small
                    n_free += 1
                    small_slot = -1
                slot_left, slot_right = (small_slot, large_slot) if m_left <= m_right else (large_slot, small_slot)
            else:
                free[n_free] = slot
                n_free += 1
        # push right then left (depth first, left first)
        st_start[top], st_end[top], st_depth[top], st_node[top] = i, end, depth + 1, node_count + 1
        st_slot[top] = slot_right
        top += 1
        st_start[top], st_end[top], st_depth[top], st_node[top] = start, i, depth + 1, node_count
        st_slot[top] = slot_left
        top += 1
        node_count += 2
    return feature[:node_count], threshold[:node_count], left[:node_count], right[:node_count], leaf_class[:node_count]


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


def fit_cart(X, y: np.ndarray, seed: int, criterion: str = "gini", max_depth: int | None = None,
             min_samples_split: int = 2, min_samples_leaf: int = 1) -> CartTree:
    """Grow a tree on features X (n, p) (an array, or :class:`RankedFeatures`) and labels y (n,).

    Parameters
    ----------
    seed : int
        Seeds the random feature order of every node.
    criterion : {"gini", "entropy", "log_loss"}
    max_depth, min_samples_split, min_samples_leaf : as in scikit-learn (integers).
    """
    ranked = X if isinstance(X, RankedFeatures) else RankedFeatures.from_array(X)
    classes, y_enc = np.unique(y, return_inverse=True)
    crit = _GINI if criterion == "gini" else _ENTROPY
    ranks, values, n_values = ranked.ranks, ranked.values, ranked.n_values
    pool = _new_pool(n_values, len(classes), ranks.shape[0])
    out = _grow(ranks, values, n_values, ranked.close, y_enc.astype(np.int64), len(classes),
                np.arange(ranks.shape[1]), crit, -1 if max_depth is None else int(max_depth),
                int(min_samples_split), int(min_samples_leaf), int(seed) % (2**32 - 1), pool)
    return CartTree(*out, classes=classes)


@numba.njit(cache=True)
def _count_errors(X, y, feature, threshold, left, right, leaf_label):
    """Number of rows of X whose leaf label differs from y (no intermediate arrays)."""
    errors = 0
    for i in range(X.shape[0]):
        if leaf_label[_leaf_of(X, i, feature, threshold, left, right)] != y[i]:
            errors += 1
    return errors


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
def _tree_errors_bitsets(feature, threshold, left, leaf_label, values, n_values, below, labels, wrong, all_rows):
    """Errors of one tree on the rows of a population, from row bitsets: a node's rows are its
    parent's AND (left) or AND NOT (right) the bitset of "x_f <= threshold"; a leaf adds the
    number of its rows whose label differs from the leaf's. Depth first, one bitset per level."""
    n_words = all_rows.shape[0]
    n_nodes = feature.shape[0]
    rows = np.empty((n_nodes + 1, n_words), np.uint64)  # rows[level]; depth < number of nodes
    rows[0] = all_rows
    st_node = np.empty(n_nodes + 1, np.int64)
    st_parent = np.empty(n_nodes + 1, np.int64)
    st_level = np.empty(n_nodes + 1, np.int64)
    st_node[0], st_parent[0], st_level[0] = 0, -1, 0
    top = 1
    errors = 0
    while top > 0:
        top -= 1
        node, parent, level = st_node[top], st_parent[top], st_level[top]
        if parent >= 0:  # this node's rows from its parent's (at level - 1)
            f = feature[parent]
            nv = n_values[f]
            j = np.searchsorted(values[f, :nv], threshold[parent], side="right") - 1  # x <= thr iff x <= values[j]
            go_left = node == left[parent]
            cur = rows[level]
            up = rows[level - 1]
            if j < 0:
                for w in range(n_words):
                    cur[w] = np.uint64(0) if go_left else up[w]
            elif j >= nv - 1:
                for w in range(n_words):
                    cur[w] = up[w] if go_left else np.uint64(0)
            else:
                bits = below[f, j]
                if go_left:
                    for w in range(n_words):
                        cur[w] = up[w] & bits[w]
                else:
                    for w in range(n_words):
                        cur[w] = up[w] & ~bits[w]
        if left[node] < 0:  # leaf: its rows with another label are errors
            c = np.searchsorted(labels, leaf_label[node])
            mask = wrong[c] if c < labels.shape[0] and labels[c] == leaf_label[node] else wrong[labels.shape[0]]
            cur = rows[level]
            for w in range(n_words):
                errors += _popcount(cur[w] & mask[w])
            continue
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
    bitsets = _BITSETS.get(X, y)
    if bitsets is not None:
        return np.array([bitsets.errors(t) for t in trees]) / bitsets.n_rows
    X = np.ascontiguousarray(X, dtype=np.float32)
    y = np.ascontiguousarray(y, dtype=np.int64)
    return np.array([_count_errors(X, y, t.feature, t.threshold, t.left, t.right,
                                   t.classes[t.leaf_class].astype(np.int64)) for t in trees]) / len(y)


def warm_up() -> None:
    """Run the kernels once on tiny data (a fresh process then has them loaded from numba's cache)."""
    X = (np.arange(40, dtype=np.float32) % 3).reshape(20, 2)
    y = np.arange(20) % 2
    cv = cross_validate_cart(X, y, np.arange(20) % 2, 2, [0, 1])
    population_errors(cv.models, X, y)


def predict_cart(tree: CartTree, X) -> np.ndarray:
    """Predicted labels of X (float32 features, or :class:`RankedFeatures`)."""
    X = X.X if isinstance(X, RankedFeatures) else np.ascontiguousarray(X, dtype=np.float32)
    out = np.empty(X.shape[0], np.int64)
    _predict(X, tree.feature, tree.threshold, tree.left, tree.right, tree.leaf_class, out)
    return tree.classes[out]


_DEFAULTS = {"splitter": "best", "max_features": None, "max_leaf_nodes": None, "min_impurity_decrease": 0.0,
             "class_weight": None, "ccp_alpha": 0.0, "min_weight_fraction_leaf": 0.0, "monotonic_cst": None}


def supported_tree_params(estimator) -> tuple[bool, str]:
    """Whether :class:`CartLearner` reproduces this scikit-learn estimator, and why not."""
    from sklearn.tree import DecisionTreeClassifier

    if type(estimator) is not DecisionTreeClassifier:
        return False, f"{type(estimator).__name__} is not sklearn.tree.DecisionTreeClassifier"
    params = estimator.get_params(deep=False)
    if params["criterion"] not in ("gini", "entropy", "log_loss"):
        return False, f"criterion={params['criterion']!r}"
    for key, default in _DEFAULTS.items():
        if key in params and params[key] != default:
            return False, f"{key}={params[key]!r} (only {default!r} is reproduced)"
    for key in ("min_samples_split", "min_samples_leaf"):
        if not isinstance(params[key], (int, np.integer)):
            return False, f"{key}={params[key]!r} (fractions are not reproduced)"
    return True, ""


class CartLearner:
    """The numba tree behind the same interface as :class:`~simstudy.learners.sklearn.SklearnLearner`.

    Parameters
    ----------
    estimator : DecisionTreeClassifier
        Its parameters are reproduced (see :func:`supported_tree_params`); its ``random_state``
        seeds the feature orders when set, otherwise each fit draws a seed from the replicate's
        generator.
    """

    dtype = np.float32

    def __init__(self, estimator, name: str = "tree"):
        ok, why = supported_tree_params(estimator)
        if not ok:
            raise ValueError(f"the numba tree cannot reproduce this estimator: {why}")
        params = estimator.get_params(deep=False)
        self.name = name
        self.template = estimator
        self.criterion = params["criterion"]
        self.max_depth = params["max_depth"]
        self.min_samples_split = int(params["min_samples_split"])
        self.min_samples_leaf = int(params["min_samples_leaf"])
        self.random_state = params["random_state"]
        self.params = {k: repr(v) for k, v in params.items()}
        self.fast_path = True

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "estimator": "DecisionTreeClassifier", "engine": "simstudy numba CART",
                "params": dict(self.params)}

    def __getstate__(self) -> dict[str, Any]:
        # workers get the parameters, not the scikit-learn estimator (no scikit-learn import there)
        return {k: v for k, v in self.__dict__.items() if k != "template"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, template=None)

    task = "classification"

    def start(self, sample) -> "CartState":
        """Rank the sample's features once; fits are row subsets of the result."""
        return CartState(RankedFeatures.from_array(sample.X), np.asarray(sample.y))

    def _seed(self, rng: np.random.Generator) -> int:
        if isinstance(self.random_state, (int, np.integer)):
            return int(self.random_state)
        return int(rng.integers(0, 2**31 - 1))

    def fit(self, state: "CartState", rows: np.ndarray, rng: np.random.Generator) -> CartTree:
        return fit_cart(state.ranked[rows], state.y[rows], self._seed(rng), self.criterion, self.max_depth,
                        self.min_samples_split, self.min_samples_leaf)

    def predict(self, state: "CartState", model: CartTree, rows: np.ndarray) -> np.ndarray:
        return predict_cart(model, state.ranked.X[rows])

    def predict_features(self, model: CartTree, X: np.ndarray) -> np.ndarray:
        return predict_cart(model, X)

    def cross_validate(self, state: "CartState", labels: np.ndarray, K: int, rng: np.random.Generator,
                       keep_models: bool = True):
        """K-fold CV in one compiled call; the same trees, seeds and predictions as :meth:`fit` and
        :meth:`predict` fold by fold (one seed drawn from ``rng`` per fold, in fold order)."""
        from simstudy.learners.base import Folds

        seeds = [self._seed(rng) for _ in range(K)]
        cv = cross_validate_cart(state.ranked, state.y, labels, K, seeds, self.criterion, self.max_depth,
                                 self.min_samples_split, self.min_samples_leaf, True)
        predictions = np.empty_like(state.y)
        for k, tree in enumerate(cv.models):  # temporary: the kernel will return the predictions
            test = labels == k
            predictions[test] = predict_cart(tree, state.ranked.X[test])
        return Folds(predictions, cv.models if keep_models else None)

    def population_errors(self, models: list[CartTree], population) -> np.ndarray:
        """Exact error rates of fitted trees on a finite population, in one pass (row bitsets)."""
        return population_errors(models, population.features(np.float32), population.y)


@dataclass(frozen=True)
class CartState:
    """A sample prepared for the tree: ranked features and labels."""

    ranked: RankedFeatures
    y: np.ndarray
