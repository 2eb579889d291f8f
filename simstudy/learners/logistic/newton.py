"""The compiled Newton kernel of batched L2-penalised logistic regression: many weighted fits in
one call (:func:`_fit_batch`; :func:`simstudy.learners.logistic.batch.fit_logistic_batch` checks
the inputs and calls it).

The kernel fits, for every replicate r and every fit f, scikit-learn's binary logistic
regression objective (``sklearn/linear_model/_logistic.py``, ``_logistic_regression_path``, and
``sklearn/linear_model/_linear_loss.py``, ``LinearModelLoss``; scikit-learn 1.9)::

    L(w, b) = 1/S sum_i s_i l(y_i, z_i) + lam/2 ||w||^2,     z_i = x_i.w + b,
    l(y, z) = log(1 + exp(z)) - y z                           (HalfBinomialLoss),
    S = sum_i s_i,   lam = 1 / (C S)                          (l2_reg_strength),

with sample weights s_i = ``weights[r, f, i]`` (0/1 masks select a training subset, integer
counts repeat rows) and the intercept b not penalised. Multiplying by C S gives the textbook
form C sum_i s_i l_i + ||w||^2 / 2, so the optimum does not depend on how the weights are scaled.

Gradient and Hessian in the coordinates theta = (w, b) and x~_i = (x_i, 1) (``gradient_hessian``)::

    g = 1/S sum_i s_i (sigmoid(z_i) - y_i) x~_i + lam (w, 0)
    H = 1/S sum_i s_i sigmoid(z_i) (1 - sigmoid(z_i)) x~_i x~_i' + lam diag(1, ..., 1, 0)

The solver is scikit-learn's ``NewtonCholeskySolver`` (``_glm/_newton_solver.py``) step by step:
start at ``init`` (zeros by default, as scikit-learn), Newton direction d = -H^-1 g by a Cholesky
solve, backtracking line search (Armijo with sigma = 2^-11, halving up to 21 times, and
scikit-learn's fallback test for loss changes within 16 eps of the loss: accept if sum |g|
decreased), and the same stopping rule after each step: max |g| <= tol and half the Newton
decrement d'Hd / 2 <= tol. With ``init=None`` and the estimator's ``tol``/``max_iter`` the iterates
are therefore scikit-learn's own, so the fits equal ``LogisticRegression(solver="newton-cholesky")``
to rounding (1e-13 on Letter, same number of steps), including where its default ``tol=1e-4``
stops short of the optimum (on Letter by up to 3e-2 in coefficients at n = 100, 3e-3 at n = 3200,
flipping about one population prediction in 70,000). A tight ``tol`` (:data:`OPTIMUM_TOL`) gives the optimum
itself, whatever the start: use it with warm starts. What differs is rounding only: the pointwise
loss, gradient and Hessian come from one exponential (scikit-learn's formulas rearranged), the
gradient at an accepted point is the line search's (scikit-learn recomputes it), sums over rows
run in another order, and the loss sum is compensated to match the accuracy of NumPy's pairwise
sum, which the line search's rounding test relies on. A stopping test within rounding of its
threshold could therefore go the other way; none did in the tests.

Edge cases (per fit; see :data:`STATUS_NAMES`):

- a training subset holding one class: the optimum does not exist (b -> +-inf). The fit is the
  constant rule predicting that class, w = 0 and b = +1 (class 1) or -1 (class 0), as the
  package's other linear learners give (``linear.py``); status ``SINGLE_CLASS``, 0 iterations,
  counted as converged, ``predict_proba`` exactly 1 or 0. scikit-learn raises there.
- perfectly separable subsets: the penalty keeps the optimum finite (lam > 0 because C < inf);
  Newton converges, in more iterations when C is large.
- the Hessian is positive definite when C < inf: for v = (u, c), v'Hv = 1/S sum_i s_i h_i
  (x_i.u + c)^2 + lam ||u||^2 > 0 unless u = 0, and then c^2/S sum_i s_i h_i > 0 as h_i > 0.
  In floating point it can still fail (h_i underflowing at |z_i| > ~700, or lam tiny against a
  collinear design): the Cholesky factorisation then stops the fit with status
  ``SINGULAR_HESSIAN`` where scikit-learn would switch to L-BFGS. So do, as in scikit-learn, a
  failed line search (``LINE_SEARCH_FAILED``), a Newton direction that is not a descent direction
  (``NOT_DESCENT``) and pointwise Hessians underflowing to 0 for more than a quarter of the rows
  (``HESSIAN_UNDERFLOW``: strongly separated data at huge C, e.g. C = 1e12); the last accepted
  iterate is returned. Running out of ``max_iter`` gives ``MAX_ITER``. None is silent: every fit
  has a status and a ``converged`` flag, and callers refit the unconverged ones with
  scikit-learn if they need its L-BFGS answer.
"""
from __future__ import annotations


import numba
import numpy as np

from simstudy.learners.logistic.simd_math import exp_neg_abs, log1p_unit

__all__ = ["OPTIMUM_TOL", "STATUS_NAMES"]

# Per-fit status codes (LogisticFit.status).
CONVERGED, MAX_ITER, SINGLE_CLASS, LINE_SEARCH_FAILED, NOT_DESCENT, SINGULAR_HESSIAN, HESSIAN_UNDERFLOW = range(7)
STATUS_NAMES = ("converged", "max_iter", "single_class", "line_search_failed", "not_descent", "singular_hessian",
                "hessian_underflow")

#: scikit-learn's line search constants (NewtonSolver.line_search).
_BETA, _SIGMA, _LS_STEPS = 0.5, 0.00048828125, 21
_EPS16 = 16 * np.finfo(np.float64).eps
#: Floating-point flags that let LLVM vectorise the sums over rows (reordering only).
_SUMS = {"reassoc", "contract"}
#: ``tol`` that reaches the optimum to rounding (used with warm starts and solvers other than
#: newton-cholesky, whose ``tol`` means something else).
OPTIMUM_TOL = 1e-10


# ----------------------------------------------------------------------------- pointwise loss
@numba.njit(cache=True, error_model="numpy")
def _pointwise(y, z, s, m, S, gw, hw, e, lg, bits):
    """One pass over the m rows at linear predictor z: fills gw_i = s_i l'(z_i) / S and
    hw_i = s_i l''(z_i) / S; returns (1/S sum_i s_i l(y_i, z_i), weighted share of h_i = 0).

    l(y, z) = log(1 + exp(z)) - y z, l' = sigmoid(z) - y and l'' = sigmoid(z) (1 - sigmoid(z))
    come from one exponential e = exp(-|z|), one log1p and one division: scikit-learn's
    formulas (``_loss.pyx.tp``: ``closs_grad_half_binomial``, ``cgrad_hess_half_binomial``)
    rearranged to share e, equal to rounding, h underflowing to 0 at the same |z| (> ~745).
    exp and log1p are :mod:`simd_math`'s vectorised ones (within 1 ulp of the C library's), and
    the derivatives' loop is branch-free, so these passes run four rows per instruction; only
    the compensated sum stays scalar. ``e``, ``lg`` (float64) and ``bits`` (int64) are row buffers.

    The loss sum is compensated (Neumaier): the line search compares losses that differ by less
    than 16 eps near the optimum, which a plain running sum of n terms cannot resolve (NumPy's
    pairwise sum, used by scikit-learn, can)."""
    exp_neg_abs(z, m, e, bits)
    log1p_unit(e, m, lg)
    for i in range(m):
        ei = e[i]
        zi = z[i]
        yi = y[i]
        inv = 1.0 / (1.0 + ei)
        positive = zi >= 0.0
        loss = lg[i] + (zi if positive else 0.0) - yi * zi      # log(1 + e^z) = max(z, 0) + log1p(e^-|z|)
        grad_positive = (1.0 - yi) - yi * ei
        grad_negative = (1.0 - yi) * ei - yi
        gw[i] = s[i] * ((grad_positive if positive else grad_negative) * inv) / S
        hw[i] = s[i] * (ei * inv * inv) / S
        lg[i] = s[i] * loss                                     # the loss terms, summed below
    acc = 0.0
    comp = 0.0
    zero = 0.0
    for i in range(m):
        if hw[i] <= 0.0:
            zero += s[i]
        term = lg[i]
        total = acc + term
        if abs(acc) >= abs(term):
            comp += (acc - total) + term
        else:
            comp += (term - total) + acc
        acc = total
    return (acc + comp) / S, zero / S


@numba.njit(cache=True)
def _pointwise_at_zero(y, s, m, S, z, gw, hw):
    """:func:`_pointwise` at scikit-learn's start theta = 0 without exponentials: z_i = 0,
    l = log 2, l' = 1/2 - y_i, l'' = 1/4."""
    for i in range(m):
        z[i] = 0.0
        gw[i] = s[i] * (0.5 - y[i]) / S
        hw[i] = s[i] * 0.25 / S
    return np.log(2.0), 0.0


# ----------------------------------------------------------------------------- objective pieces
@numba.njit(cache=True)
def _penalty(theta, p, lam):
    """lam/2 ||w||^2 (the intercept theta[p], if any, is not penalised)."""
    acc = 0.0
    for j in range(p):
        acc += theta[j] * theta[j]
    return 0.5 * lam * acc


@numba.njit(cache=True)
def _linear_predictor(XT, theta, m, z):
    """z_i = x~_i . theta for the m active rows (XT holds x~ feature-major in its first d rows)."""
    d = theta.shape[0]
    for i in range(m):
        z[i] = 0.0
    for a in range(d):
        ta = theta[a]
        for i in range(m):
            z[i] += ta * XT[a, i]


@numba.njit(cache=True, fastmath=_SUMS)
def _gradient(XT, gw, m, theta, p, lam, g):
    """g = sum_i gw_i x~_i + lam (w, 0), where gw_i = s_i (sigmoid(z_i) - y_i) / S."""
    d = g.shape[0]
    for a in range(d):
        acc = 0.0
        for i in range(m):
            acc += gw[i] * XT[a, i]
        g[a] = acc + (lam * theta[a] if a < p else 0.0)


@numba.njit(cache=True, fastmath=_SUMS)
def _hessian(XT, dim, hw, m, p, lam, H, G):
    """H = sum_i hw_i x~_i x~_i' + lam diag(1, .., 1, 0), where hw_i = s_i h_i / S.

    The lower triangle in tiles of 2 rows a by 4 columns b: eight independent sums per pass over
    the rows, so that the FMA units, not one accumulator's latency, set the pace. ``XT`` has ``dim`` rows of x~ and zero rows
    up to a multiple of 4 (:func:`_padded_rows`); ``G`` (padded x padded) receives the tiles,
    whose entries beyond the lower triangle or ``dim`` are not used."""
    for a0 in range(0, dim, 2):
        for b0 in range(0, a0 + 2, 4):
            c00 = 0.0
            c01 = 0.0
            c02 = 0.0
            c03 = 0.0
            c10 = 0.0
            c11 = 0.0
            c12 = 0.0
            c13 = 0.0
            for i in range(m):
                x0 = hw[i] * XT[a0, i]      # the products hw_i x_ia, rounded once
                x1 = hw[i] * XT[a0 + 1, i]
                v0 = XT[b0, i]
                v1 = XT[b0 + 1, i]
                v2 = XT[b0 + 2, i]
                v3 = XT[b0 + 3, i]
                c00 += x0 * v0
                c01 += x0 * v1
                c02 += x0 * v2
                c03 += x0 * v3
                c10 += x1 * v0
                c11 += x1 * v1
                c12 += x1 * v2
                c13 += x1 * v3
            G[a0, b0], G[a0, b0 + 1], G[a0, b0 + 2], G[a0, b0 + 3] = c00, c01, c02, c03
            G[a0 + 1, b0], G[a0 + 1, b0 + 1], G[a0 + 1, b0 + 2], G[a0 + 1, b0 + 3] = c10, c11, c12, c13
    for a in range(dim):
        for b in range(a + 1):
            H[a, b] = G[a, b]
            H[b, a] = G[a, b]
        if a < p:
            H[a, a] += lam


@numba.njit(cache=True)
def _padded_rows(dim):
    """Rows of the feature-major design: ``dim`` rounded up to a multiple of 4 (the Hessian's tiles)."""
    return -(-dim // 4) * 4


# ----------------------------------------------------------------------------- linear algebra
@numba.njit(cache=True)
def _cholesky(H, L):
    """Lower Cholesky factor L of H (L L' = H); False when a pivot is not safely positive
    (below eps * d * max diag(H)): H singular or too ill-conditioned to solve with."""
    d = H.shape[0]
    scale = 0.0
    for a in range(d):
        scale = max(scale, H[a, a])
    floor = np.finfo(np.float64).eps * d * scale
    for a in range(d):
        for b in range(a + 1):
            acc = H[a, b]
            for k in range(b):
                acc -= L[a, k] * L[b, k]
            if a == b:
                if not acc > floor:       # also catches NaN
                    return False
                L[a, a] = np.sqrt(acc)
            else:
                L[a, b] = acc / L[b, b]
    return True


@numba.njit(cache=True)
def _cholesky_solve(L, rhs, x):
    """x = (L L')^-1 rhs by forward and back substitution."""
    d = L.shape[0]
    for a in range(d):
        acc = rhs[a]
        for k in range(a):
            acc -= L[a, k] * x[k]
        x[a] = acc / L[a, a]
    for a in range(d - 1, -1, -1):
        acc = x[a]
        for k in range(a + 1, d):
            acc -= L[k, a] * x[k]
        x[a] = acc / L[a, a]


@numba.njit(cache=True)
def _copy(src, dst, k):
    """dst[:k] = src[:k] (an explicit loop: array assignment compiles a shape check and its
    error message, which triples the compile time)."""
    for a in range(k):
        dst[a] = src[a]


@numba.njit(cache=True)
def _dot(u, v):
    acc = 0.0
    for a in range(u.shape[0]):
        acc += u[a] * v[a]
    return acc


@numba.njit(cache=True)
def _quadratic_form(H, v):
    """v' H v."""
    acc = 0.0
    for a in range(v.shape[0]):
        acc += v[a] * _dot(H[a], v)
    return acc


@numba.njit(cache=True)
def _sum_abs(v):
    acc = 0.0
    for a in range(v.shape[0]):
        acc += abs(v[a])
    return acc


@numba.njit(cache=True)
def _max_abs(v):
    acc = 0.0
    for a in range(v.shape[0]):
        acc = max(acc, abs(v[a]))
    return acc


# ----------------------------------------------------------------------------- Newton solver
@numba.njit(cache=True)
def _line_search(XT, y, s, m, S, p, lam, theta, z, loss, g, d, zd, theta_new, z_new, gw_new, hw_new, g_new, e, lg,
                 bits):
    """Backtracking line search along the Newton direction d (``NewtonSolver.line_search``).

    On success theta_new and z_new hold the accepted point, gw_new and hw_new its pointwise
    derivatives, g_new its gradient; e, lg and bits are :func:`_pointwise`'s buffers. Returns (accepted, L at the new point, its share of h_i = 0)."""
    dim = theta.shape[0]
    armijo = _SIGMA * _dot(g, d)                # sigma g'd < 0
    _linear_predictor(XT, d, m, zd)             # z moves by t zd
    sum_abs_g = -1.0
    t = 1.0
    for _ in range(_LS_STEPS):
        for a in range(dim):
            theta_new[a] = theta[a] + t * d[a]
        for i in range(m):
            z_new[i] = z[i] + t * zd[i]
        data_loss, zero = _pointwise(y, z_new, s, m, S, gw_new, hw_new, e, lg, bits)
        loss_new = data_loss + _penalty(theta_new, p, lam)
        change = loss_new - loss
        if change <= t * armijo:                # 1. sufficient decrease (Armijo)
            _gradient(XT, gw_new, m, theta_new, p, lam, g_new)
            return True, loss_new, zero
        if abs(change) <= abs(loss * _EPS16):   # 2. change lost in rounding: accept if sum |g| fell
            _gradient(XT, gw_new, m, theta_new, p, lam, g_new)
            if sum_abs_g < 0.0:
                sum_abs_g = _sum_abs(g)
            if _sum_abs(g_new) < sum_abs_g:
                return True, loss_new, zero
        t *= _BETA
    return False, loss, 0.0


@numba.njit(cache=True)
def _newton(XT, y, s, m, S, p, lam, tol, max_iter, theta, work, bits, G):
    """Minimise L from theta (updated in place) on the m active rows of total weight S; returns
    (iterations, status, max |gradient|). ``work`` holds 9 row buffers, ``bits`` one (int64), ``G`` the Hessian's tiles."""
    dim = theta.shape[0]
    z, zd, gw, hw, z_new, gw_new, hw_new, e, lg = work[0], work[1], work[2], work[3], work[4], work[5], work[6], \
        work[7], work[8]
    g, g_new, d, theta_new = np.empty(dim), np.empty(dim), np.empty(dim), np.empty(dim)
    H, L = np.empty((dim, dim)), np.empty((dim, dim))
    if _max_abs(theta) == 0.0:
        data_loss, zero = _pointwise_at_zero(y, s, m, S, z, gw, hw)
    else:
        _linear_predictor(XT, theta, m, z)
        data_loss, zero = _pointwise(y, z, s, m, S, gw, hw, e, lg, bits)
    loss = data_loss + _penalty(theta, p, lam)
    _gradient(XT, gw, m, theta, p, lam, g)
    grad_max = _max_abs(g)
    for it in range(1, max_iter + 1):
        # here z, gw, hw and g belong to theta
        if zero > 0.25:                         # scikit-learn's hessian_warning: it switches to L-BFGS
            return it - 1, HESSIAN_UNDERFLOW, grad_max
        _hessian(XT, dim, hw, m, p, lam, H, G)
        if not _cholesky(H, L):
            return it - 1, SINGULAR_HESSIAN, grad_max
        for a in range(dim):
            g_new[a] = -g[a]
        _cholesky_solve(L, g_new, d)            # Newton direction d = -H^-1 g
        if _dot(g, d) > 0.0:
            return it - 1, NOT_DESCENT, grad_max
        ok, loss, zero = _line_search(XT, y, s, m, S, p, lam, theta, z, loss, g, d, zd, theta_new, z_new,
                                      gw_new, hw_new, g_new, e, lg, bits)
        if not ok:
            return it - 1, LINE_SEARCH_FAILED, grad_max
        _copy(theta_new, theta, dim)
        _copy(g_new, g, dim)
        z, z_new = z_new, z                     # the accepted point's buffers become current
        gw, gw_new = gw_new, gw
        hw, hw_new = hw_new, hw
        grad_max = _max_abs(g)
        # stop when max |g| <= tol and the Newton decrement d'Hd / 2 <= tol (Boyd & Vandenberghe 9.5.1)
        if grad_max <= tol and 0.5 * _quadratic_form(H, d) <= tol:
            return it, CONVERGED, grad_max
    return max_iter, MAX_ITER, grad_max


@numba.njit(cache=True)
def _gather(Xr, yr, wr, fit_intercept, XT, y, s):
    """Active rows (weight > 0) of one fit into XT (feature-major x~, intercept row of ones),
    y and s; returns (active rows, rows with y = 1)."""
    n, p = Xr.shape
    m = 0
    ones = 0
    for i in range(n):
        if wr[i] > 0.0:
            for a in range(p):
                XT[a, m] = Xr[i, a]
            if fit_intercept:
                XT[p, m] = 1.0
            y[m] = yr[i]
            s[m] = wr[i]
            if yr[i] == 1.0:
                ones += 1
            m += 1
    return m, ones


@numba.njit(cache=True)
def _fit_batch(X, y, weights, init, C, fit_intercept, tol, max_iter, coef, intercept, n_iter, status, grad_max):
    """Every fit (r, f): gather its active rows, then Newton from init[r, f] (outputs in place)."""
    R, n, p = X.shape
    F = weights.shape[1]
    dim = p + 1 if fit_intercept else p
    rows = _padded_rows(dim)
    XT = np.zeros((rows, n))                    # rows beyond dim stay zero (the Hessian's tiles read them)
    G = np.empty((rows, rows))
    ya, sa = np.empty(n), np.empty(n)
    work = np.empty((9, n))
    bits = np.empty(n, np.int64)
    theta = np.empty(dim)
    for r in range(R):
        for f in range(F):
            m, ones = _gather(X[r], y[r], weights[r, f], fit_intercept, XT, ya, sa)
            if ones == 0 or ones == m:          # one class: the constant rule predicting it
                coef[r, f, :] = 0.0
                intercept[r, f] = 1.0 if ones > 0 else -1.0
                n_iter[r, f], status[r, f], grad_max[r, f] = 0, SINGLE_CLASS, np.nan
                continue
            S = 0.0
            for i in range(m):
                S += sa[i]
            lam = 1.0 / (C * S)                 # scikit-learn's l2_reg_strength
            for a in range(dim):
                theta[a] = init[r, f, a]
            n_iter[r, f], status[r, f], grad_max[r, f] = _newton(XT, ya, sa, m, S, p, lam, tol, max_iter, theta,
                                                                 work, bits, G)
            _copy(theta, coef[r, f], p)
            intercept[r, f] = theta[p] if fit_intercept else 0.0


# ----------------------------------------------------------------------------- Python API


# ----------------------------------------------------------------------------- estimator mapping


