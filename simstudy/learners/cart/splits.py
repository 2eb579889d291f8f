"""The per-feature split scans of the grow kernel, and its per-node feature order.

The grow loop (:func:`simstudy.learners.cart.grow._grow`) finds a node's best split feature
by feature, each by the cheapest exact scan, all with the same candidates, proxy and tie rule
(thresholds in increasing order, the first strictly larger proxy of a feature wins; between
features, the tie rule of :data:`simstudy.learners.cart.params.TIE_RULES`: a uniform draw among the
tied features, or the first of a random order drawn for every node by :func:`_shuffle`):

- the node has a pool histogram (:mod:`simstudy.learners.cart.pool`): scan its bins
  (:func:`_best_split_in_bins`), for two-class Gini all features at once
  (:func:`_gini2_scan_all_features`, SIMD);
- a small node (fewer samples than an eighth of the feature's distinct values, or at most
  ``_POOL_MIN_SAMPLES``): sort its ranks, O(m log m);
- otherwise: class counts per rank from one pass over its samples, then a bin scan,
  O(m + number of distinct values).
"""
from __future__ import annotations

import numba
import numpy as np

from simstudy.learners.cart.criteria import _split_proxy
from simstudy.learners.cart.pool import _max_values


@numba.njit(inline="always", cache=True)
def _new_scratch(sample, m):
    """Work arrays for growing a tree on ``m`` rows of ``sample`` (p features, C classes, J
    distinct values at most per feature), allocated once per tree:

    features (p,) the feature order, shuffled at every node; node_counts, left_counts,
    right_counts (C,) class counts of the node and of the two sides of a candidate split;
    ybuf, order, idx, tmp, sorted_y (m,) the node's labels, and one feature's ranks sorted, their
    positions, unsorted, their labels; hist (C, J, 1) class counts per rank of one feature (zero
    between uses); cum0, cum1, feat_proxy, feat_rank (p,) the all-feature scan's running counts
    and best split per feature; tied_feature, tied_rank (p,) the best splits tied so far;
    merge_buf (m,) the merge sort's second buffer.
    """
    p, n_classes = sample.ranks.shape[0], sample.n_classes
    return (np.arange(p), np.zeros(n_classes), np.zeros(n_classes), np.zeros(n_classes),
            np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.int64),
            np.empty(m, np.int64), np.zeros((n_classes, _max_values(sample.n_values), 1)),
            np.empty(p), np.empty(p), np.empty(p), np.empty(p, np.int64), np.empty(p, np.int64),
            np.empty(p, np.int64), np.empty(m, np.int64))


@numba.njit(cache=True, _nrt=False)
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


@numba.njit(cache=True, _nrt=False, error_model="numpy")
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
    distinct values come that close with :func:`_best_split_in_bins`. The update is a max and a
    select rather than a conditional store of both (which compiles to masked stores: 1.4-2.8x
    slower per scan on this machine's AMD cores).
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
            # a valid candidate (never NaN: both sides hold >= min_leaf >= 1 samples) or -inf; the
            # best proxy as a max (the same value as keeping the first strictly larger one)
            valid = (h0 + h1 > 0.0) & (nl >= lim) & (nr >= lim)
            candidate = proxy if valid else -np.inf
            old = best_proxy[f]
            best_rank[f] = r if candidate > old else best_rank[f]
            best_proxy[f] = max(old, candidate)


@numba.njit(inline="always", cache=True)
def _shuffle(features):
    """Fisher-Yates: a uniformly random feature order (numba's generator, seeded per tree), as
    scikit-learn visits features in a random order at every node.

    Called from the grow loop itself, not from another inlined helper: numba cannot prune the
    reference counting of the arrays a helper receives when a call it does not inline (here its C
    random generator) lies within their lifetime, and would pay it at every node."""
    for a in range(features.shape[0] - 1, 0, -1):
        b = np.random.randint(0, a + 1)
        features[a], features[b] = features[b], features[a]
