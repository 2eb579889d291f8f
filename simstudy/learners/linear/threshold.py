"""The empirical-risk-minimising threshold of a linear rule "predict 1 iff w.x > c", for many fits
at once (:func:`erm_threshold`), and its tie rules (:data:`TIE_RULES`).

The candidate thresholds of a training set, in increasing order, are
``-inf`` (the constant rule predicting 1 everywhere), the midpoints between consecutive
distinct training projections, and ``+inf`` (the constant rule predicting 0 everywhere).
The constant rules are ordinary candidates: a threshold below (above) every projection.
The minimisers are the candidates whose (weighted) training error is within 1e-9 of the
smallest; ``tie_rule`` picks one of them (Nedelko states no rule):

``"midpoint"``
    the finite minimiser closest to Fisher's midpoint w.(m_1 + m_0)/2 (the lower one if two
    are equally close); a constant rule only when no finite threshold is a minimiser
    (-inf before +inf).
``"first"``
    the smallest minimiser (-inf when predicting 1 everywhere is a minimiser).
``"last"``
    the largest minimiser (+inf when predicting 0 everywhere is a minimiser).
``"random"``
    a uniformly random minimiser: with M minimisers c_(0) < ... < c_(M-1) (constant rules
    included) and a uniform u in [0, 1) given per fit, c_(floor(u M)).
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

__all__ = ["TIE_RULES", "Thresholds", "erm_threshold", "tie_uniforms"]

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
def _sort_order(values, order):
    """``order`` := the indices of ``values`` in increasing order of value.

    Insertion sort into the caller's buffer for short rows (Nedelko's samples have 20-50
    points; ``np.argsort`` would allocate at every fit), ``np.argsort`` for long ones or NaN.
    Equal values may come in any order: the candidates (:func:`_candidates`) only depend on
    the weights below each distinct value, which are exact sums of counts.
    """
    N = values.shape[0]
    if N <= 64:
        for i in range(N):
            v = values[i]
            if v != v:
                break
            j = i
            while j > 0 and values[order[j - 1]] > v:
                order[j] = order[j - 1]
                j -= 1
            order[j] = i
        else:
            return
    order[:] = np.argsort(values)


@numba.njit(cache=True)
def _erm_kernel(proj, y, fits_per_label_row, weights, prefer, rules, uniforms, c_out, err_out, count_out):
    """Candidates of every fit computed once, then the minimiser picked by each rule of ``rules``
    (codes of TIE_RULES): ``c_out[k, r]``, ``err_out[k, r]`` for rule ``rules[k]``; ``count_out[r]``
    the number of minimisers, which no rule changes. Fit r has the labels
    ``y[r // fits_per_label_row]`` (the fits of one sample share its labels)."""
    n_fits, N = proj.shape
    thr = np.empty(N + 2)
    err = np.empty(N + 2)
    order = np.empty(N, dtype=np.int64)
    for r in range(n_fits):
        _sort_order(proj[r], order)
        n = _candidates(proj[r], y[r // fits_per_label_row], weights[r], order, thr, err)
        for k in range(rules.shape[0]):
            j = _select(thr, err, n, rules[k], prefer[r], uniforms[r])
            c_out[k, r] = thr[j]
            err_out[k, r] = err[j]
        count_out[r] = _count_minimisers(err, n)


@dataclass(frozen=True)
class Thresholds:
    """ERM thresholds of a batch of fits under one tie rule.

    Attributes
    ----------
    c : ndarray (...)
        The thresholds (+-inf for the constant rules).
    error : ndarray (...)
        Their weighted training errors.
    minimisers : ndarray of int (...)
        The number of thresholds with the smallest training error (the same under every rule).
    """

    c: np.ndarray
    error: np.ndarray
    minimisers: np.ndarray


def _erm(proj, y, weights, prefer, tie_rules, uniforms) -> dict[str, Thresholds]:
    """The kernel over any leading shape, for each rule of ``tie_rules`` from one pass over the
    candidates (sorting the projections is most of the work, and no rule changes it)."""
    shape = proj.shape[:-1]
    N = proj.shape[-1]
    u = np.zeros(int(np.prod(shape)))
    for rule in tie_rules:
        checked = _check_tie_rule(rule, uniforms, shape)
        if rule == "random":
            u = checked
    flat = lambda a, dt: np.ascontiguousarray(np.broadcast_to(a, shape + (N,)).reshape(-1, N), dtype=dt)  # noqa: E731
    labels, fits_per_label_row = np.broadcast_to(y, shape + (N,)), 1
    if labels.ndim >= 3 and labels.strides[-2] == 0:   # the fits of a sample share its labels: no copy per fit
        labels, fits_per_label_row = labels[..., 0, :], shape[-1]
    codes = np.array([TIE_RULES[rule] for rule in tie_rules], dtype=np.int64)
    c = np.empty((len(codes), int(np.prod(shape))))
    err = np.empty_like(c)
    count = np.empty(c.shape[1], dtype=np.int64)
    _erm_kernel(flat(proj, np.float64), np.ascontiguousarray(labels.reshape(-1, N), dtype=np.int64),
                fits_per_label_row, flat(weights, np.float64),
                np.ascontiguousarray(np.broadcast_to(prefer, shape).reshape(-1), dtype=np.float64),
                codes, u, c, err, count)
    return {rule: Thresholds(c[k].reshape(shape), err[k].reshape(shape), count.reshape(shape))
            for k, rule in enumerate(tie_rules)}


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
    fit = _erm(proj, y, weights, prefer, (tie_rule,), uniforms)[tie_rule]
    return fit.c, fit.error


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
