"""The pivot behind most procedures: a test of H0: mu = mu0 from (estimate, se, df), and its interval.

Every procedure of the form t = (estimate - mu0) / se, referred to Student's t with ``df``
degrees of freedom (or the standard normal, ``df = inf``), builds its :class:`TestResult` here,
so that the test and :meth:`TestResult.confidence_interval` come from one computation and
agree by construction: the two-sided test does not reject at level alpha exactly when
abs(estimate - mu0) <= q_{1 - alpha/2} se, i.e. when mu0 lies in estimate -+ q se.

:func:`z_test` and :func:`t_test` are the building blocks for statistics stored per replicate
(the studies keep (estimate, se) and rebuild tests and intervals at any level).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from simstudy.inference.distributions import norm_cdf, norm_sf, t_cdf, t_sf
from simstudy.inference.results import TestResult, scalar

__all__ = ["ALTERNATIVES", "z_test", "t_test"]

ALTERNATIVES = ("two-sided", "less", "greater")

#: Relative size below which a spread or a difference is rounding noise (treated as 0).
ROUNDING = 64 * np.finfo(float).eps


def check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}; got {alternative!r}.")


def check_bounds(bounds, mu0=None) -> tuple[float, float] | None:
    """Validate ``bounds = (low, high)`` (None: unbounded) and a null value inside them."""
    if bounds is None:
        return None
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a pair (low, high) or None; got {bounds!r}.") from None
    if not low < high:
        raise ValueError(f"bounds must satisfy low < high; got {bounds!r}.")
    if mu0 is not None and np.any((np.asarray(mu0) < low) | (np.asarray(mu0) > high)):
        raise ValueError(f"mu0={mu0!r} lies outside bounds={bounds!r}: the null value must be a possible value "
                         "of the quantity tested.")
    return low, high


def pvalue(statistic, df: float, alternative: str):
    """P-value of a statistic under Student's t with ``df`` degrees of freedom (normal if infinite)."""
    cdf, sf = (norm_cdf, norm_sf) if np.isinf(df) else (partial(t_cdf, df=df), partial(t_sf, df=df))
    if alternative == "two-sided":
        return np.minimum(2.0 * sf(np.abs(statistic)), 1.0)
    return cdf(statistic) if alternative == "less" else sf(statistic)


def pivot_statistic(estimate, se, mu0, tolerance=0.0):
    """(estimate - mu0) / se, with the zero-se convention of :class:`TestResult` (0 or +-inf)."""
    diff = estimate - mu0
    same = np.abs(diff) <= tolerance
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, diff / se, np.where(same, 0.0, np.sign(diff) * np.inf))


def pivot_test(estimate, se, df: float, mu0=0.0, alternative: str = "two-sided", method: str = "",
               bounds=None, statistic=None, tolerance=0.0) -> TestResult:
    """A :class:`TestResult` of H0: mu = mu0 from an estimate, its standard error and df.

    ``statistic`` may be given when a procedure computes it in its own (algebraically equal)
    form, with the same zero-se ``tolerance``; otherwise it is :func:`pivot_statistic`.
    """
    check_alternative(alternative)
    bounds = check_bounds(bounds, mu0)
    estimate = np.asarray(estimate, dtype=float)
    se = np.asarray(se, dtype=float)
    mu0 = np.asarray(mu0, dtype=float)
    if np.any(se < 0):
        raise ValueError(f"standard errors must be non-negative; got {se!r}.")
    stat = pivot_statistic(estimate, se, mu0, tolerance) if statistic is None else np.asarray(statistic, dtype=float)
    p = pvalue(stat, df, alternative)
    return TestResult(scalar(stat), scalar(p), float(df), alternative, scalar(estimate), scalar(se), scalar(mu0),
                      method, bounds, scalar(np.asarray(tolerance, dtype=float)))


def z_test(estimate, se, mu0=0.0, alternative: str = "two-sided", bounds=None, method: str = "z") -> TestResult:
    """Normal (Wald) test of H0: mu = mu0 from an estimate and its standard error.

    z = (estimate - mu0) / se against the standard normal; ``.confidence_interval(level)`` is
    estimate -+ z_q se. The building block of the CLT procedures, exposed so that studies that
    store only (estimate, se) per replicate rebuild exactly the same tests and intervals.
    Arrays broadcast. A zero standard error gives z = 0 when the estimate equals mu0 and +-inf
    otherwise, and the point interval (see :class:`~simstudy.inference.TestResult`).
    """
    return pivot_test(estimate, se, np.inf, mu0, alternative, method, bounds)


def t_test(estimate, se, df, mu0=0.0, alternative: str = "two-sided", bounds=None, method: str = "t") -> TestResult:
    """Student test of H0: mu = mu0 from an estimate, its standard error and ``df`` degrees of freedom.

    t = (estimate - mu0) / se against Student's t with ``df`` degrees of freedom; the interval
    is estimate -+ t_q se. Arrays broadcast (``df`` is one number).
    """
    if not np.ndim(df) == 0 or not df > 0:
        raise ValueError(f"df must be a positive number; got {df!r}.")
    return pivot_test(estimate, se, float(df), mu0, alternative, method, bounds)
