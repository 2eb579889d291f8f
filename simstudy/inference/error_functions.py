"""Error functions comparing a risk estimate Rb with the true risk R (Nedelko, "Функция погрешности").

All take arrays (broadcasting) in [0, 1] and return values in [0, inf]. Edges are decided
explicitly rather than left to 0/0:

- where Rb == R (including both at 0 or both at 1) every function is 0;
- a zero denominator with Rb != R gives +inf (e.g. Delta1 with R in {0, 1});
- 0 ln 0 = 0 in Delta2 (relative entropy convention), and Rb > 0 with R = 0 gives +inf.
"""
from __future__ import annotations

import numpy as np
from simstudy.lazy import LazyModule

special = LazyModule("scipy.special")

__all__ = ["delta0", "delta1", "delta2", "delta1_swapped", "delta2_swapped", "ERROR_FUNCTIONS"]


def _iv(estimate, risk):
    rb = np.asarray(estimate, dtype=float)
    r = np.asarray(risk, dtype=float)
    if np.any((rb < 0) | (rb > 1)) or np.any((r < 0) | (r > 1)):
        raise ValueError("risks and their estimates must lie in [0, 1].")
    return rb, r


def _ratio(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(num == 0, 0.0, np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf))
    return out if out.ndim else float(out)


def delta0(estimate, risk):
    """Delta0(Rb, R) = (Rb - R)^2 / (2 Rb (1 - Rb) + 2 R (1 - R)), the function used by Nedelko.

    Finite unless both arguments are at (different) edges: Delta0(0, 1) = inf.
    """
    rb, r = _iv(estimate, risk)
    return _ratio((rb - r) ** 2, 2 * rb * (1 - rb) + 2 * r * (1 - r))


def delta1(estimate, risk):
    """Delta1(Rb, R) = (Rb - R)^2 / (R (1 - R)): squared error in units of the Bernoulli variance.

    For a frequency nu of N Bernoulli(p) trials, E[Delta1(nu, p)] = 1/N whatever p.
    Infinite when R is 0 or 1 and Rb != R.
    """
    rb, r = _iv(estimate, risk)
    return _ratio((rb - r) ** 2, r * (1 - r))


def delta2(estimate, risk):
    """Delta2(Rb, R) = Rb ln(Rb/R) + (1 - Rb) ln((1 - Rb)/(1 - R)) = KL(Bernoulli(Rb) || Bernoulli(R)).

    The paper prints it with a leading minus sign (the log-likelihood); we use the sign that
    makes it a divergence, >= 0 with equality iff Rb = R. Infinite when R is 0 (or 1) and
    Rb is not.
    """
    rb, r = _iv(estimate, risk)
    out = special.rel_entr(rb, r) + special.rel_entr(1 - rb, 1 - r)
    return out if np.ndim(out) else float(out)


def delta1_swapped(estimate, risk):
    """Delta1'(Rb, R) = Delta1(R, Rb) = (Rb - R)^2 / (Rb (1 - Rb)): infinite for Rb in {0, 1} != R."""
    return delta1(risk, estimate)


def delta2_swapped(estimate, risk):
    """Delta2'(Rb, R) = Delta2(R, Rb) = KL(Bernoulli(R) || Bernoulli(Rb))."""
    return delta2(risk, estimate)


#: Name -> function, in the order of the tables.
ERROR_FUNCTIONS = {"delta0": delta0, "delta1": delta1, "delta2": delta2,
                   "delta1_swapped": delta1_swapped, "delta2_swapped": delta2_swapped}
