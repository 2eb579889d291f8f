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
- Threshold: :mod:`.threshold` (the candidates, the minimisers and ``tie_rule``).
- Equal class means (d = 0, hence w = 0): every projection is 0, so the candidates are the two
  constant rules with errors (class-0 weight, class-1 weight): the heavier class is predicted,
  a tie between the two classes is broken by ``tie_rule`` like any other.
- A training set holding one class only gives the constant rule predicting that class
  (w = 0, c = -inf for class 1, +inf for class 0).
- Prediction: 1 iff w.x > c.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numba
import numpy as np

from simstudy.learners.linear.threshold import Thresholds, _erm

__all__ = ["FisherDirections", "LinearRules", "fisher_directions", "fisher_fit", "predict_rules"]


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

    def thresholds(self, tie_rules: Sequence[str], uniforms: np.ndarray | None = None) -> dict[str, Thresholds]:
        """ERM thresholds (B, F) under each rule of ``tie_rules``, from one pass over the candidates.

        Single-class fits are not yet made constant here (see :meth:`rules_by_tie_rule`).
        """
        return _erm(self.proj, self.y, self.weights, self.prefer, tuple(tie_rules), uniforms)

    def minimisers(self, fits: slice = slice(None)) -> np.ndarray:
        """Number of thresholds with the smallest training error of the ``fits`` (B, F'); 1 for
        single-class fits (their rule is constant whatever the tie rule)."""
        count = _erm(self.proj[:, fits], self.y[:, fits], self.weights[:, fits], self.prefer[:, fits],
                     ("first",), None)["first"].minimisers
        return np.where(self.only1[:, fits] | self.only0[:, fits], 1, count)

    def rules_by_tie_rule(self, tie_rules: Sequence[str], uniforms: np.ndarray | None = None) -> dict[str, LinearRules]:
        """The fitted rules under each rule of ``tie_rules`` (``uniforms`` (B, F) for ``"random"``)."""
        # w = 0 (equal class means) needs no special case: all projections are 0, the candidates
        # are the two constant rules and the tie rule breaks a tie between the class weights
        constant = self.only1 | self.only0
        w = np.where(constant[..., None], 0.0, self.w)
        # one class only: constant rule (w = 0; c = -inf predicts 1 everywhere, +inf predicts 0)
        return {rule: LinearRules(w=w, c=np.where(self.only1, -np.inf, np.where(self.only0, np.inf, fit.c)))
                for rule, fit in self.thresholds(tie_rules, uniforms).items()}

    def rules(self, tie_rule: str = "midpoint", uniforms: np.ndarray | None = None) -> LinearRules:
        """The fitted rules under ``tie_rule`` (``uniforms`` (B, F) for ``"random"``)."""
        return self.rules_by_tie_rule((tie_rule,), uniforms)[tie_rule]

    @cached_property
    def _rule_projections(self) -> np.ndarray:
        """w.x of the fitted rules at the sample points: the projections, 0 for the constant rules (w = 0)."""
        return np.where((self.only1 | self.only0)[..., None], 0.0, self.proj)

    def sample_predictions(self, rules: LinearRules) -> np.ndarray:
        """Predictions (B, F, N) at the sample points of rules fitted from these directions, as
        booleans: ``predict_rules(rules, X) == 1`` with the projections already computed."""
        return self._rule_projections > rules.c[..., None]


@numba.njit(cache=True)
def _class_sums(W, is1, X, n, s, ss):
    """Per class (index 1: y = 1, index 0: the rest) and fit, sum w, sum w x and sum w x x'.

    Products (w x_a) x_b accumulated over the points in order, without the (B, F, N) weight
    arrays of each class that ``np.einsum("bfn,bnp,bnq->bfpq", W * ind, X, X)`` needed. For 2-D
    points (Nedelko's model) these are np.einsum's operations in its order, so the results are
    the same bits (tested; einsum unrolls the sums for some other strides, which then agree to
    rounding). ``n`` sums in point order; the weights are counts, so it is exact.
    """
    B, F, N = W.shape
    p = X.shape[2]
    for b in range(B):
        for f in range(F):
            for i in range(N):
                w = W[b, f, i]
                k = 1 if is1[b, i] else 0
                n[k, b, f] += w
                for a in range(p):
                    wx = w * X[b, i, a]
                    s[k, b, f, a] += wx
                    for c in range(p):
                        ss[k, b, f, a, c] += wx * X[b, i, c]


@numba.njit(cache=True)
def _project(w, X, out):
    """out[b, f, i] = w[b, f] . X[b, i], summed over features in order (``np.einsum``'s bits for
    2-D points, see :func:`_class_sums`)."""
    B, F, p = w.shape
    N = X.shape[1]
    for b in range(B):
        for f in range(F):
            for i in range(N):
                acc = 0.0
                for a in range(p):
                    acc += w[b, f, a] * X[b, i, a]
                out[b, f, i] = acc


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
    (B, F, N), p = W.shape, X.shape[2]
    n, s, ss = np.zeros((2, B, F)), np.zeros((2, B, F, p)), np.zeros((2, B, F, p, p))
    _class_sums(np.ascontiguousarray(W), np.ascontiguousarray(y == 1), np.ascontiguousarray(X), n, s, ss)
    stats = {}
    for label in (1, 0):   # sum w, sum w x, sum w x x' of the class's points
        with np.errstate(invalid="ignore", divide="ignore"):
            m = s[label] / n[label][..., None]
            S = ss[label] / n[label][..., None, None] - m[..., :, None] * m[..., None, :]
        stats[label] = (n[label], np.nan_to_num(m), np.nan_to_num(S))
    (n1, m1, S1), (n0, m0, S0) = stats[1], stats[0]
    d = m1 - m0
    w = _direction(S1 + S0, d)
    proj = np.empty((B, F, N))
    _project(np.ascontiguousarray(w), np.ascontiguousarray(X), proj)
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
