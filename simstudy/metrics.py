"""Monte Carlo summaries with their standard errors.

One small function per metric; each returns a dataclass so that callers name what they use.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from simstudy.lazy import LazyModule

stats = LazyModule("scipy.stats")

__all__ = ["MeanSummary", "RateSummary", "RatioSummary", "mean_summary", "rejection_rate",
           "wilson_interval", "between_block_correlation"]


@dataclass(frozen=True)
class MeanSummary:
    """Monte Carlo mean of a quantity and its standard error."""

    mean: float
    se: float
    count: int


@dataclass(frozen=True)
class RateSummary:
    """A proportion (rejection rate, coverage) with a Wilson score interval."""

    successes: int
    trials: int
    rate: float
    low: float
    high: float
    confidence: float


@dataclass(frozen=True)
class RatioSummary:
    """A ratio-type estimate with its delta-method standard error."""

    value: float
    se: float


def mean_summary(values) -> MeanSummary:
    """Mean and standard error (sd / sqrt(R)) of the finite values, R = their count."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return MeanSummary(np.nan, np.nan, 0)
    se = float(np.std(v, ddof=1) / np.sqrt(v.size)) if v.size > 1 else np.nan
    return MeanSummary(float(v.mean()), se, int(v.size))


def wilson_interval(successes, trials, confidence: float = 0.95):
    """Wilson score interval for a binomial proportion.

    Parameters
    ----------
    successes, trials : int or array_like
        Number of successes and of trials (trials > 0).
    confidence : float
        Confidence level, 0.95 by default.

    Returns
    -------
    (low, high) : tuple of float or ndarray
        Bounds of ``p_hat`` shifted towards 1/2:
        (p + z^2/2N +- z sqrt(p(1-p)/N + z^2/4N^2)) / (1 + z^2/N).
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    if np.any(n <= 0):
        raise ValueError(f"trials must be positive; got {trials!r}.")
    if np.any((k < 0) | (k > n)):
        raise ValueError(f"successes must lie in [0, trials]; got {successes!r} of {trials!r}.")
    z = stats.norm.ppf(0.5 + confidence / 2)
    p = k / n
    denom = 1 + z**2 / n
    centre = (p + z**2 / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
    low, high = np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def rejection_rate(rejected, confidence: float = 0.95) -> RateSummary:
    """Rate of True in a boolean array of rejections (or coverages), with a Wilson interval."""
    r = np.asarray(rejected, dtype=bool)
    k, n = int(r.sum()), int(r.size)
    if n == 0:
        return RateSummary(0, 0, np.nan, np.nan, np.nan, confidence)
    low, high = wilson_interval(k, n, confidence)
    return RateSummary(k, n, k / n, low, high, confidence)


def between_block_correlation(mu_hat, theta3) -> RatioSummary:
    """rho = 1 - E[theta3] / Var(mu_hat) over replicates, with a delta-method standard error.

    Grandvalet & Bengio (2006), section 5: rho = (theta - E[theta3]) / theta is the relative
    downward bias of theta3, and equals gamma / theta (the between-block correlation).
    theta is estimated by the sample variance of mu_hat (ddof = 1), E[theta3] by the mean.

    The standard error linearises the ratio A / B (A = mean theta3, B = sample variance):
    the influence of replicate r is (theta3_r - A) / B - A / B^2 ((mu_r - mu_bar)^2 - B),
    and se = sd(influence) / sqrt(R).
    """
    mu = np.asarray(mu_hat, dtype=float)
    t3 = np.asarray(theta3, dtype=float)
    ok = np.isfinite(mu) & np.isfinite(t3)
    mu, t3 = mu[ok], t3[ok]
    R = mu.size
    if R < 3:
        return RatioSummary(np.nan, np.nan)
    A = t3.mean()
    B = mu.var(ddof=1)
    if B == 0:
        return RatioSummary(np.nan, np.nan)
    influence = (t3 - A) / B - A / B**2 * ((mu - mu.mean()) ** 2 - B)
    return RatioSummary(float(1 - A / B), float(influence.std(ddof=1) / np.sqrt(R)))
