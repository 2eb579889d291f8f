"""Growing one tree: the depth-first grow kernel and :func:`fit_cart`.

A node is a range ``samples[start:end]`` of the training rows. Popped from a stack, it gets its
majority class and, unless a stopping rule makes it a leaf (:func:`criteria._may_split`) or no
split is valid, its best split (the scans of :mod:`~simstudy.learners.cart.splits`) partitions
the range in place into its two children, numbered consecutively (``right = left + 1``) and
pushed right then left: depth first, left first. A node with a pool histogram hands slots on to
its children (:func:`pool._child_slots`).
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from simstudy.learners.contracts import require_sample
from simstudy.learners.cart.criteria import (_ENTROPY, _GINI, _count_classes, _majority, _may_split, _split_proxy,
                                             _threshold)
from simstudy.learners.cart.params import TIE_RULES
from simstudy.learners.cart.pool import (_POOL_MAX_VALUES, _POOL_MIN_SAMPLES, _child_slots, _new_free_list, _new_pool,
                                         _release, _root_slot)
from simstudy.learners.cart.ranking import RankedFeatures, rank_column
from simstudy.learners.cart.splits import _best_split_in_bins, _gini2_scan_all_features, _new_scratch, _shuffle
from simstudy.learners.cart.tree import CartTree


class _Sample(NamedTuple):
    """A ranked sample as the kernels read it (see :class:`RankedFeatures`)."""

    ranks: np.ndarray     # (p, n) int32, rank of each row's value among the feature's distinct values
    row_bins: np.ndarray  # (n, p) uint32, rank * p + f row by row, for the histogram pool ((0, p) without a pool)
    values: np.ndarray    # (p, J) float64, the distinct values per feature, ascending
    n_values: np.ndarray  # (p,) int64
    close: np.ndarray     # (p,) bool, two distinct values within 1e-7
    y: np.ndarray         # (n,) int64, the labels encoded 0..n_classes-1
    n_classes: int


class _Rules(NamedTuple):
    """The split criterion (``_GINI`` or ``_ENTROPY``), scikit-learn's stopping rules and the
    tie rule (see :data:`TIE_RULES`)."""

    criterion: int
    max_depth: int  # -1: no limit
    min_split: int
    min_leaf: int
    draw_ties: bool  # True: "draw"; False: "shuffle"


class _Nodes(NamedTuple):
    """A tree's node arrays; a leaf has feature = left = right = -1 and threshold 0."""

    feature: np.ndarray     # int64
    threshold: np.ndarray   # float64, x <= threshold goes left
    left: np.ndarray        # int64, the left child (the right one is left + 1)
    right: np.ndarray       # int64
    leaf_class: np.ndarray  # int64, the node's majority class (encoded)


class _Stack(NamedTuple):
    """The nodes still to grow: rows ``samples[start:end]``, depth, node id, pool slot and class
    counts (found when the parent was split)."""

    start: np.ndarray
    end: np.ndarray
    depth: np.ndarray
    node: np.ndarray
    slot: np.ndarray
    counts: np.ndarray  # (cap, C) float64


@numba.njit(inline="always", cache=True)
def _empty_nodes(cap):
    """Room for ``cap`` nodes, uninitialised."""
    return _Nodes(np.empty(cap, np.int64), np.empty(cap), np.empty(cap, np.int64), np.empty(cap, np.int64),
                  np.empty(cap, np.int64))


@numba.njit(inline="always", cache=True)
def _new_nodes(cap):
    """Room for ``cap`` nodes, each a leaf until it is split (every node's class is set)."""
    nodes = _empty_nodes(cap)
    nodes.feature[:] = -1
    nodes.threshold[:] = 0.0
    nodes.left[:] = -1
    nodes.right[:] = -1
    return nodes


@numba.njit(inline="always", cache=True)
def _trim(nodes, count):
    """The first ``count`` nodes."""
    return _Nodes(nodes.feature[:count], nodes.threshold[:count], nodes.left[:count], nodes.right[:count],
                  nodes.leaf_class[:count])


@numba.njit(inline="always", cache=True)
def _new_stack(cap, n_classes):
    """Room for ``cap`` nodes to grow."""
    return _Stack(np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64),
                  np.empty(cap, np.int64), np.empty((cap, n_classes)))


@numba.njit(inline="always", cache=True)
def _push(stack, top, start, end, depth, node, slot, counts):
    """Push a node and its class counts on the stack; returns the new top."""
    stack.start[top], stack.end[top], stack.depth[top], stack.node[top] = start, end, depth, node
    stack.slot[top] = slot
    for c in range(counts.shape[0]):
        stack.counts[top, c] = counts[c]
    return top + 1


@numba.njit(inline="always", cache=True)
def _partition(frow, samples, start, end, rank, next_rank, right_rows):
    """Reorder ``samples[start:end]`` so that the rows with ``frow[row] <= rank`` come first,
    each side in its original order (``right_rows``: scratch of at least ``end - start`` rows).

    Returns (mid, next): the left child is ``samples[start:mid]``; ``next`` is the smallest
    rank above ``rank`` present in the node (``next_rank`` if none is smaller).

    Branch-free: every row is written to both sides and only the side's count advances (a
    left row lands in place, ``mid <= i``; a right row in ``right_rows``, copied back after the
    left ones). A branch on the side mispredicts for about half the rows of a node. The order
    of rows within a node decides nothing: splits and counts depend only on which rows it holds.
    """
    mid = start
    n_right = 0
    for i in range(start, end):  # unsigned indices: no negative-index wraparound code in the loop
        row = samples[np.uint64(i)]
        r = np.int64(frow[np.uint64(row)])
        samples[np.uint64(mid)] = row
        right_rows[np.uint64(n_right)] = row
        left = r <= rank
        mid += left
        n_right += 1 - left
        next_rank = min(next_rank, next_rank if left else r)
    for j in range(n_right):
        samples[mid + j] = right_rows[j]
    return mid, next_rank


@numba.njit(inline="always", cache=True)
def _split_node(nodes, node, first_child, ranks, values, n_values, samples, start, end, f, rank, right_rows):
    """Split ``node`` (rows ``samples[start:end]``) on feature ``f`` after ``rank``: partition its
    rows (``right_rows``: scratch) and record the split, with the threshold between the value of
    ``rank`` and the next value present in the node. Returns mid, the end of the left child's rows."""
    mid, next_rank = _partition(ranks[f], samples, start, end, rank, n_values[f], right_rows)
    nodes.feature[node] = f
    nodes.threshold[node] = _threshold(values[f, rank], values[f, next_rank])
    nodes.left[node] = first_child
    nodes.right[node] = first_child + 1
    return mid


@numba.njit(cache=True)
def _grow(sample, samples, rules, seed, pool, full, absent):
    """Grow one tree on the rows ``samples`` of a ranked sample.

    Parameters
    ----------
    sample : _Sample
    samples : ndarray (m,) of int64
        The training rows; reordered in place.
    rules : _Rules
    seed : int
        Seeds the random tie-breaking (feature orders or draws among tied features).
    pool : ndarray
        Histogram pool from :func:`pool._new_pool` (reused from tree to tree).
    full, absent : ndarray
        The histogram of all the sample's rows (:func:`pool._sample_histogram`, or an empty
        array) and the sample's rows not in ``samples``: the root's histogram is then ``full``
        minus theirs when they are fewer (:func:`pool._root_slot`).

    Returns
    -------
    _Nodes
        The node arrays, node 0 the root.

    Notes
    -----
    This function allocates the tree's arrays; :func:`_grow_nodes` grows the nodes in them
    without numba's reference counting.
    """
    n = samples.shape[0]
    nodes = _new_nodes(2 * n + 1)
    count = _grow_nodes(sample, samples, rules, seed, pool, full, absent, nodes,
                        _new_stack(2 * n + 1, sample.n_classes), _new_scratch(sample, n), _new_free_list(pool))
    return _trim(nodes, count)


@numba.njit(inline="always", cache=True)
def _stable_argsort(keys, m, out, buf):
    """The positions 0..m-1 ordered by ``keys[:m]``, equal keys in position order (the one stable
    order, the same as ``np.argsort(keys[:m], kind="mergesort")``): a bottom-up merge sort in the
    scratch arrays ``out`` and ``buf`` (at least m each); returns the one holding the result."""
    for i in range(m):
        out[i] = i
    src, dst = out, buf
    width = 1
    while width < m:
        for lo in range(0, m, 2 * width):
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            i, j = lo, mid
            for k in range(lo, hi):
                if i < mid and (j >= hi or keys[src[i]] <= keys[src[j]]):  # the left run first on ties
                    dst[k] = src[i]
                    i += 1
                else:
                    dst[k] = src[j]
                    j += 1
        src, dst = dst, src
        width *= 2
    return src


@numba.njit(cache=True, _nrt=False)
def _grow_nodes(sample, samples, rules, seed, pool, full, absent, nodes, stack, scratch, free_list):
    """The grow loop of :func:`_grow`: grows the tree into ``nodes`` (a :func:`_new_nodes` array
    of 2 m + 1 nodes) with the work arrays ``stack`` (:func:`_new_stack`), ``scratch``
    (:func:`splits._new_scratch`) and ``free_list`` (:func:`pool._new_free_list`); returns the
    number of nodes.

    Compiled without numba's reference counting (``_nrt=False``, numba's flag for code that
    allocates nothing): every array here is owned by the caller, which outlives the call. With
    it, each array an inlined helper receives, each view (``ranks[f]``, ``pool[slot]``) and each
    argument of a split scan would be counted up and down with an atomic instruction, a large
    share of the growth loop's time.
    Allocating is therefore not possible here (numba refuses to compile it); the small-node sort
    uses :func:`_stable_argsort` on scratch arrays instead of ``np.argsort``.

    The split search (the loop over features) is written out in the node loop rather than in
    helpers: with reference counting, moving it into helpers made the one-call CV 25-30% slower
    (the counting of the arrays they received, at every feature of every node).
    """
    np.random.seed(seed)
    ranks, values, n_values, close, y = sample.ranks, sample.values, sample.n_values, sample.close, sample.y
    min_leaf, criterion, draw_ties = rules.min_leaf, rules.criterion, rules.draw_ties
    n = samples.shape[0]
    (features, node_counts, left_counts, right_counts, ybuf, order_buf, idx_buf, tmp_buf, sorted_y, hist, cum0, cum1,
     feat_proxy, feat_rank, tied_feature, tied_rank, merge_buf) = scratch
    free, n_free = free_list
    two_class_gini = sample.n_classes == 2 and criterion == _GINI
    row_bins = sample.row_bins
    root_slot, n_free = _root_slot(pool, free, n_free, row_bins, y, samples, full, absent)
    _count_classes(y, samples, 0, n, node_counts)
    top = _push(stack, 0, 0, n, 0, 0, root_slot, node_counts)
    node_count = 1
    while top > 0:
        top -= 1
        start, end, depth, node, slot = stack.start[top], stack.end[top], stack.depth[top], stack.node[top], \
            stack.slot[top]
        m = end - start
        if slot >= 0 and m <= _POOL_MIN_SAMPLES:  # small node: scanning every bin costs more than its samples
            n_free = _release(free, n_free, slot)
            slot = -1
        for c in range(node_counts.shape[0]):
            node_counts[c] = stack.counts[top, c]
        nodes.leaf_class[node] = _majority(node_counts)
        if not _may_split(node_counts, m, depth, rules):
            n_free = _release(free, n_free, slot)
            continue
        if slot < 0:  # the node's labels, gathered once for the scans from samples (a pool slot needs none)
            for i in range(m):
                ybuf[i] = y[samples[start + i]]
        if not draw_ties:
            _shuffle(features)
        all_at_once = slot >= 0 and two_class_gini
        if all_at_once:
            _gini2_scan_all_features(pool[slot], node_counts[0], node_counts[1], m, min_leaf, pool.shape[2], cum0,
                                     cum1, feat_proxy, feat_rank)
        best_proxy, best_feature, best_rank = -np.inf, -1, -1  # split: rank <= best_rank goes left
        n_tied = 0  # "draw": the features tied at best_proxy so far, in tied_feature / tied_rank
        for f in features:  # each feature by the cheapest exact scan (see splits); the first best wins
            nv = n_values[f]
            if all_at_once and not close[f]:  # found by the all-feature scan
                proxy, rank = feat_proxy[f], feat_rank[f]
            elif slot >= 0:  # class counts per rank from the pool: scan bins only
                proxy, rank = _best_split_in_bins(pool[slot], f, 0, nv - 1, values[f], node_counts, m, min_leaf,
                                                  criterion, left_counts, right_counts, False)
            elif m * 8 < nv or m <= _POOL_MIN_SAMPLES:  # small node: sort its ranks, scan between values
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
                    idx = _stable_argsort(tmp_buf, m, idx_buf, merge_buf)
                    for i in range(m):
                        order_buf[i] = tmp_buf[idx[i]]
                        sorted_y[i] = ybuf[idx[i]]
                proxy, rank = -np.inf, -1
                left_counts[:] = 0.0
                n_left = 0
                for j in range(m - 1):  # a candidate between each two consecutive distinct ranks
                    left_counts[sorted_y[j]] += 1.0
                    n_left += 1
                    r0 = order_buf[j]
                    r1 = order_buf[j + 1]
                    if r1 == r0:
                        continue
                    cand = _split_proxy(values[f, r0], values[f, r1], left_counts, node_counts, right_counts, n_left,
                                        m, min_leaf, criterion)
                    if cand > proxy:
                        proxy, rank = cand, r0
            else:  # class counts per rank gathered from the node's samples, then a bin scan
                lo = nv
                hi = -1
                frow = ranks[f]
                for i in range(m):
                    r = frow[samples[start + i]]
                    hist[ybuf[i], r, 0] += 1.0
                    lo = min(lo, r)
                    hi = max(hi, r)
                proxy, rank = _best_split_in_bins(hist, 0, lo, hi, values[f], node_counts, m, min_leaf, criterion,
                                                  left_counts, right_counts, True)
            if proxy > best_proxy:
                best_proxy, best_feature, best_rank = proxy, f, rank
                tied_feature[0], tied_rank[0] = f, rank
                n_tied = 1
            elif draw_ties and proxy == best_proxy and best_feature >= 0:
                tied_feature[n_tied], tied_rank[n_tied] = f, rank
                n_tied += 1
        if n_tied > 1:  # one uniform draw among the tied features (only "draw" collects ties)
            pick = np.random.randint(0, n_tied)
            best_feature, best_rank = tied_feature[pick], tied_rank[pick]
        if best_feature < 0:  # no valid split: a leaf
            n_free = _release(free, n_free, slot)
            continue
        mid = _split_node(nodes, node, node_count, ranks, values, n_values, samples, start, end, best_feature,
                          best_rank, tmp_buf)
        # the children's class counts: the smaller child's from its rows, the larger's by subtraction
        left_smaller = mid - start <= end - mid
        small_counts, large_counts = left_counts, right_counts
        _count_classes(y, samples, start if left_smaller else mid, mid if left_smaller else end, small_counts)
        for c in range(node_counts.shape[0]):
            large_counts[c] = node_counts[c] - small_counts[c]
        counts_left, counts_right = (small_counts, large_counts) if left_smaller else (large_counts, small_counts)
        slot_left, slot_right, n_free = _child_slots(pool, slot, free, n_free, row_bins, y, samples, start, mid, end,
                                                     depth + 1, rules, counts_left, counts_right)
        top = _push(stack, top, mid, end, depth + 1, node_count + 1, slot_right, counts_right)  # right then left:
        top = _push(stack, top, start, mid, depth + 1, node_count, slot_left, counts_left)      # depth first
        node_count += 2
    return node_count


@numba.njit(cache=True)
def _fill_row_bins(ranks, out):
    """out[i, f] = ranks[f, i] * p + f (see :func:`_row_bins`)."""
    p, n = ranks.shape
    for i in range(n):
        for f in range(p):
            out[i, f] = ranks[f, i] * p + f


def _row_bins(ranked: RankedFeatures) -> np.ndarray:
    """Each row's histogram bins, row by row: ``rank_f(row) * p + f`` as uint32, (n, p), when the
    features fit the histogram pool (at most ``_POOL_MAX_VALUES`` distinct values), else an empty
    (0, p) array (no pool, never read).

    Adding a row to a histogram (:func:`pool._add_samples`) then reads its p bin offsets from one
    place instead of p rows of the (p, n) ranks, and adds them to the slot's offset as they are."""
    p, n = ranked.ranks.shape
    if ranked.n_values.size and ranked.n_values.max() <= _POOL_MAX_VALUES:
        out = np.empty((n, p), np.uint32)
        _fill_row_bins(ranked.ranks, out)
        return out
    return np.empty((0, p), np.uint32)


def _encode_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """The classes (sorted distinct labels, y's dtype) and each label's class index (int64):
    ``np.unique(y, return_inverse=True)``; integer and boolean labels are ranked like a feature
    (:func:`ranking.rank_column`: counting for small integers), which is several times faster
    on the small samples of a simulation."""
    y = np.asarray(y)
    if y.ndim == 1 and y.size and y.dtype.kind in "biu" and np.abs(y).max() < 2**53:
        codes, values = rank_column(y.astype(np.float64))
        return values.astype(y.dtype), codes
    classes, codes = np.unique(y, return_inverse=True)
    return classes, codes.reshape(-1).astype(np.int64)


def _kernel_inputs(X, y: np.ndarray, criterion: str, max_depth: int | None, min_samples_split: int,
                   min_samples_leaf: int, ties: str = "draw") -> tuple[RankedFeatures, np.ndarray, _Sample, _Rules]:
    """The ranked features, the classes (sorted labels) and the kernels' sample and rules."""
    if ties not in TIE_RULES:
        raise ValueError(f"ties={ties!r} is invalid: choose one of {', '.join(TIE_RULES)}.")
    require_sample("CART", X.X if isinstance(X, RankedFeatures) else X, y)
    ranked = X if isinstance(X, RankedFeatures) else RankedFeatures.from_array(X)
    classes, y_enc = _encode_labels(y)
    sample = _Sample(ranked.ranks, _row_bins(ranked), ranked.values, ranked.n_values, ranked.close, y_enc,
                     len(classes))
    rules = _Rules(_GINI if criterion == "gini" else _ENTROPY, -1 if max_depth is None else int(max_depth),
                   int(min_samples_split), int(min_samples_leaf), ties == "draw")
    return ranked, classes, sample, rules


def _seed(seed) -> int:
    """A seed in the range numba's ``np.random.seed`` accepts."""
    return int(seed) % (2**32 - 1)


def fit_cart(X, y: np.ndarray, seed: int, criterion: str = "gini", max_depth: int | None = None,
             min_samples_split: int = 2, min_samples_leaf: int = 1, ties: str = "draw") -> CartTree:
    """Grow a tree on features X (n, p) (an array, or :class:`RankedFeatures`) and labels y (n,).

    Parameters
    ----------
    seed : int
        Seeds the random tie-breaking.
    criterion : {"gini", "entropy", "log_loss"}
    max_depth, min_samples_split, min_samples_leaf : as in scikit-learn (integers).
    ties : {"draw", "shuffle"}
        The tie rule (:data:`TIE_RULES`).
    """
    ranked, classes, sample, rules = _kernel_inputs(X, y, criterion, max_depth, min_samples_split, min_samples_leaf,
                                                    ties)
    pool = _new_pool(sample.n_values, sample.n_classes)
    no_rows = np.empty(0, np.int64)
    nodes = _grow(sample, np.arange(ranked.ranks.shape[1]), rules, _seed(seed), pool, pool[:0], no_rows)
    return CartTree(*nodes, classes=classes)
