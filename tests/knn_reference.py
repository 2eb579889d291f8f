"""The population k-NN's list walk as it was before the walks were rewritten (commit f564282),
kept verbatim as the reference the new kernels must equal (tests/test_knn.py)."""
import numba
import numpy as np


def reference_predictions(lists, X, y, k, counts, queries):
    """Predictions (M, len(queries)) of the models with training multisets ``counts`` (N, M)."""
    counts = np.ascontiguousarray(counts, dtype=np.int32)
    union = np.flatnonzero(counts.sum(axis=1)).astype(np.int64)
    out = np.empty((counts.shape[1], len(queries)), np.int64)
    _predict_rows(np.ascontiguousarray(queries, dtype=np.int64), counts, union, np.asarray(lists, dtype=np.int32),
                  np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.int64), int(k),
                  int(np.max(y)) + 1, out)
    return out


@numba.njit(cache=True)
def _predict_rows(queries, counts, union_rows, lists, X, y, k, n_classes, out):
    """Predictions of M models (training multisets ``counts``, shape (N, M)) at the query rows.

    One walk along each query's neighbour list serves all M models (hits are rare, so the
    walk, not the models, dominates); models still short of k neighbours at the end of the
    list are finished by brute force over ``union_rows`` (rows in any model, ascending).
    """
    M = counts.shape[1]
    L = lists.shape[1]
    in_any = np.zeros(counts.shape[0], np.bool_)
    in_any[union_rows] = True
    p = X.shape[1]
    votes = np.zeros((M, n_classes), np.int64)
    need = np.empty(M, np.int64)
    best_d = np.empty(k)
    best_row = np.empty(k, np.int64)
    d = np.empty(union_rows.shape[0])
    for qi in range(queries.shape[0]):
        q = queries[qi]
        votes[:, :] = 0
        need[:] = k
        pending = M
        for t in range(L):
            j = lists[q, t]
            if not in_any[j]:
                continue
            for mi in range(M):
                c = counts[j, mi]
                if c > 0 and need[mi] > 0:
                    take = min(c, need[mi])
                    votes[mi, y[j]] += take
                    need[mi] -= take
                    if need[mi] == 0:
                        pending -= 1
            if pending == 0:
                break
        if pending > 0:  # list exhausted for some model: brute force in the same (distance, row) order
            for i in range(union_rows.shape[0]):
                j = union_rows[i]
                s = 0.0
                for f in range(p):
                    t2 = X[q, f] - X[j, f]
                    s += t2 * t2
                d[i] = s
            for mi in range(M):
                if need[mi] == 0:
                    continue
                m = 0
                for i in range(union_rows.shape[0]):   # ascending rows: a later row never beats an
                    j = union_rows[i]                    # earlier one at equal distance
                    for _ in range(counts[j, mi]):
                        if m == k and d[i] >= best_d[k - 1]:
                            break
                        pos = m if m < k else k - 1
                        while pos > 0 and best_d[pos - 1] > d[i]:
                            best_d[pos] = best_d[pos - 1]
                            best_row[pos] = best_row[pos - 1]
                            pos -= 1
                        best_d[pos] = d[i]
                        best_row[pos] = j
                        if m < k:
                            m += 1
                votes[mi, :] = 0
                for i in range(m):
                    votes[mi, y[best_row[i]]] += 1
        for mi in range(M):
            best = 0
            for c in range(1, n_classes):
                if votes[mi, c] > votes[mi, best]:
                    best = c
            out[mi, qi] = best
