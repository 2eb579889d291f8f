"""Fisher's linear discriminant with an empirical-risk-minimising threshold, batched.

Nedelko's learner (STUDIES.md section 2): direction w = S^-1 (m_1 - m_0) with
S = S_1 + S_0, S_y the scatter matrix of class y normalised by its class size; then the
threshold c on the projection w.x minimising the empirical risk of "predict 1 iff w.x > c".

Every fit is given by non-negative weights over the points of a sample: 1/0 weights select
a training subset (leave-one-out, K-fold) and integer counts describe a bootstrap sample.
All fits of all samples of a chunk are computed at once with array operations, so
leave-one-out costs no refits: removing point i only changes the class sums of its class
(exact downdating of sum w x and sum w x x').

Conventions
-----------
- Direction: S^-1 d (d = m_1 - m_0) is computed as adj(S) d (in 2-D), which differs from it
  by the factor det(S) >= 0 only; for a singular S it gives the limit of the regularised
  direction (S + eps I)^-1 d as eps -> 0 (the direction of zero within-class spread). If that
  is the zero vector (e.g. one point per class), the mean difference d is used; if d = 0 too,
  the rule is constant (see below).
- Threshold: candidates are the midpoints between consecutive distinct training projections,
  plus -inf and +inf (predict all 1 / all 0). Among candidates with the smallest (weighted)
  training error, the finite one closest to Fisher's midpoint w.(m_1 + m_0)/2 is taken; a
  constant rule (+-inf) is taken only when no finite threshold is as good (-inf before +inf).
- A training set holding one class only gives the constant rule predicting that class
  (w = 0, c = -inf for class 1, +inf for class 0).
- Prediction: 1 iff w.x > c.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

__all__ = ["LinearRules", "fisher_fit", "erm_threshold", "predict_rules"]


@dataclass(frozen=True)
class LinearRules:
    """A batch of rules "predict 1 iff w.x > c"."""

    w: np.ndarray  # (..., p)
    c: np.ndarray  # (...)


def _direction(S: np.ndarray, d: np.ndarray) -> np.ndarray:
    if S.shape[-1] == 2:
        adj = np.stack([np.stack([S[..., 1, 1], -S[..., 0, 1]], -1),
                        np.stack([-S[..., 1, 0], S[..., 0, 0]], -1)], -2)
        w = np.einsum("...ij,...j->...i", adj, d)
    else:  # general dimension: pseudo-inverse (the same limit for singular S)
        w = np.einsum("...ij,...j->...i", np.linalg.pinv(S, hermitian=True), d)
    scale = np.max(np.abs(S), axis=(-2, -1), keepdims=False)[..., None]
    tiny = np.linalg.norm(w, axis=-1, keepdims=True) <= 1e-12 * np.maximum(scale, 1e-300) * np.linalg.norm(d, axis=-1, keepdims=True)
    return np.where(tiny, d, w)


@numba.njit(cache=True)
def _erm_kernel(proj, y, weights, prefer, c_out, err_out):
    n_rules, N = proj.shape
    for r in range(n_rules):
        order = np.argsort(proj[r])
        pos_total = 0.0
        neg_total = 0.0
        for i in range(N):
            if weights[r, i] > 0:
                if y[r, i] == 1:
                    pos_total += weights[r, i]
                else:
                    neg_total += weights[r, i]
        # candidate below every point: all predicted 1, errors = class-0 weight
        best_err = neg_total
        best_c = -np.inf
        best_dist = np.inf
        pos_below = 0.0
        neg_below = 0.0
        last = -np.inf
        have_last = False
        for j in range(N):
            i = order[j]
            if weights[r, i] <= 0:
                continue
            value = proj[r, i]
            if have_last and value > last:  # a split between last and value
                err = pos_below + (neg_total - neg_below)
                thr = 0.5 * (last + value)
                dist = abs(thr - prefer[r])
                if err < best_err - 1e-9 or (abs(err - best_err) <= 1e-9 and dist < best_dist):
                    best_err, best_c, best_dist = err, thr, dist
            if y[r, i] == 1:
                pos_below += weights[r, i]
            else:
                neg_below += weights[r, i]
            last = value
            have_last = True
        # candidate above every point: all predicted 0, errors = class-1 weight
        if pos_total < best_err - 1e-9:
            best_err, best_c = pos_total, np.inf
        c_out[r] = best_c
        err_out[r] = best_err


def erm_threshold(proj: np.ndarray, y: np.ndarray, weights: np.ndarray, prefer: np.ndarray):
    """Threshold minimising the weighted training error of "predict 1 iff proj > c".

    Parameters
    ----------
    proj : ndarray, shape (..., N)
        Projections of the sample points.
    y : ndarray of {0, 1}, shape (..., N)
    weights : ndarray, shape (..., N)
        Point weights; points with weight 0 are not part of the training set.
    prefer : ndarray, shape (...)
        Tie-break target: among minimisers with a finite threshold, the one closest to it
        wins; the infinite thresholds (constant rules) win only when strictly better.

    Returns
    -------
    c : ndarray, shape (...)
        The threshold (+-inf for the constant rules).
    error : ndarray, shape (...)
        Its weighted training error (sum of weights of misclassified points).
    """
    shape = proj.shape[:-1]
    N = proj.shape[-1]
    flat = lambda a, dt: np.ascontiguousarray(np.broadcast_to(a, shape + (N,)).reshape(-1, N), dtype=dt)
    c = np.empty(int(np.prod(shape)))
    err = np.empty_like(c)
    _erm_kernel(flat(proj, np.float64), flat(y, np.int64), flat(weights, np.float64),
                np.ascontiguousarray(np.broadcast_to(prefer, shape).reshape(-1), dtype=np.float64), c, err)
    return c.reshape(shape), err.reshape(shape)


def fisher_fit(X: np.ndarray, y: np.ndarray, weights: np.ndarray) -> LinearRules:
    """Fit Fisher's discriminant with an ERM threshold for every weight vector.

    Parameters
    ----------
    X : ndarray, shape (B, N, p)
        B samples of N points.
    y : ndarray of {0, 1}, shape (B, N)
    weights : ndarray, shape (B, F, N)
        F fits per sample; ``weights[b, f, i]`` is the weight of point i in fit f of sample b.

    Returns
    -------
    LinearRules
        ``w`` of shape (B, F, p) and ``c`` of shape (B, F).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    W = np.asarray(weights, dtype=float)
    y1 = (y == 1).astype(float)[:, None, :]                      # (B, 1, N)
    stats = {}
    for label, ind in ((1, y1), (0, 1.0 - y1)):
        wy = W * ind                                              # (B, F, N)
        n = wy.sum(-1)                                            # (B, F)
        s = np.einsum("bfn,bnp->bfp", wy, X)                      # sum w x
        ss = np.einsum("bfn,bnp,bnq->bfpq", wy, X, X)             # sum w x x'
        with np.errstate(invalid="ignore", divide="ignore"):
            m = s / n[..., None]
            S = ss / n[..., None, None] - m[..., :, None] * m[..., None, :]
        stats[label] = (n, np.nan_to_num(m), np.nan_to_num(S))
    (n1, m1, S1), (n0, m0, S0) = stats[1], stats[0]
    d = m1 - m0
    w = _direction(S1 + S0, d)
    proj = np.einsum("bfp,bnp->bfn", w, X)
    prefer = np.einsum("bfp,bfp->bf", w, (m1 + m0) / 2)
    c, _ = erm_threshold(proj, np.broadcast_to(y[:, None, :], proj.shape), W, prefer)
    # one class only: constant rule (w = 0; c = -inf predicts 1 everywhere, +inf predicts 0)
    only1, only0 = (n0 == 0) & (n1 > 0), (n1 == 0)
    constant = only1 | only0
    w = np.where(constant[..., None], 0.0, w)
    c = np.where(only1, -np.inf, np.where(only0, np.inf, c))
    # identical class means: no direction; predict the heavier class everywhere
    flat = ~constant & np.all(w == 0, axis=-1)
    c = np.where(flat, np.where(n1 >= n0, -np.inf, np.inf), c)
    return LinearRules(w=w, c=c)


def predict_rules(rules: LinearRules, X: np.ndarray) -> np.ndarray:
    """Predictions (B, F, M) of rules (B, F) on points X (B, M, p): 1 iff w.x > c."""
    proj = np.einsum("bfp,bmp->bfm", rules.w, X)
    return (proj > rules.c[..., None]).astype(np.int64)
