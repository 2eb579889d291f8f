"""The histogram pool: class counts per (class, rank, feature) of the nodes being grown.

With at most 64 distinct values per feature (Letter has 16), a node that may be split keeps its
histogram ``H[class, rank, feature]`` in a slot of a preallocated pool. When it is split, the
smaller child's histogram is built from its samples and the larger child's is obtained by
subtraction, H_large = H_parent - H_small, in the parent's slot; the split search then scans
bins instead of samples (:mod:`simstudy.learners.cart.splits`). Free slots are kept on a stack.
"""
from __future__ import annotations

import numba
import numpy as np

from simstudy.learners.cart.criteria import _may_split

_POOL_MAX_VALUES = 64
_POOL_SLOTS = 128
#: Nodes with at most this many samples are split from their samples, not from pool histograms.
_POOL_MIN_SAMPLES = 4


@numba.njit(inline="always", cache=True)
def _max_values(n_values):
    """The largest number of distinct values of a feature."""
    max_values = 0
    for f in range(n_values.shape[0]):
        max_values = max(max_values, n_values[f])
    return max_values


@numba.njit(cache=True)
def _new_pool(n_values, n_classes):
    """Histogram pool for the grow kernel: (slots, classes, ranks, features), or one dummy slot
    (no pool) when a feature has too many distinct values for histogram subtraction to pay."""
    max_values = _max_values(n_values)
    if max_values <= _POOL_MAX_VALUES:
        return np.empty((_POOL_SLOTS, n_classes, max_values, n_values.shape[0]))
    return np.empty((1, 1, 1, 1))


@numba.njit(inline="always", cache=True)
def _new_free_list(pool):
    """The pool's free slots as a stack (slot 0 on top), and their number (0 without a pool)."""
    n_slots = pool.shape[0] if pool.shape[0] > 1 else 0
    return np.arange(max(n_slots, 1) - 1, -1, -1), n_slots


@numba.njit(inline="always", cache=True)
def _take_slot(pool, free, n_free):
    """Pop a free slot and zero its histogram: (slot, n_free)."""
    n_free -= 1
    slot = free[n_free]
    pool[slot] = 0.0
    return slot, n_free


@numba.njit(inline="always", cache=True)
def _release(free, n_free, slot):
    """Push ``slot`` back on the free stack (nothing when ``slot`` is -1, no slot); the new n_free."""
    if slot >= 0:
        free[n_free] = slot
        n_free += 1
    return n_free


@numba.njit(inline="always", cache=True)
def _add_samples(pool, slot, row_bins, y, samples, lo, hi, delta):
    """Add ``delta`` (+1 or -1) to the bins ``pool[slot, y_i, rank_f(i), f]`` of the rows
    ``i in samples[lo:hi]`` for every feature f.

    ``row_bins[i, f] = rank_f(i) * p + f`` is that bin's offset within one class of a slot, so
    the bins are addressed in the flat pool without multiplying by its strides (unsigned
    indices: no negative-index wraparound code either)."""
    p = row_bins.shape[1]
    flat = pool.reshape(pool.size)
    class_size = pool.shape[2] * pool.shape[3]
    for k in range(lo, hi):
        s = samples[k]
        base = np.uint64((slot * pool.shape[1] + y[s]) * class_size)
        bins = row_bins[s]
        for f in range(p):  # features inner: independent increments
            flat[base + np.uint64(bins[f])] += delta


@numba.njit(inline="always", cache=True)
def _subtract(pool, slot, other):
    """H_slot -= H_other: the larger child's histogram from the parent's and the smaller child's."""
    for c in range(pool.shape[1]):
        for r in range(pool.shape[2]):
            for f in range(pool.shape[3]):
                pool[slot, c, r, f] -= pool[other, c, r, f]


@numba.njit(cache=True)
def _sample_histogram(pool, row_bins, y):
    """The histogram of all the sample's rows, shaped as one pool slot (1, C, J, p), for
    :func:`_root_slot`; an empty (0, C, J, p) array without a pool."""
    if pool.shape[0] <= 1:
        return np.zeros((0,) + pool.shape[1:])
    full = np.zeros((1,) + pool.shape[1:])
    _add_samples(full, 0, row_bins, y, np.arange(y.shape[0]), 0, y.shape[0], 1.0)
    return full


@numba.njit(inline="always", cache=True)
def _root_slot(pool, free, n_free, row_bins, y, samples, full, absent):
    """The root's slot (-1 without a pool) and n_free. Its histogram is built from ``samples``,
    or, when the sample's histogram ``full`` is given (:func:`_sample_histogram`) and fewer rows
    are ``absent`` from the tree than present, is ``full`` minus the absent rows' (the same
    counts: integers in float64). A K-fold tree then adds n/K rows instead of n (K-1)/K."""
    if pool.shape[0] <= 1:
        return -1, n_free
    slot, n_free = _take_slot(pool, free, n_free)
    if full.shape[0] > 0 and absent.shape[0] < samples.shape[0]:
        for c in range(pool.shape[1]):  # element by element: a slice assignment may allocate a copy
            for r in range(pool.shape[2]):
                for f in range(pool.shape[3]):
                    pool[slot, c, r, f] = full[0, c, r, f]
        _add_samples(pool, slot, row_bins, y, absent, 0, absent.shape[0], -1.0)
    else:
        _add_samples(pool, slot, row_bins, y, samples, 0, samples.shape[0], 1.0)
    return slot, n_free


@numba.njit(inline="always", cache=True)
def _child_slots(pool, slot, free, n_free, row_bins, y, samples, start, mid, end, depth, rules, left_counts,
                 right_counts):
    """Pool slots of the children ``samples[start:mid]`` and ``samples[mid:end]`` of a node
    whose histogram is in ``slot`` (-1: none, then neither child gets one), and the new n_free.

    Only a child that may be split (``depth`` is the children's; ``left_counts`` and
    ``right_counts`` their class counts) keeps a histogram. The smaller
    child's is built from its samples and the parent's slot becomes the larger child's by
    subtraction; a tiny smaller child (at most ``_POOL_MIN_SAMPLES``) gets none, its samples are
    removed from the parent's histogram one by one. With no free slot, or neither child to
    split, the parent's slot is released and the children are split from their samples.
    """
    if slot < 0:
        return -1, -1, n_free
    grow_left = _may_split(left_counts, mid - start, depth, rules)
    grow_right = _may_split(right_counts, end - mid, depth, rules)
    left_smaller = mid - start <= end - mid
    lo, hi = (start, mid) if left_smaller else (mid, end)
    small_grows, large_grows = (grow_left, grow_right) if left_smaller else (grow_right, grow_left)
    small_slot, large_slot = -1, -1
    if hi - lo <= _POOL_MIN_SAMPLES and large_grows and (end - start) - (hi - lo) > _POOL_MIN_SAMPLES:
        _add_samples(pool, slot, row_bins, y, samples, lo, hi, -1.0)
        large_slot = slot
    elif (grow_left or grow_right) and n_free > 0 and hi - lo > _POOL_MIN_SAMPLES:
        small_slot, n_free = _take_slot(pool, free, n_free)
        _add_samples(pool, small_slot, row_bins, y, samples, lo, hi, 1.0)
        if large_grows:
            _subtract(pool, slot, small_slot)
            large_slot = slot
        else:
            n_free = _release(free, n_free, slot)
        if not small_grows:
            n_free = _release(free, n_free, small_slot)
            small_slot = -1
    else:
        n_free = _release(free, n_free, slot)
    return (small_slot, large_slot, n_free) if left_smaller else (large_slot, small_slot, n_free)
