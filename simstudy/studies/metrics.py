"""Monte Carlo summaries with their standard errors.

One small function per metric; each returns a dataclass so that callers name what they use.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from simstudy.inference.proportions import wilson_bounds

__all__ = ["DEGENERATE_SHARE", "MeanSummary", "rate_without_degenerate", "RateSummary", "RatioSummary", "mean_summary", "rejection_rate",
           "between_block_correlation", "variance_ratio"]


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
    """A ratio-type estimate with its delta-method standard error.

    ``influence``: the per-replicate influence of the estimate (over the finite replicates), so
    that se = sd(influence) / sqrt(R); two estimates on the same replicates have a paired SE
    sd(influence_b - influence_a) / sqrt(R).
    """

    value: float
    se: float
    influence: np.ndarray | None = field(default=None, compare=False, repr=False)


def mean_summary(values) -> MeanSummary:
    """Mean and standard error (sd / sqrt(R)) of the finite values, R = their count."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return MeanSummary(np.nan, np.nan, 0)
    se = float(np.std(v, ddof=1) / np.sqrt(v.size)) if v.size > 1 else np.nan
    return MeanSummary(float(v.mean()), se, int(v.size))


def rejection_rate(rejected, confidence: float = 0.95) -> RateSummary:
    """Rate of True in a boolean array of rejections (or coverages), with a Wilson interval
    (:func:`simstudy.inference.wilson_bounds`, the package's one Wilson implementation)."""
    r = np.asarray(rejected, dtype=bool)
    k, n = int(r.sum()), int(r.size)
    if n == 0:
        return RateSummary(0, 0, np.nan, np.nan, np.nan, confidence)
    low, high = wilson_bounds(k, n, confidence)
    return RateSummary(k, n, k / n, low, high, confidence)


def between_block_correlation(mu_hat, theta3) -> RatioSummary:
    """rho = 1 - E[theta3] / Var(mu_hat) over replicates, with a delta-method standard error.

    Grandvalet & Bengio (2006), section 5: rho = (theta - E[theta3]) / theta is the relative
    downward bias of theta3, and equals gamma / theta (the between-block correlation).
    theta is estimated by the sample variance of mu_hat (ddof = 1), E[theta3] by the mean.

    The standard error linearises the ratio A / B (A = mean theta3, B = sample variance):
    the influence of replicate r on rho is -((theta3_r - A) / B - A / B^2 ((mu_r - mu_bar)^2 - B)),
    and se = sd(influence) / sqrt(R).
    """
    mu, t3 = _finite_pairs(mu_hat, theta3)
    R = mu.size
    if R < 3:
        return RatioSummary(np.nan, np.nan)
    A = t3.mean()
    B = mu.var(ddof=1)
    if B == 0:
        return RatioSummary(np.nan, np.nan)
    influence = -((t3 - A) / B - A / B**2 * ((mu - mu.mean()) ** 2 - B))
    return RatioSummary(float(1 - A / B), float(influence.std(ddof=1) / np.sqrt(R)), influence)


def _finite_pairs(a, b) -> tuple[np.ndarray, np.ndarray]:
    """Two per-replicate arrays as floats, restricted to the replicates where both are finite."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ok = np.isfinite(a) & np.isfinite(b)
    return a[ok], b[ok]


def variance_ratio(differences, variance_estimates, scale: float = 1.0) -> RatioSummary:
    """scale Var(d) / E[v] over replicates, with a delta-method standard error.

    The cv_clt study uses it with d = R_hat - R_n, v = sigma_hat^2 and scale = n: the ratio of
    the true variance of sqrt(n)(R_hat - R_n) to the mean of its estimate, which is 1 when the
    CV CLT's variance is consistent (Bayle et al. 2020) and exceeds 1 when the CV estimate
    fluctuates more than sigma_hat^2 / n says (a loss that is not stable enough).

    Var(d) is the sample variance B (ddof = 1) and E[v] the mean A of the finite pairs; the
    influence of replicate r on log(B / A) is ((d_r - d_bar)^2 - B) / B - (v_r - A) / A, so
    se = ratio sd(influence) / sqrt(R). At least 3 replicates and A > 0 are needed (else NaN).
    """
    d, v = _finite_pairs(differences, variance_estimates)
    R = d.size
    if R < 3:
        return RatioSummary(np.nan, np.nan)
    A, B = v.mean(), d.var(ddof=1)
    if A <= 0:
        return RatioSummary(np.nan, np.nan)
    ratio = scale * B / A
    influence = ratio * (((d - d.mean()) ** 2 - B) / B - (v - A) / A if B > 0 else -(v - A) / A)
    return RatioSummary(float(ratio), float(influence.std(ddof=1) / np.sqrt(R)), influence)


#: A rate is reported as driven by degenerate replicates (a zero variance estimate: a statistic
#: of +-inf, a point interval) when they make up at least this share of the events it counts
#: (rejections, or misses of a coverage).
DEGENERATE_SHARE = 0.1


def rate_without_degenerate(events: int, degenerate: int, trials: int, zero: int) -> float | None:
    """The rate of ``events`` among ``trials`` without the ``zero`` degenerate trials (of which
    ``degenerate`` are events), when those drive the rate (at least :data:`DEGENERATE_SHARE` of
    the events; NaN when every trial is degenerate); None when they do not."""
    if events == 0 or degenerate < DEGENERATE_SHARE * events:
        return None
    return (events - degenerate) / (trials - zero) if trials > zero else float("nan")
