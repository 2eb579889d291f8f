"""What a node's class counts decide: its class, its impurity, the proxy of a split, leaf or not.

scikit-learn's rules: Gini impurity 1 - sum_c p_c^2 or entropy -sum_c p_c log2 p_c; the split
proxy it maximises, sum_c n_{c,L}^2 / n_L + sum_c n_{c,R}^2 / n_R for Gini (eq. 9.13 of
Breiman et al.) and -n_L H_L - n_R H_R for entropy; the threshold between two consecutive
values; the stopping rules; and the majority class, the lowest class index on ties.
"""
from __future__ import annotations

import math

import numba
import numpy as np

_FEATURE_THRESHOLD = 1e-7
_EPSILON = np.finfo(np.float64).eps
_GINI, _ENTROPY = 0, 1


@numba.njit(inline="always", cache=True)
def _impurity(counts, n, criterion):
    """Impurity of a node with class counts ``counts`` and ``n`` samples: Gini 1 - sum_c p_c^2,
    entropy -sum_c p_c log2 p_c."""
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


@numba.njit(cache=True, _nrt=False)
def _proxy(left, n_left, right, n_right, criterion):
    """scikit-learn's proxy of a split's impurity improvement (larger is better) from the
    children's class counts: Gini sum_c l_c^2 / n_L + sum_c r_c^2 / n_R, entropy
    -n_R H_R - n_L H_L."""
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


@numba.njit(cache=True, _nrt=False)
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


@numba.njit(inline="always", cache=True)
def _threshold(low_value, high_value):
    """scikit-learn's threshold: the midpoint, or the lower value if the midpoint rounds up."""
    thr = low_value / 2.0 + high_value / 2.0
    if thr == high_value or thr == np.inf or thr == -np.inf:
        thr = low_value
    return thr


@numba.njit(inline="always", cache=True)
def _may_split(counts, m, depth, rules):
    """Whether a node of ``m`` samples with class counts ``counts`` at ``depth`` may be split:
    it has at least ``min_split`` and ``2 min_leaf`` samples, lies above ``max_depth`` (-1: no
    limit) and has impurity above machine epsilon. ``rules``: the grow kernel's rules tuple."""
    if m < rules.min_split or m < 2 * rules.min_leaf or (rules.max_depth >= 0 and depth >= rules.max_depth):
        return False
    return _impurity(counts, m, rules.criterion) > _EPSILON


@numba.njit(inline="always", cache=True)
def _count_classes(y, samples, start, end, counts):
    """counts[c] = number of rows ``samples[start:end]`` of class c (labels ``y`` encoded 0..C-1)."""
    counts[:] = 0.0
    for i in range(start, end):
        counts[y[samples[i]]] += 1.0


@numba.njit(inline="always", cache=True)
def _majority(counts):
    """The class with the most samples, the lowest index on ties (as ``argmax``)."""
    best = 0
    for c in range(1, counts.shape[0]):
        if counts[c] > counts[best]:
            best = c
    return best
