"""Compiled kernels of the population k-NN (:mod:`simstudy.learners.knn.population`).

Every query is a population row q with a precomputed neighbour list: the L nearest rows in the
order (squared Euclidean distance, row index). A model is a multiset of training rows. Its
prediction at q takes the first k training points met along q's list (copies of a row count
separately), and the majority label (the smallest label on a vote tie). A query whose list holds
fewer than k training points of some model is finished by brute force over the training rows in
the same (distance, row) order, with distances summed feature by feature in float64 exactly as
the lists were built. Every kernel here computes that same rule; they differ in how they find the
training points along the lists:

- :func:`walk_lists`: walk each query's list (the first entries from a contiguous copy, ``head``,
  the rest from the full lists) until every model has k points. Cost: N k / (training
  fraction) list entries; the right choice for large training sets.
- :func:`reverse_walk`: scatter, for every training row j, the queries whose list holds j before
  a depth D (the reverse lists, by position) with j's position, then read each query's hits in
  list order, walking on along the list from D where they are not enough. Cost: n D hits, with D
  about 12 N / n (a dozen hits per query) up to L; the right choice for all but large training
  sets (:data:`simstudy.learners.knn.population.REVERSE_MIN_HEADS`).
- :func:`local_lists` and :func:`predict_local`: predictions at the sample's own rows (CV folds,
  splits of one sample): each distinct sample row's list restricted to the sample, built once per
  sample, then walked by every model fitted on that sample.

Models are given by their counts ``ucounts`` (n_u, M) over the union of their training rows
``urows`` (ascending population rows), with ``code`` (N,) mapping a population row to its union
index or -1, ``uy`` the union rows' labels (0..n_classes-1).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["neighbour_lists", "reverse_lists", "walk_lists", "reverse_walk", "brute_force", "local_lists",
           "predict_local"]


# ----------------------------------------------------------------------------- the index
@numba.njit(inline="always", cache=True)
def _distance(A, a, B, b):
    """Squared distance of rows A[a] and B[b], summed feature by feature in float64: every kernel
    computes it this way, so that equal distances are equal everywhere (the tie rule)."""
    s = 0.0
    for f in range(A.shape[1]):
        t = A[a, f] - B[b, f]
        s += t * t
    return s


@numba.njit(parallel=True, cache=True)
def neighbour_lists(X, L, out):
    """out[q] = the L nearest rows of row q (itself included) by (squared distance, row index)."""
    N = X.shape[0]
    for q in numba.prange(N):
        d = np.empty(N)
        for j in range(N):
            d[j] = _distance(X, q, X, j)
        threshold = np.partition(d, L - 1)[L - 1]
        candidates = np.flatnonzero(d <= threshold)              # ascending row index
        order = np.argsort(d[candidates], kind="mergesort")       # stable: ties keep row order
        for i in range(L):
            out[q, i] = candidates[order[i]]


@numba.njit(cache=True)
def reverse_lists(lists, ptr, rev):
    """The reverse of the lists: for row j, ``rev[ptr[j]:ptr[j + 1]]`` holds the pairs (q, t)
    with ``lists[q, t] == j``, by ascending position t, then q (so the entries of j up to any
    depth are a prefix). ``ptr`` (N + 1) and ``rev`` (N L, 2) are filled."""
    N, L = lists.shape
    ptr[:] = 0
    for q in range(N):
        for t in range(L):
            ptr[lists[q, t] + 1] += 1
    for j in range(N):
        ptr[j + 1] += ptr[j]
    fill = ptr[:N].copy()
    for t in range(L):
        for q in range(N):
            j = lists[q, t]
            rev[fill[j], 0] = q
            rev[fill[j], 1] = t
            fill[j] += 1


# ----------------------------------------------------------------------------- votes
@numba.njit(inline="always", cache=True)
def _start(votes, need, k):
    """Every model needs k points and has no votes; returns the points still needed in all."""
    votes[:, :] = 0
    need[:] = k
    return need.shape[0] * k


@numba.njit(inline="always", cache=True)
def _take(u, ucounts, uy, need, votes):
    """Training row u met: each model takes min(its copies of u, what it still needs) votes for
    u's label (branch-free over the models); returns the points taken in all."""
    label = uy[u]
    taken = 0
    for m in range(need.shape[0]):
        c = min(ucounts[u, m], need[m])
        need[m] -= c
        votes[label, m] += c
        taken += c
    return taken


@numba.njit(inline="always", cache=True)
def _decide(votes, out, i):
    """out[m, i] = the majority label of model m (the smallest one on a tie)."""
    n_classes, M = votes.shape
    for m in range(M):
        best = 0
        for c in range(1, n_classes):
            if votes[c, m] > votes[best, m]:
                best = c
        out[m, i] = best


# ----------------------------------------------------------------------------- population walks
@numba.njit(cache=True)
def walk_lists(queries, head, lists, code, ucounts, uy, k, n_classes, out, short):
    """Predictions ``out[m, i]`` of every model at the population rows ``queries[i]`` by walking
    their lists; ``short[i]`` is set where some model met fewer than k training points along the
    whole list (callers finish those queries with :func:`brute_force`).

    ``head`` holds the first entries of every list contiguously (the part most walks stay in:
    one cache-friendly block instead of one page of the full lists per query)."""
    M = ucounts.shape[1]
    H, L = head.shape[1], lists.shape[1]
    votes = np.zeros((n_classes, M), np.int32)
    need = np.empty(M, np.int32)
    for i in range(queries.shape[0]):
        q = queries[i]
        remaining = _start(votes, need, k)
        for t in range(H):
            u = code[head[q, t]]
            if u >= 0:
                remaining -= _take(u, ucounts, uy, need, votes)
                if remaining == 0:
                    break
        if remaining > 0:
            for t in range(H, L):
                u = code[lists[q, t]]
                if u >= 0:
                    remaining -= _take(u, ucounts, uy, need, votes)
                    if remaining == 0:
                        break
        short[i] = remaining > 0
        _decide(votes, out, i)


@numba.njit(inline="always", cache=True)
def _depth_end(rev, a, b, depth):
    """First entry of ``rev[a:b]`` (ascending positions) at position >= depth (binary search)."""
    while a < b:
        mid = (a + b) // 2
        if rev[mid, 1] < depth:
            a = mid + 1
        else:
            b = mid
    return a


@numba.njit(cache=True)
def reverse_walk(ptr, rev, urows, ucounts, uy, k, n_classes, depth, head, lists, code, out, short):
    """Predictions ``out[m, q]`` of every model at every population row q from the reverse lists
    (see :func:`reverse_lists`) down to list position ``depth``; ``short[q]`` as in
    :func:`walk_lists`.

    Pass 1 counts each query's hits (training rows in its list before ``depth``), pass 2 writes
    them (position t, union index u) into per-query buckets, then each bucket is put in list
    order (insertion sort: a few dozen hits) and walked like the list itself. A query that has
    not met k points of every model there goes on along its list from ``depth`` (as
    :func:`walk_lists`, with ``code`` mapping a population row to its union index or -1): the
    same rule, with the scatter cut to about ``depth`` n_u entries instead of n_u L."""
    M = ucounts.shape[1]
    N, L = lists.shape
    H = head.shape[1]
    nu = urows.shape[0]
    end = np.empty(nu, np.int64)
    start = np.zeros(N + 1, np.int64)
    for u in range(nu):
        j = urows[u]
        end[u] = _depth_end(rev, ptr[j], ptr[j + 1], depth)
        for e in range(ptr[j], end[u]):
            start[rev[e, 0] + 1] += 1
    for q in range(N):
        start[q + 1] += start[q]
    fill = start[:N].copy()
    pos = np.empty(start[N], np.int32)
    hit = np.empty(start[N], np.int32)
    for u in range(nu):
        j = urows[u]
        for e in range(ptr[j], end[u]):
            q = rev[e, 0]
            pos[fill[q]] = rev[e, 1]
            hit[fill[q]] = u
            fill[q] += 1
    votes = np.zeros((n_classes, M), np.int32)
    need = np.empty(M, np.int32)
    for q in range(N):
        a, b = start[q], start[q + 1]
        for s in range(a + 1, b):               # list order: ascending position
            t, u = pos[s], hit[s]
            r = s
            while r > a and pos[r - 1] > t:
                pos[r] = pos[r - 1]
                hit[r] = hit[r - 1]
                r -= 1
            pos[r] = t
            hit[r] = u
        remaining = _start(votes, need, k)
        for s in range(a, b):
            remaining -= _take(hit[s], ucounts, uy, need, votes)
            if remaining == 0:
                break
        t = depth
        while remaining > 0 and t < L:          # beyond the depth: the list itself
            u = code[head[q, t]] if t < H else code[lists[q, t]]
            if u >= 0:
                remaining -= _take(u, ucounts, uy, need, votes)
            t += 1
        short[q] = remaining > 0
        _decide(votes, out, q)


#: Brute force keeps the nearest BUFFER training rows by insertion; a query needing more (rare)
#: sorts all of them.
BUFFER = 32


@numba.njit(inline="always", cache=True)
def _nearest(d, m, width, best_d, best_i):
    """The ``width`` smallest of d[:m] in the order (value, index) into best_d / best_i (indices
    ascending on equal values: a later index never passes an equal earlier one); returns how many."""
    filled = 0
    for i in range(m):
        di = d[i]
        if filled == width and di >= best_d[width - 1]:
            continue
        pos = filled if filled < width else width - 1
        while pos > 0 and best_d[pos - 1] > di:
            best_d[pos] = best_d[pos - 1]
            best_i[pos] = best_i[pos - 1]
            pos -= 1
        best_d[pos] = di
        best_i[pos] = i
        if filled < width:
            filled += 1
    return filled


@numba.njit(inline="always", cache=True)
def _distances_to(X, q, XuT, d):
    """d[u] = squared distance of X[q] to training row u (``XuT`` (p, n_u): the rows as columns),
    summed feature by feature from 0.0 exactly as :func:`_distance` sums it, one feature at a time
    for all rows (independent sums: the loop over rows vectorises; the bits are the same)."""
    d[:] = 0.0
    for f in range(XuT.shape[0]):
        x = X[q, f]
        for u in range(XuT.shape[1]):
            t = x - XuT[f, u]
            d[u] += t * t


@numba.njit(cache=True)
def brute_force(which, queries, X, XuT, ucounts, uy, k, n_classes, out):
    """Redo ``out[:, i]`` for i in ``which`` by brute force: the training rows (``XuT`` (p, n_u),
    the features of the union's rows, ascending population rows, as columns) in the order
    (distance to ``X[queries[i]]``, row), distances summed as the lists were built."""
    nu = XuT.shape[1]
    M = ucounts.shape[1]
    d = np.empty(nu)
    width = min(nu, BUFFER)
    best_d, best_u = np.empty(width), np.empty(width, np.int64)
    votes = np.zeros((n_classes, M), np.int32)
    need = np.empty(M, np.int32)
    for i in which:
        _distances_to(X, queries[i], XuT, d)
        filled = _nearest(d, nu, width, best_d, best_u)
        remaining = _start(votes, need, k)
        for s in range(filled):
            remaining -= _take(best_u[s], ucounts, uy, need, votes)
            if remaining == 0:
                break
        if remaining > 0 and nu > width:       # beyond the buffer: every training row in order
            order = np.argsort(d, kind="mergesort")
            remaining = _start(votes, need, k)
            for s in range(nu):
                remaining -= _take(order[s], ucounts, uy, need, votes)
                if remaining == 0:
                    break
        _decide(votes, out, i)


# ----------------------------------------------------------------------------- a sample's own rows
@numba.njit(cache=True)
def local_lists(drows, head, lists, code, width, local, length):
    """For each distinct sample row ``drows[a]``: the sample's distinct rows along its population
    list, as indices into ``drows`` (``code`` maps a population row to it, or -1), the first
    ``width`` of them in ``local[a]``, their number in ``length[a]``."""
    H, L = head.shape[1], lists.shape[1]
    for a in range(drows.shape[0]):
        q = drows[a]
        m = 0
        for t in range(L):
            b = code[head[q, t]] if t < H else code[lists[q, t]]
            if b >= 0:
                local[a, m] = b
                m += 1
                if m == width:
                    break
        length[a] = m


@numba.njit(inline="always", cache=True)
def _vote_local(b, counts, dy, need, votes):
    """Training row b (of the sample's distinct rows) met: up to ``need`` votes for its label;
    returns what is still needed."""
    c = min(counts[b], need)
    votes[dy[b]] += c
    return need - c


@numba.njit(cache=True)
def predict_local(queries, local, length, counts, dy, Xd, k, n_classes, out):
    """Predictions ``out[i]`` of one model (``counts`` over the sample's distinct rows) at the
    sample's distinct rows ``queries[i]``: its local list first, brute force over the model's
    training rows when the list runs out before k training points."""
    votes = np.zeros(n_classes, np.int64)
    nd = Xd.shape[0]
    d = np.empty(nd)
    rows = np.empty(nd, np.int64)
    best_d, best_i = np.empty(BUFFER), np.empty(BUFFER, np.int64)
    for i in range(queries.shape[0]):
        a = queries[i]
        votes[:] = 0
        need = k
        for s in range(length[a]):
            need = _vote_local(local[a, s], counts, dy, need, votes)
            if need == 0:
                break
        if need > 0:                            # brute force, (distance, row) order
            m = 0
            for b in range(nd):
                if counts[b] > 0:
                    d[m] = _distance(Xd, a, Xd, b)
                    rows[m] = b
                    m += 1
            width = min(m, BUFFER)
            filled = _nearest(d, m, width, best_d, best_i)
            votes[:] = 0
            need = k
            for s in range(filled):
                need = _vote_local(rows[best_i[s]], counts, dy, need, votes)
                if need == 0:
                    break
            if need > 0 and m > width:
                order = np.argsort(d[:m], kind="mergesort")
                votes[:] = 0
                need = k
                for s in range(m):
                    need = _vote_local(rows[order[s]], counts, dy, need, votes)
                    if need == 0:
                        break
        best = 0
        for c in range(1, n_classes):
            if votes[c] > votes[best]:
                best = c
        out[i] = best
