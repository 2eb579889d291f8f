"""exp and log1p over arrays in loops that LLVM vectorises (AVX2: four doubles per instruction).

numba compiles ``np.exp`` and ``np.log1p`` to calls into the C library, one argument at a time;
without Intel's SVML (not in the PyPI builds of llvmlite) a loop that calls them is not
vectorised. The logistic kernel (:mod:`simstudy.learners.logistic.newton`) evaluates exp(-|z|) and
log1p(exp(-|z|)) at every training row in every line-search step, and these calls were about
half of a Newton step. The two functions below do the same in plain arithmetic:

- :func:`exp_neg_abs`: e = exp(-|z|) by Cody and Waite's reduction t = k ln 2 + r, |r| <= ln(2)/2
  (ln 2 split into a 32-bit head and a tail, as in fdlibm's ``e_exp.c``), the Taylor polynomial
  of degree 13 in r (truncation below 5e-18 relative) by Horner's rule, and the factor 2^k built
  from its bits. Arguments below -708 (where 2^k would leave the normal range), and NaN, go to
  ``np.exp`` in a second pass.
- :func:`log1p_unit`: log1p(x) for 0 <= x <= 1 by fdlibm's ``s_log1p.c``: 1 + x = 2^k (1 + f)
  with k = 0 or 1 and sqrt(2)/2 <= 1 + f < sqrt(2), the correction c for the rounding of 1 + x,
  s = f / (2 + f) and the same minimax polynomial R(s^2) (constants Lp1..Lp7), written without
  branches (both sides computed, one selected).

Accuracy (``tests/test_simd_math.py``, against the C library's ``exp`` and ``log1p`` through
Python's ``math``; NumPy's own ufuncs are not the C library's on CPUs with AVX-512): at most 1 unit
in the last place on 3 million arguments; exp differs from the C library's in the last bit for
about 6% of arguments, log1p for about 0.2%. The results are
therefore not the C library's bit for bit; the logistic kernel's fits move by rounding (about
1e-15 relative) and stay within rounding of scikit-learn's (its tests).

Both are compiled with ``error_model="numpy"`` (no zero-division check, which would keep a
division in a branch and the loop scalar) and ``fastmath={"contract"}`` (fused multiply-adds
only; no reassociation, which would undo the reduction's exact steps).

numba's on-disk cache of a kernel that inlines these is not invalidated by edits to this file:
after changing it, delete ``simstudy/learners/__pycache__`` before measuring or testing.
"""
from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["exp_neg_abs", "log1p_unit"]

_FLAGS = {"contract"}

# fdlibm e_exp.c: ln 2 = _LN2_HI + _LN2_LO, _LN2_HI with 32 significant bits (k * _LN2_HI is exact)
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
#: 1.5 * 2^52: t / ln 2 + _ROUND - _ROUND rounds to the nearest integer
_ROUND = 6755399441055744.0
#: Below this, 2^k is no longer a normal number: np.exp handles it.
_EXP_FLOOR = -708.0
#: 1/j! for j = 13, 12, ..., 0: the Taylor polynomial's coefficients, highest first (Horner)
_TAYLOR = tuple(1.0 / math.factorial(j) for j in range(13, -1, -1))

# fdlibm s_log1p.c
_SQRT2 = 1.4142135623730951
_LP1 = 6.666666666666735130e-01
_LP2 = 3.999999999940941908e-01
_LP3 = 2.857142874366239149e-01
_LP4 = 2.222219843214978396e-01
_LP5 = 1.818357216161805012e-01
_LP6 = 1.531383769920937332e-01
_LP7 = 1.479819860511658591e-01


@numba.njit(cache=True, fastmath=_FLAGS, error_model="numpy")
def exp_neg_abs(z, m, out, bits):
    """out[i] = exp(-|z[i]|) for i < m.

    Parameters
    ----------
    z : ndarray of float64
    m : int
        Number of leading entries to evaluate.
    out : ndarray of float64
        Receives the results (at least m entries).
    bits : ndarray of int64
        Scratch (at least m entries): the bits of 2^k.
    """
    scale = bits.view(np.float64)
    for i in range(m):
        t = max(-abs(z[i]), _EXP_FLOOR)
        k = (t * _INV_LN2 + _ROUND) - _ROUND          # nearest integer to t / ln 2
        r = (t - k * _LN2_HI) - k * _LN2_LO           # t = k ln 2 + r, |r| <= ln(2)/2
        p = _TAYLOR[0]
        for j in range(1, 14):                        # Horner; unrolled by the compiler
            p = p * r + _TAYLOR[j]
        out[i] = p
        bits[i] = (np.int64(k) + 1023) << 52          # 2^k, -1021 <= k <= 0
    for i in range(m):
        out[i] *= scale[i]
    for i in range(m):                                # below the floor (subnormal or 0) and NaN
        t = -abs(z[i])
        if not t >= _EXP_FLOOR:
            out[i] = np.exp(t)


@numba.njit(cache=True, fastmath=_FLAGS, error_model="numpy")
def log1p_unit(x, m, out):
    """out[i] = log1p(x[i]) for i < m, where 0 <= x[i] <= 1 (as exp(-|z|) is).

    Parameters
    ----------
    x : ndarray of float64
        Arguments in [0, 1]; outside it the result is not accurate.
    m : int
        Number of leading entries to evaluate.
    out : ndarray of float64
        Receives the results; may be ``x`` itself.
    """
    for i in range(m):
        xi = x[i]
        u = 1.0 + xi
        big = u >= _SQRT2                             # 1 + x = 2^k (1 + f): k = 1, else k = 0 and f = x
        k = 1.0 if big else 0.0
        f_big = 0.5 * u - 1.0                         # exact (Sterbenz)
        c_big = (xi - (u - 1.0)) / u                  # the rounding of 1 + x, relative
        f = f_big if big else xi
        c = c_big if big else 0.0
        hfsq = 0.5 * f * f
        s = f / (2.0 + f)
        z = s * s
        R = z * (_LP1 + z * (_LP2 + z * (_LP3 + z * (_LP4 + z * (_LP5 + z * (_LP6 + z * _LP7))))))
        out[i] = k * _LN2_HI + (f - (hfsq - (s * (hfsq + R) + (k * _LN2_LO + c))))
