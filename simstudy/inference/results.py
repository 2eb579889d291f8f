"""Result objects returned by the inference functions (scipy.stats style)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
class TestResult:
    """Outcome of a hypothesis test.

    Attributes
    ----------
    statistic : float or ndarray
        The test statistic.
    pvalue : float or ndarray
        The p-value under the test's reference distribution.
    df : float
        Degrees of freedom of the reference distribution (``nan`` for a normal one).
    alternative : str
        ``"two-sided"``, ``"less"`` or ``"greater"``.
    """

    statistic: np.ndarray | float
    pvalue: np.ndarray | float
    df: float
    alternative: str


@dataclass(frozen=True)
class ConfidenceInterval:
    """A confidence interval ``[low, high]`` at confidence level ``1 - alpha``.

    Attributes
    ----------
    estimate : float or ndarray
        The point estimate the interval is built around (for asymmetric intervals, such as
        Wilson's, it need not be the midpoint).
    low, high : float or ndarray
    alpha : float
    method : str
        How the interval was built.
    se : float or ndarray
        The standard error used (``nan`` for intervals not of the form estimate +- q se).
    """

    estimate: np.ndarray | float
    low: np.ndarray | float
    high: np.ndarray | float
    alpha: float
    method: str = ""
    se: np.ndarray | float = float("nan")

    @property
    def width(self):
        return self.high - self.low
