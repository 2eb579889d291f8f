"""What a procedure returns: an interval, a test (with its interval), or a posterior.

All three carry the procedure's name and its estimand; fields are floats for one sample and
arrays over the leading (replicate) axes of the losses otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simstudy.inference import TestResult

__all__ = ["IntervalOutcome", "PosteriorOutcome", "TestOutcome", "from_test_result"]


def _value(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


@dataclass(frozen=True)
class IntervalOutcome:
    """An interval for the procedure's estimand.

    Attributes
    ----------
    procedure, estimand : str
    estimate, lower, upper : float or ndarray
        Point estimate and ends (one-sided intervals have an infinite end).
    se : float or ndarray
        Standard error when the interval is estimate -+ q se; NaN otherwise (percentile and
        score intervals).
    confidence_level : float
    alternative : str
        ``"two-sided"``, ``"less"`` (``(-inf, upper]``) or ``"greater"``.
    """

    procedure: str
    estimand: str
    estimate: np.ndarray | float
    lower: np.ndarray | float
    upper: np.ndarray | float
    se: np.ndarray | float
    confidence_level: float
    alternative: str = "two-sided"

    @property
    def width(self):
        return _value(np.asarray(self.upper) - np.asarray(self.lower))

    def covers(self, truth):
        """True where lower <= truth <= upper."""
        truth = np.asarray(truth, dtype=float)
        out = (np.asarray(self.lower) <= truth) & (truth <= np.asarray(self.upper))
        return bool(out) if out.ndim == 0 else out

    def miss_side(self, truth):
        """-1 where the interval lies left of the truth (upper < truth), +1 right of it, 0 covering."""
        truth = np.asarray(truth, dtype=float)
        out = np.where(np.asarray(self.upper) < truth, -1, np.where(np.asarray(self.lower) > truth, 1, 0))
        return int(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class TestOutcome:
    """A test of H0: estimand = mu0 and the interval that inverts it (None when there is none).

    ``reject`` is ``pvalue < alpha``.
    """

    procedure: str
    estimand: str
    statistic: np.ndarray | float
    pvalue: np.ndarray | float
    alpha: float
    alternative: str
    mu0: float
    interval: IntervalOutcome | None

    __test__ = False  # a result class, not a pytest test

    @property
    def reject(self):
        out = np.asarray(self.pvalue) < self.alpha
        return bool(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class PosteriorOutcome:
    """A Bayesian comparison: posterior probabilities around a region of practical equivalence.

    ``p_left = P(mu < mu0 - rope | data)``, ``p_rope = P(|mu - mu0| <= rope | data)``,
    ``p_right = P(mu > mu0 + rope | data)``; ``interval`` is the equal-tailed credible interval
    (one-sided for one-sided alternatives). ``reject`` declares a difference when the credible
    interval lies wholly beyond the rope on one side: two-sided, p_left or p_right > 1 - alpha/2;
    ``"less"``, p_left > 1 - alpha; ``"greater"``, p_right > 1 - alpha.
    """

    procedure: str
    estimand: str
    p_left: np.ndarray | float
    p_rope: np.ndarray | float
    p_right: np.ndarray | float
    rope: float
    alpha: float
    alternative: str
    mu0: float
    interval: IntervalOutcome

    @property
    def reject(self):
        left, right = np.asarray(self.p_left), np.asarray(self.p_right)
        if self.alternative == "two-sided":
            out = (left > 1 - self.alpha / 2) | (right > 1 - self.alpha / 2)
        else:
            out = (left if self.alternative == "less" else right) > 1 - self.alpha
        return bool(out) if out.ndim == 0 else out


def from_test_result(result: TestResult, alpha: float, procedure: str, estimand: str,
                     with_interval: bool = True) -> TestOutcome:
    """A :class:`TestOutcome` from a :class:`simstudy.inference.TestResult` and its interval at 1 - alpha."""
    interval = None
    if with_interval:
        ci = result.confidence_interval(1 - alpha)
        interval = IntervalOutcome(procedure, estimand, _value(ci.estimate), _value(ci.low), _value(ci.high),
                                   _value(ci.se), 1 - alpha, ci.alternative)
    return TestOutcome(procedure, estimand, _value(result.statistic), _value(result.pvalue), alpha,
                       result.alternative, float(np.asarray(result.mu0).flat[0]), interval)
