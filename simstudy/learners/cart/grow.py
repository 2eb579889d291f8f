"""Growing one tree: the depth-first growth kernel and :func:`fit_cart`."""
from __future__ import annotations

import numba
import numpy as np

from simstudy.learners.cart.criteria import (_ENTROPY, _EPSILON, _GINI, _child_may_split, _impurity,
                                             _split_proxy, _threshold)
from simstudy.learners.cart.pool import _POOL_MIN_SAMPLES, _new_pool
from simstudy.learners.cart.ranking import RankedFeatures
from simstudy.learners.cart.splits import _best_split_in_bins, _gini2_scan_all_features
from simstudy.learners.cart.tree import CartTree


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
