"""Student's t and the standard normal: cdf, sf and quantile, bit for bit ``scipy.stats``'s.

``scipy.stats`` is slow to import (it loads scipy.optimize, integrate, interpolate, spatial and
sparse), while its ``t`` and ``norm`` evaluate special functions that ``scipy.special``, a much
smaller import, holds:
``t.cdf(x, df) = stdtr(df, x)``, ``t.sf(x, df) = stdtr(df, -x)``, ``t.ppf(q, df) =
stdtrit(df, q)``, ``norm.cdf(x) = ndtr(x)``, ``norm.sf(x) = ndtr(-x)``, ``norm.ppf(q) =
ndtri(q)``. The functions below compute exactly those, in float64 and with scipy.stats's
``* scale + loc`` of a quantile (loc 0, scale 1: a negative zero becomes 0.0), so the tests,
intervals and rho_alpha of :mod:`simstudy.inference` are the same bits with or without
``scipy.stats`` (tested against it). The aggregation of a study that needs nothing else from
``scipy.stats`` (``cv_variance``) never imports it.

Arguments are those the distributions accept (``df > 0``, ``0 <= q <= 1``); for others
``scipy.stats`` returns NaN and so do these, except that they do not validate ``df``.
"""
from __future__ import annotations

import numpy as np

from simstudy.lazy import LazyModule

special = LazyModule("scipy.special")  # imported on first use: workers and start-up need none of it

__all__ = ["norm_cdf", "norm_sf", "norm_ppf", "t_cdf", "t_sf", "t_ppf"]


def _float64(x):
    return np.asarray(x, dtype=np.float64)


def _quantile(values, q):
    """scipy.stats's quantile from the special function's ``values``: ``* scale + loc`` (1 and 0),
    and the support's ends at q = 0 and 1 (-inf, inf)."""
    out = np.where(q == 0, -np.inf, np.where(q == 1, np.inf, values * 1.0 + 0.0))
    return out[()] if out.ndim == 0 else out


def norm_cdf(x):
    """P(Z <= x), Z standard normal (``scipy.stats.norm.cdf``)."""
    return special.ndtr(_float64(x))


def norm_sf(x):
    """P(Z > x) (``scipy.stats.norm.sf``)."""
    return special.ndtr(-_float64(x))


def norm_ppf(q):
    """The q-quantile of the standard normal (``scipy.stats.norm.ppf``)."""
    q = _float64(q)
    return _quantile(special.ndtri(q), q)


def t_cdf(x, df):
    """P(T <= x), T Student's t with ``df`` degrees of freedom (``scipy.stats.t.cdf``)."""
    return special.stdtr(_float64(df), _float64(x))


def t_sf(x, df):
    """P(T > x) (``scipy.stats.t.sf``)."""
    return special.stdtr(_float64(df), -_float64(x))


def t_ppf(q, df):
    """The q-quantile of Student's t with ``df`` degrees of freedom (``scipy.stats.t.ppf``)."""
    q = _float64(q)
    return _quantile(special.stdtrit(_float64(df), q), q)
