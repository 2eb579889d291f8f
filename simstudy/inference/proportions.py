"""Tests (with their intervals) on counts: an error rate (binomial), two classifiers on one test
set (McNemar), two error rates on independent test sets (two-proportion z).

Each interval is the set of null values its test does not reject: Wald's interval for the Wald
z, Wilson's for the score z, Clopper-Pearson's for the exact test with central (doubled
one-tailed) p-values, the continuity-corrected Wilson interval for McNemar's chi-square, and
the Farrington-Manning score interval for the pooled two-proportion z.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from simstudy.lazy import LazyModule

stats = LazyModule("scipy.stats")
optimize = LazyModule("scipy.optimize")

from simstudy.inference.distributions import norm_ppf
from simstudy.inference.pivot import check_alternative, check_bounds, pivot_statistic, pvalue
from simstudy.inference.results import (
    ConfidenceInterval, TestResult, check_level, make_interval, pivot_interval, quantile, scalar,
)

__all__ = ["BINOMIAL_METHODS", "BinomialTestResult", "TwoProportionTestResult", "binomial_test", "mcnemar_test",
           "two_proportion_z_test", "wilson_bounds"]

#: Methods of :func:`binomial_test`.
BINOMIAL_METHODS = ("normal", "wilson", "clopper-pearson")


def _wilson_roots(p, n, z):
    """The roots in mu0 of (p - mu0)^2 = z^2 mu0 (1 - mu0) / n: Wilson's (low, high), clipped to [0, 1]."""
    denom = 1 + z**2 / n
    centre = (p + z**2 / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def wilson_bounds(successes, trials, confidence_level: float = 0.95):
    """Two-sided Wilson score interval (low, high) for a binomial proportion (arrays broadcast).

    (p + z^2/2N -+ z sqrt(p(1-p)/N + z^2/4N^2)) / (1 + z^2/N), z the 1/2 + level/2 normal
    quantile. The one Wilson implementation: :func:`binomial_test` (method ``"wilson"``) and
    the Monte Carlo summaries of :mod:`simstudy.studies.metrics` use it.
    """
    k, n = _counts(successes, trials)
    check_level(confidence_level)
    low, high = _wilson_roots(k / n, n, norm_ppf(0.5 + confidence_level / 2))
    return scalar(low), scalar(high)


def _counts(successes, trials):
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    if np.any(n <= 0):
        raise ValueError(f"trials must be positive; got {trials!r}.")
    if np.any((k < 0) | (k > n)) or np.any(k != np.round(k)):
        raise ValueError(f"successes must be whole numbers in [0, trials]; got {successes!r} of {trials!r}.")
    return k, n


@dataclass(frozen=True)
class BinomialTestResult(TestResult):
    """A test on k successes in n trials; the interval depends on the method (see :func:`binomial_test`)."""

    successes: np.ndarray | float = 0.0
    trials: np.ndarray | float = 1.0
    kind: str = "wilson"
    continuity: bool = False

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        if self.kind == "normal":
            return pivot_interval(self, confidence_level)
        check_level(confidence_level)
        k, n = np.asarray(self.successes, dtype=float), np.asarray(self.trials, dtype=float)
        if self.kind == "none":         # no trials (McNemar with b + c = 0): no information
            low, high = 0.0, 1.0
        elif self.kind == "clopper-pearson":
            low, high = _clopper_pearson(k, n, confidence_level, self.alternative)
        else:
            low, high = _score_interval(k, n, confidence_level, self.alternative, self.continuity)
        return make_interval(self.estimate, low, high, confidence_level, self.method, float("nan"), self.alternative,
                             self.bounds)


def _one_sided(low, high, alternative):
    if alternative == "less":
        low = np.zeros_like(high)
    elif alternative == "greater":
        high = np.ones_like(low)
    return low, high


def _clopper_pearson(k, n, confidence_level, alternative):
    tail = (1 - confidence_level) / 2 if alternative == "two-sided" else 1 - confidence_level
    with np.errstate(invalid="ignore"):
        low = np.where(k == 0, 0.0, stats.beta.ppf(tail, k, n - k + 1))
        high = np.where(k == n, 1.0, stats.beta.ppf(1 - tail, k + 1, n - k))
    return _one_sided(low, high, alternative)


def _score_interval(k, n, confidence_level, alternative, continuity):
    z = quantile(confidence_level, np.inf, alternative)
    p = k / n
    if not continuity:
        low, high = _wilson_roots(p, n, z)
    else:  # solve (|p - mu0| - 1/(2n))_+ = z sqrt(mu0 (1 - mu0) / n) on each side
        shift = 0.5 / n
        low = np.where(p - shift <= 0, 0.0, _wilson_roots(np.clip(p - shift, 0, 1), n, z)[0])
        high = np.where(p + shift >= 1, 1.0, _wilson_roots(np.clip(p + shift, 0, 1), n, z)[1])
    return _one_sided(low, high, alternative)


def _score_statistic(k, n, mu0, continuity):
    """(k - n mu0) / sqrt(n mu0 (1 - mu0)), optionally with |k - n mu0| reduced by 1/2 (not below 0).

    Computed on the count scale, so that e.g. McNemar's abs(b - c) <= 1 gives exactly 0.
    """
    diff = k - n * mu0
    if continuity:
        diff = np.sign(diff) * np.maximum(np.abs(diff) - 0.5, 0.0)
    sd = np.sqrt(n * mu0 * (1 - mu0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, diff / sd, np.where(diff == 0, 0.0, np.sign(diff) * np.inf))


def _exact_pvalue(k, n, mu0, alternative):
    """Exact binomial p-values; two-sided: twice the smaller tail (central), capped at 1."""
    below = stats.binom.cdf(k, n, mu0)         # P(X <= k)
    above = stats.binom.sf(k - 1, n, mu0)      # P(X >= k)
    if alternative == "less":
        return below
    if alternative == "greater":
        return above
    return np.minimum(2 * np.minimum(below, above), 1.0)


def binomial_test(errors, n, mu0=0.5, alternative: str = "two-sided", method: str = "wilson",
                  bounds=(0.0, 1.0)) -> BinomialTestResult:
    """Test of H0: error rate = mu0 from ``errors`` mistakes on ``n`` independent test points.

    Methods (each with the interval that inverts its test):

    - ``"normal"``: Wald z = (p - mu0) / sqrt(p (1-p) / n), interval p -+ z sqrt(p(1-p)/n) (the
      lecture's), clipped to ``bounds``; zero width when p is 0 or 1;
    - ``"wilson"``: score z = (p - mu0) / sqrt(mu0 (1 - mu0) / n), Wilson's interval;
    - ``"clopper-pearson"``: the exact binomial test with central p-values
      (2 min(P(X <= k), P(X >= k)), capped at 1) and the Clopper-Pearson interval from beta
      quantiles (ends 0 when k = 0 and 1 when k = n).

    Parameters
    ----------
    errors, n : int or array_like
        Counts (arrays broadcast).
    mu0 : float in [0, 1]
    alternative : {"two-sided", "less", "greater"}
    method : {"normal", "wilson", "clopper-pearson"}
    bounds : (low, high)
        An error rate lies in [0, 1] (the default): the Wald interval is clipped to it
        (``clipped`` flags it); Wilson and Clopper-Pearson intervals lie inside by construction.

    Returns
    -------
    BinomialTestResult
        ``estimate`` = errors / n; ``statistic`` is z (``"normal"``, ``"wilson"``) or the count
        (``"clopper-pearson"``); ``se`` = sqrt(p(1-p)/n).
    """
    check_alternative(alternative)
    if method not in BINOMIAL_METHODS:
        raise ValueError(f"method must be one of {BINOMIAL_METHODS}; got {method!r}.")
    k, trials = _counts(errors, n)
    mu0 = np.asarray(mu0, dtype=float)
    if np.any((mu0 < 0) | (mu0 > 1)):
        raise ValueError(f"mu0 must be an error rate in [0, 1]; got {mu0!r}.")
    bounds = check_bounds(bounds, mu0)
    p = k / trials
    se = np.sqrt(p * (1 - p) / trials)
    if method == "normal":
        stat = pivot_statistic(p, se, mu0)
        pv = pvalue(stat, np.inf, alternative)
    elif method == "wilson":
        stat = _score_statistic(k, trials, mu0, False)
        pv = pvalue(stat, np.inf, alternative)
    else:
        stat, pv = k, _exact_pvalue(k, trials, mu0, alternative)
    df = float("nan") if method == "clopper-pearson" else np.inf
    return BinomialTestResult(scalar(np.asarray(stat, dtype=float)), scalar(np.asarray(pv)), df, alternative,
                              scalar(p), scalar(se), scalar(mu0), f"binomial {method}", bounds,
                              successes=scalar(k), trials=scalar(trials), kind=method)


def mcnemar_test(b: int, c: int, exact: bool = True, mu0=0.5, alternative: str = "two-sided") -> BinomialTestResult:
    """McNemar's test on the discordant counts of two classifiers on one test set.

    Of the b + c test points that exactly one classifier gets wrong, b are classifier 1's
    mistakes; H0: their share mu = b / (b + c) in expectation equals mu0 = 1/2 (equal error
    rates). ``.confidence_interval(level)`` is the interval for mu matching the test.

    Parameters
    ----------
    b : int
        Examples misclassified by classifier 1 only.
    c : int
        Examples misclassified by classifier 2 only.
    exact : bool
        True: the exact binomial test of b ~ Bin(b + c, mu0) (central two-sided p-value; at
        mu0 = 1/2 equal to ``scipy.stats.binomtest``'s), with the Clopper-Pearson interval;
        statistic b. False: the chi-square test with continuity correction,
        (abs(b - c) - 1)^2 / (b + c) at mu0 = 1/2 (generally (abs(b - N mu0) - 1/2)_+^2 / (N mu0 (1-mu0)),
        1 degree of freedom; statistic 0 when abs(b - c) <= 1), with the continuity-corrected
        Wilson interval; one-sided alternatives use the signed root (a z) as the statistic.
    mu0 : float in [0, 1]
    alternative : {"two-sided", "less", "greater"}
        "less": classifier 1 makes fewer of the discordant mistakes.

    Notes
    -----
    b + c = 0 gives no information: p-value 1, estimate NaN, interval [0, 1].
    """
    if not all(isinstance(v, (int, np.integer)) or (np.ndim(v) == 0 and float(v) == np.round(float(v))) for v in (b, c)):
        raise ValueError(f"counts b and c must be whole numbers (counts of test points); got b={b!r}, c={c!r}.")
    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise ValueError(f"counts must be non-negative; got b={b}, c={c}.")
    check_alternative(alternative)
    mu0 = float(mu0)
    if not 0 <= mu0 <= 1:
        raise ValueError(f"mu0 must lie in [0, 1]; got {mu0!r}.")
    N = b + c
    kind = "clopper-pearson" if exact else "wilson"
    name = f"mcnemar {'exact' if exact else 'chi-square'}"
    if N == 0:
        return BinomialTestResult(0.0, 1.0, float("nan") if exact else 1.0, alternative, float("nan"), float("nan"),
                                  mu0, name, (0.0, 1.0), successes=0.0, trials=0.0, kind="none")
    if exact:
        stat, pv, df = float(b), float(_exact_pvalue(b, N, mu0, alternative)), float("nan")
    else:
        z = float(_score_statistic(b, N, mu0, True))
        if alternative == "two-sided":
            stat, pv, df = z * z, float(stats.chi2.sf(z * z, 1)), 1.0
        else:
            stat, pv, df = z, float(pvalue(z, np.inf, alternative)), np.inf
    p = b / N
    return BinomialTestResult(stat, pv, df, alternative, p, math.sqrt(p * (1 - p) / N), mu0, name, (0.0, 1.0),
                              successes=float(b), trials=float(N), kind=kind, continuity=not exact)


@dataclass(frozen=True)
class TwoProportionTestResult(TestResult):
    """A two-proportion z-test; the pooled (score) version inverts numerically for its interval."""

    counts: tuple[int, int, int, int] = (0, 1, 0, 1)
    pooled: bool = True

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        if not self.pooled:
            return pivot_interval(self, confidence_level)
        check_level(confidence_level)
        q = quantile(confidence_level, np.inf, self.alternative)
        x1, n1, x2, n2 = self.counts
        est = self.estimate
        low = -1.0 if self.alternative == "less" else _score_root(x1, n1, x2, n2, q, -1.0, est)
        high = 1.0 if self.alternative == "greater" else _score_root(x1, n1, x2, n2, -q, 1.0, est)
        return make_interval(est, low, high, confidence_level, self.method, float("nan"), self.alternative,
                             self.bounds)


def _restricted_mle(x1, n1, x2, n2, delta):
    """(p1, p2) maximising the binomial likelihood subject to p1 - p2 = delta.

    Farrington & Manning (1990), eq. for the restricted MLE: the root of a cubic in closed
    form (Miettinen & Nurminen 1985); delta = 0 gives the pooled proportion.
    """
    p1, p2 = x1 / n1, x2 / n2
    if delta == 0:
        p = (x1 + x2) / (n1 + n2)
        return p, p
    theta = n2 / n1
    a = 1 + theta
    b = -(1 + theta + p1 + theta * p2 + delta * (theta + 2))
    c = delta**2 + delta * (2 * p1 + theta + 1) + p1 + theta * p2
    d = -p1 * delta * (1 + delta)
    v = b**3 / (27 * a**3) - b * c / (6 * a**2) + d / (2 * a)
    u = math.copysign(math.sqrt(max(b**2 / (9 * a**2) - c / (3 * a), 0.0)), v)
    ratio = 0.0 if u == 0 else max(-1.0, min(1.0, v / u**3))
    w = (math.pi + math.acos(ratio)) / 3
    r1 = 2 * u * math.cos(w) - b / (3 * a)
    r1 = min(max(r1, max(0.0, delta)), min(1.0, 1.0 + delta))
    return r1, r1 - delta


def _score_z(x1, n1, x2, n2, delta):
    """Farrington-Manning score statistic of H0: p1 - p2 = delta (pooled z at delta = 0)."""
    r1, r2 = _restricted_mle(x1, n1, x2, n2, delta)
    if delta == 0:
        se = math.sqrt(r1 * (1 - r1) * (1 / n1 + 1 / n2))
    else:
        se = math.sqrt(max(r1 * (1 - r1) / n1 + r2 * (1 - r2) / n2, 0.0))
    diff = x1 / n1 - x2 / n2 - delta
    if se > 0:
        return diff / se
    return 0.0 if diff == 0 else math.copysign(math.inf, diff)


def _score_root(x1, n1, x2, n2, q, end, estimate):
    """The null value between ``estimate`` and ``end`` (-1 or 1) where the score z equals q."""
    if estimate == end or (_score_z(x1, n1, x2, n2, end) - q) * (0 - q) > 0:
        return end          # even the extreme value is not rejected
    return optimize.brentq(lambda d: _score_z(x1, n1, x2, n2, d) - q, min(end, estimate), max(end, estimate),
                           xtol=1e-15, rtol=4 * np.finfo(float).eps)


def two_proportion_z_test(errors1: int, n1: int, errors2: int, n2: int, mu0=0.0, alternative: str = "two-sided",
                          pooled: bool = True) -> TwoProportionTestResult:
    """z-test of H0: p1 - p2 = mu0 for two error rates measured on independent test sets.

    ``pooled=True`` (the textbook test at mu0 = 0): z = (p1 - p2 - mu0) / se0 with se0 from
    the proportions that maximise the likelihood under H0 (at mu0 = 0 the pooled rate p:
    se0 = sqrt(p (1-p) (1/n1 + 1/n2)); otherwise Farrington & Manning's restricted MLE); its
    interval is the Farrington-Manning score interval (found by root finding).
    ``pooled=False``: Wald z with se = sqrt(p1 (1-p1)/n1 + p2 (1-p2)/n2) and the interval
    p1 - p2 -+ z se, clipped to [-1, 1]. A zero standard error gives z = 0 when
    p1 - p2 = mu0 and +-inf otherwise.
    """
    check_alternative(alternative)
    if n1 <= 0 or n2 <= 0 or not (0 <= errors1 <= n1 and 0 <= errors2 <= n2):
        raise ValueError("need 0 <= errors <= n and n > 0 for both samples.")
    mu0 = float(mu0)
    check_bounds((-1.0, 1.0), mu0)
    p1, p2 = errors1 / n1, errors2 / n2
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    if pooled:
        z = _score_z(errors1, n1, errors2, n2, mu0)
    else:
        z = float(pivot_statistic(np.float64(p1 - p2), np.float64(se), mu0))
    name = "two-proportion z (pooled score)" if pooled else "two-proportion z (wald)"
    return TwoProportionTestResult(z, float(pvalue(z, np.inf, alternative)), np.inf, alternative, p1 - p2, se, mu0,
                                   name, (-1.0, 1.0), counts=(errors1, n1, errors2, n2), pooled=pooled)
