"""Result objects of the inference functions (scipy.stats style).

Every test returns a :class:`TestResult` (or a subclass): the statistic, p-value, degrees of
freedom, alternative, the point estimate and its standard error, the null value ``mu0``, and
a method :meth:`TestResult.confidence_interval` giving the interval that matches the test:
``mu0`` lies in the level-(1 - alpha) interval exactly when the test of H0: mu = mu0 does not
reject at level alpha (reject when ``pvalue < alpha``), with one-sided bounds for one-sided
alternatives, as ``scipy.stats.ttest_1samp(...).confidence_interval()`` does.

The interval math lives here, beside the result classes it builds: :func:`pivot_interval` (the
interval of a pivot test), :func:`make_interval` and :func:`clip_interval` (an interval clipped to
the range of the estimated quantity), :func:`quantile` (the reference quantile of a level).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simstudy.inference.distributions import norm_ppf, t_ppf

__all__ = ["ConfidenceInterval", "QuadraticForms", "TestResult", "VarianceEstimates", "check_level", "clip_interval",
           "make_interval", "pivot_interval", "quantile", "scalar"]


@dataclass(frozen=True)
class VarianceEstimates:
    """The five variance estimators of Grandvalet & Bengio (2006), Table 1 and section 3.

    Each attribute is a float for one replicate, or an array when the input held a batch
    of replicates (leading axes of the residual array).
    """

    theta1: np.ndarray | float
    theta2: np.ndarray | float
    theta3: np.ndarray | float
    theta4: np.ndarray | float
    theta5: np.ndarray | float


@dataclass(frozen=True)
class QuadraticForms:
    """The quadratic forms s1, s2, s3 of eq. 8 of Grandvalet & Bengio (2006)."""

    s1: np.ndarray | float
    s2: np.ndarray | float
    s3: np.ndarray | float


@dataclass(frozen=True)
class ConfidenceInterval:
    """A confidence interval ``[low, high]`` at level ``confidence_level``.

    Attributes
    ----------
    estimate : float or ndarray
        The point estimate the interval is built around (for asymmetric intervals, such as
        Wilson's, it need not be the midpoint).
    low, high : float or ndarray
        Ends of the interval; one-sided intervals have an infinite end (or the bound, when
        ``bounds`` are given).
    confidence_level : float
    method : str
        How the interval was built (the procedure's name).
    se : float or ndarray
        The standard error used (``nan`` for intervals not of the form estimate +- q se).
    alternative : str
        ``"two-sided"``, ``"less"`` (interval ``(-inf, high]``) or ``"greater"`` (``[low, inf)``).
    bounds : (float, float) or None
        Range of the estimated quantity (e.g. (0, 1) for an error rate) the interval was
        clipped to; None: not clipped.
    clipped : bool or ndarray of bool
        True where a finite end fell outside ``bounds`` and was moved onto it.
    """

    estimate: np.ndarray | float
    low: np.ndarray | float
    high: np.ndarray | float
    confidence_level: float
    method: str = ""
    se: np.ndarray | float = float("nan")
    alternative: str = "two-sided"
    bounds: tuple[float, float] | None = None
    clipped: np.ndarray | bool = False

    @property
    def width(self):
        return self.high - self.low


@dataclass(frozen=True)
class TestResult:
    """Outcome of a test of H0: mu = mu0 built on a pivot (estimate - mu0) / se.

    The reference distribution is Student's t with ``df`` degrees of freedom (the standard
    normal when ``df`` is infinite). Arrays broadcast: a batch of replicates gives arrays.

    Attributes
    ----------
    statistic : float or ndarray
        The test statistic.
    pvalue : float or ndarray
        The p-value; the test rejects at level alpha when ``pvalue < alpha``.
    df : float
        Degrees of freedom of the reference distribution (``inf``: standard normal; ``nan``
        for exact tests without one).
    alternative : str
        ``"two-sided"``, ``"less"`` (H1: mu < mu0) or ``"greater"`` (H1: mu > mu0).
    estimate, se : float or ndarray
        The point estimate of mu and its standard error.
    mu0 : float or ndarray
        The value of mu under H0.
    method : str
        The procedure's name.
    bounds : (float, float) or None
        Range of mu (e.g. (0, 1) for an error rate); intervals are clipped to it.

    tolerance : float or ndarray
        With se = 0: how far the estimate may be from mu0 and still count as equal to it (0
        except for the CV t, whose fold means count as equal to within rounding).

    Notes
    -----
    A zero standard error makes the statistic 0 when abs(estimate - mu0) <= tolerance (p-value 1
    two-sided) and +-inf otherwise (the test rejects); the interval is then
    estimate -+ tolerance (a point when the tolerance is 0), so test and interval agree in
    this case too.
    """

    statistic: np.ndarray | float
    pvalue: np.ndarray | float
    df: float
    alternative: str
    estimate: np.ndarray | float = float("nan")
    se: np.ndarray | float = float("nan")
    mu0: np.ndarray | float = 0.0
    method: str = ""
    bounds: tuple[float, float] | None = None
    tolerance: np.ndarray | float = 0.0

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """The interval matching this test: estimate -+ q se, q the reference quantile.

        Two-sided: q = quantile(1/2 + level/2) on both sides. ``"less"``: (-inf, estimate + q se]
        with q = quantile(level); ``"greater"``: [estimate - q se, inf). Clipped to ``bounds``.
        """
        return pivot_interval(self, confidence_level)


def check_level(confidence_level: float) -> None:
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must lie in (0, 1), e.g. 0.95; got {confidence_level!r}.")


def scalar(x):
    """A float for a 0-d value, the array otherwise."""
    return float(x) if np.ndim(x) == 0 else x


def quantile(confidence_level: float, df: float, alternative: str) -> float:
    """The reference quantile of a level-``confidence_level`` interval (two-sided: 1/2 + level/2)."""
    q = 0.5 + confidence_level / 2 if alternative == "two-sided" else confidence_level
    return float(norm_ppf(q) if np.isinf(df) else t_ppf(q, df))


def clip_interval(low, high, bounds):
    """Clip ``[low, high]`` to ``bounds``: (low, high, clipped), clipped where a finite end moved."""
    if bounds is None:
        return low, high, np.zeros(np.shape(low), dtype=bool) if np.ndim(low) else False
    b_low, b_high = bounds
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    # an infinite end (one-sided interval) becomes the bound without counting as clipped
    clipped = (np.isfinite(low) & (low < b_low)) | (np.isfinite(high) & (high > b_high))
    low, high = np.clip(low, b_low, b_high), np.clip(high, b_low, b_high)
    return scalar(low), scalar(high), (bool(clipped) if clipped.ndim == 0 else clipped)


def make_interval(estimate, low, high, confidence_level, method, se, alternative, bounds) -> ConfidenceInterval:
    low, high, clipped = clip_interval(low, high, bounds)
    return ConfidenceInterval(scalar(np.asarray(estimate, dtype=float)), scalar(np.asarray(low, dtype=float)),
                              scalar(np.asarray(high, dtype=float)), confidence_level, method,
                              scalar(np.asarray(se, dtype=float)), alternative, bounds, clipped)


def pivot_interval(result: TestResult, confidence_level: float = 0.95) -> ConfidenceInterval:
    """estimate -+ q se: the set of mu0 that the test of ``result`` does not reject.

    With se = 0 the interval is estimate -+ the result's ``tolerance`` (a point when it is 0).
    """
    check_level(confidence_level)
    estimate = np.asarray(result.estimate, dtype=float)
    se = np.asarray(result.se, dtype=float)
    q = quantile(confidence_level, result.df, result.alternative)
    half = np.where(se > 0, q * se, np.asarray(result.tolerance, dtype=float))
    low, high = estimate - half, estimate + half
    if result.alternative == "less":
        low = np.full_like(high, -np.inf)
    elif result.alternative == "greater":
        high = np.full_like(low, np.inf)
    return make_interval(estimate, low, high, confidence_level, result.method, se, result.alternative,
                         result.bounds)
