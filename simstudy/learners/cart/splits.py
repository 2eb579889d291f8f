"""The best split of one feature at a node, from its class counts per rank."""
from __future__ import annotations

import numba
import numpy as np

from simstudy.learners.cart.criteria import _split_proxy


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
