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
- Threshold: the candidate thresholds of a training set, in increasing order, are
  ``-inf`` (the constant rule predicting 1 everywhere), the midpoints between consecutive
  distinct training projections, and ``+inf`` (the constant rule predicting 0 everywhere).
  The constant rules are ordinary candidates: a threshold below (above) every projection.
  The minimisers are the candidates whose (weighted) training error is within 1e-9 of the
  smallest; ``tie_rule`` picks one of them (Nedelko states no rule):

  ``"midpoint"``
      the finite minimiser closest to Fisher's midpoint w.(m_1 + m_0)/2 (the lower one if two
      are equally close); a constant rule only when no finite threshold is a minimiser
      (-inf before +inf). The rule of this package before ``tie_rule`` existed.
  ``"first"``
      the smallest minimiser (-inf when predicting 1 everywhere is a minimiser).
  ``"last"``
      the largest minimiser (+inf when predicting 0 everywhere is a minimiser).
  ``"random"``
      a uniformly random minimiser: with M minimisers c_(0) < ... < c_(M-1) (constant rules
      included) and a uniform u in [0, 1) given per fit, c_(floor(u M)).
- Equal class means (d = 0, hence w = 0): every projection is 0, so the candidates are the two
  constant rules with errors (class-0 weight, class-1 weight): the heavier class is predicted,
  a tie between the two classes is broken by ``tie_rule`` like any other.
- A training set holding one class only gives the constant rule predicting that class
  (w = 0, c = -inf for class 1, +inf for class 0).
- Prediction: 1 iff w.x > c.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

__all__ = ["LinearRules", "FisherDirections", "TIE_RULES", "fisher_directions", "fisher_fit", "erm_threshold",
           "predict_rules", "tie_uniforms"]


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


#: ``tie_rule`` names and their codes in the kernel.
TIE_RULES = {"midpoint": 0, "first": 1, "last": 2, "random": 3}
_TOL = 1e-9  # errors within _TOL of the smallest are ties (weights are counts: errors are integers)


def _check_tie_rule(tie_rule: str, uniforms, shape: tuple) -> np.ndarray:
    """The uniforms of the fits as a flat float array (zeros unless ``tie_rule="random"``)."""
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule={tie_rule!r}: use one of {tuple(TIE_RULES)}.")
    n = int(np.prod(shape))
    if tie_rule != "random":
        return np.zeros(n)
    if uniforms is None:
        raise ValueError('tie_rule="random" needs uniforms: one U[0, 1) per fit, drawn by the caller.')
    u = np.ascontiguousarray(np.broadcast_to(np.asarray(uniforms, dtype=np.float64), shape).reshape(-1))
    if np.any((u < 0) | (u >= 1)) or np.any(np.isnan(u)):
        raise ValueError("uniforms must lie in [0, 1).")
    return u


@numba.njit(cache=True)
def _candidates(proj, y, weights, order, thr, err):
    """Fill ``thr[:n]``, ``err[:n]`` with the candidates in increasing order; return n.

    Candidate t_j between the j-th and (j+1)-th distinct training projection predicts 1 above
    it, so its error is (class-1 weight below) + (class-0 weight above).
    """
    pos_total = 0.0
    neg_total = 0.0
    for i in range(proj.shape[0]):
        if weights[i] > 0:
            if y[i] == 1:
                pos_total += weights[i]
            else:
                neg_total += weights[i]
    thr[0] = -np.inf          # all predicted 1: errors = class-0 weight
    err[0] = neg_total
    n = 1
    pos_below = 0.0
    neg_below = 0.0
    last = -np.inf
    have_last = False
    for j in range(order.shape[0]):
        i = order[j]
        if weights[i] <= 0:
            continue
        value = proj[i]
        if have_last and value > last:  # a split between last and value
            thr[n] = 0.5 * (last + value)
            err[n] = pos_below + (neg_total - neg_below)
            n += 1
        if y[i] == 1:
            pos_below += weights[i]
        else:
            neg_below += weights[i]
        last = value
        have_last = True
    thr[n] = np.inf           # all predicted 0: errors = class-1 weight
    err[n] = pos_total
    return n + 1


@numba.njit(cache=True)
def _count_minimisers(err, n):
    """Number M of candidates whose error is within _TOL of the smallest."""
    best = err[0]
    for j in range(1, n):
        best = min(best, err[j])
    count = 0
    for j in range(n):
        if err[j] <= best + _TOL:
            count += 1
    return count


@numba.njit(cache=True)
def _select(thr, err, n, rule, prefer, u):
    """Index of the chosen minimiser among the n candidates (see the module docstring)."""
    best = err[0]
    for j in range(1, n):
        best = min(best, err[j])
    count = _count_minimisers(err, n)
    if rule == 1:      # first
        target = 0
    elif rule == 2:    # last
        target = count - 1
    elif rule == 3:    # random: the floor(u M)-th of the M minimisers
        target = min(int(u * count), count - 1)
    else:              # midpoint: finite minimiser closest to prefer, else -inf, else +inf
        pick, dist = -1, np.inf
        for j in range(1, n - 1):
            if err[j] <= best + _TOL and abs(thr[j] - prefer) < dist:
                pick, dist = j, abs(thr[j] - prefer)
        if pick >= 0:
            return pick
        return 0 if err[0] <= best + _TOL else n - 1
    seen = 0
    for j in range(n):
        if err[j] <= best + _TOL:
            if seen == target:
                return j
            seen += 1
    return n - 1  # unreachable


@numba.njit(cache=True)
def _erm_kernel(proj, y, weights, prefer, rule, uniforms, c_out, err_out, count_out):
    n_rules, N = proj.shape
    thr = np.empty(N + 2)
    err = np.empty(N + 2)
    for r in range(n_rules):
        order = np.argsort(proj[r])
        n = _candidates(proj[r], y[r], weights[r], order, thr, err)
        j = _select(thr, err, n, rule, prefer[r], uniforms[r])
        c_out[r] = thr[j]
        err_out[r] = err[j]
        count_out[r] = _count_minimisers(err, n)


def _erm(proj, y, weights, prefer, tie_rule, uniforms):
    """The kernel over any leading shape: (threshold, its training error, number of minimisers)."""
    shape = proj.shape[:-1]
    N = proj.shape[-1]
    u = _check_tie_rule(tie_rule, uniforms, shape)
    flat = lambda a, dt: np.ascontiguousarray(np.broadcast_to(a, shape + (N,)).reshape(-1, N), dtype=dt)  # noqa: E731
    c = np.empty(int(np.prod(shape)))
    err = np.empty_like(c)
    count = np.empty(c.shape, dtype=np.int64)
    _erm_kernel(flat(proj, np.float64), flat(y, np.int64), flat(weights, np.float64),
                np.ascontiguousarray(np.broadcast_to(prefer, shape).reshape(-1), dtype=np.float64),
                TIE_RULES[tie_rule], u, c, err, count)
    return c.reshape(shape), err.reshape(shape), count.reshape(shape)


def erm_threshold(proj: np.ndarray, y: np.ndarray, weights: np.ndarray, prefer: np.ndarray,
                  tie_rule: str = "midpoint", uniforms: np.ndarray | None = None):
    """Threshold minimising the weighted training error of "predict 1 iff proj > c".

    Parameters
    ----------
    proj : ndarray, shape (..., N)
        Projections of the sample points.
    y : ndarray of {0, 1}, shape (..., N)
    weights : ndarray, shape (..., N)
        Point weights; points with weight 0 are not part of the training set.
    prefer : ndarray, shape (...)
        Fisher's midpoint, the target of ``tie_rule="midpoint"`` (ignored by the other rules).
    tie_rule : {"midpoint", "first", "last", "random"}
        Which minimiser is taken (module docstring).
    uniforms : ndarray, shape (...), optional
        One U[0, 1) per fit, required by ``tie_rule="random"`` (ignored otherwise).

    Returns
    -------
    c : ndarray, shape (...)
        The threshold (+-inf for the constant rules).
    error : ndarray, shape (...)
        Its weighted training error (sum of weights of misclassified points).
    """
    c, err, _ = _erm(proj, y, weights, prefer, tie_rule, uniforms)
    return c, err


def tie_uniforms(rng: np.random.Generator, n_fits: int, tie_rule: str) -> np.ndarray | None:
    """The uniforms of one replicate's fits for ``tie_rule="random"`` (None for the other rules).

    Draw order: the caller draws them from the replicate's own generator after everything else
    it draws for that replicate (sample, folds, bootstrap counts), one ``rng.random(n_fits)``
    call in the order of its fits; the other rules draw nothing, so their random streams are
    unchanged. Per-replicate draws make the results independent of how replicates are batched.
    """
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule={tie_rule!r}: use one of {tuple(TIE_RULES)}.")
    return rng.random(n_fits) if tie_rule == "random" else None


@dataclass(frozen=True)
class FisherDirections:
    """Fisher's directions of a batch of fits, everything a fit needs before its threshold.

    The direction does not depend on the tie rule, so one :func:`fisher_directions` serves
    every rule: :meth:`rules` picks the thresholds.

    Attributes
    ----------
    w : ndarray (B, F, p)
        Directions (before single-class fits are made constant).
    proj : ndarray (B, F, N)
        Projections w.x of the sample points.
    prefer : ndarray (B, F)
        Fisher's midpoints w.(m_1 + m_0)/2 (the target of ``tie_rule="midpoint"``).
    y : ndarray (B, F, N)
        Labels, broadcast over the fits.
    weights : ndarray (B, F, N)
        Point weights of each fit.
    only1, only0 : ndarray of bool (B, F)
        The training set holds class 1 only / no class-1 point (constant rules).
    """

    w: np.ndarray
    proj: np.ndarray
    prefer: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    only1: np.ndarray
    only0: np.ndarray

    def thresholds(self, tie_rule: str = "midpoint", uniforms: np.ndarray | None = None):
        """ERM thresholds under ``tie_rule``: (c, training error, number of minimisers), each (B, F).

        Single-class fits are not yet made constant here (see :meth:`rules`).
        """
        return _erm(self.proj, self.y, self.weights, self.prefer, tie_rule, uniforms)

    def minimisers(self, fits: slice = slice(None)) -> np.ndarray:
        """Number of thresholds with the smallest training error of the ``fits`` (B, F'); 1 for
        single-class fits (their rule is constant whatever the tie rule)."""
        _, _, count = _erm(self.proj[:, fits], self.y[:, fits], self.weights[:, fits], self.prefer[:, fits],
                           "first", None)
        return np.where(self.only1[:, fits] | self.only0[:, fits], 1, count)

    def rules(self, tie_rule: str = "midpoint", uniforms: np.ndarray | None = None) -> LinearRules:
        """The fitted rules under ``tie_rule`` (``uniforms`` (B, F) for ``"random"``)."""
        # w = 0 (equal class means) needs no special case: all projections are 0, the candidates
        # are the two constant rules and the tie rule breaks a tie between the class weights
        c, _, _ = self.thresholds(tie_rule, uniforms)
        # one class only: constant rule (w = 0; c = -inf predicts 1 everywhere, +inf predicts 0)
        constant = self.only1 | self.only0
        w = np.where(constant[..., None], 0.0, self.w)
        c = np.where(self.only1, -np.inf, np.where(self.only0, np.inf, c))
        return LinearRules(w=w, c=c)


def fisher_directions(X: np.ndarray, y: np.ndarray, weights: np.ndarray) -> FisherDirections:
    """Fisher's direction S^-1 (m_1 - m_0) of every weighted fit (module docstring).

    Parameters
    ----------
    X : ndarray, shape (B, N, p)
        B samples of N points.
    y : ndarray of {0, 1}, shape (B, N)
    weights : ndarray, shape (B, F, N)
        F fits per sample; ``weights[b, f, i]`` is the weight of point i in fit f of sample b.

    Returns
    -------
    FisherDirections
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
    return FisherDirections(w=w, proj=proj, prefer=prefer, y=np.broadcast_to(y[:, None, :], proj.shape), weights=W,
                            only1=(n0 == 0) & (n1 > 0), only0=(n1 == 0))


def fisher_fit(X: np.ndarray, y: np.ndarray, weights: np.ndarray, tie_rule: str = "midpoint",
               uniforms: np.ndarray | None = None) -> LinearRules:
    """Fit Fisher's discriminant with an ERM threshold for every weight vector.

    Parameters
    ----------
    X, y, weights
        The samples and the point weights of the F fits per sample (:func:`fisher_directions`).
    tie_rule : {"midpoint", "first", "last", "random"}
        Which of several thresholds with the smallest training error is taken (module docstring).
    uniforms : ndarray, shape (B, F), optional
        ``uniforms[b, f]`` in [0, 1) picks the minimiser of fit f of sample b under
        ``tie_rule="random"`` (see :func:`tie_uniforms`); ignored by the other rules.

    Returns
    -------
    LinearRules
        ``w`` of shape (B, F, p) and ``c`` of shape (B, F).
    """
    return fisher_directions(X, y, weights).rules(tie_rule, uniforms)


def predict_rules(rules: LinearRules, X: np.ndarray) -> np.ndarray:
    """Predictions (B, F, M) of rules (B, F) on points X (B, M, p): 1 iff w.x > c."""
    proj = np.einsum("bfp,bmp->bfm", rules.w, X)
    return (proj > rules.c[..., None]).astype(np.int64)
