"""The Bayesian correlated t-test of Corani & Benavoli (2015) (new in simstudy).

References: G. Corani and A. Benavoli, "A Bayesian approach for comparing cross-validated
algorithms on multiple data sets", Machine Learning 100 (2015) 285-304, Section 3 (the
correlated Bayesian t-test on one data set); A. Benavoli, G. Corani, J. Demsar and M. Zaffalon,
"Time for a change: a tutorial for comparing multiple classifiers through Bayesian analysis",
JMLR 18 (2017), Section 3.1; reference implementation: the PyPI package ``baycomp``
(``CorrelatedTTest``), against which the tests check every number.

Model. x_1..x_N are the per-split estimates (mean loss, or mean loss difference of two
learners) of r repetitions of K-fold CV (N = K r). They are modelled as Gaussian with mean mu,
variance sigma^2 and a common correlation rho between any two of them; rho cannot be estimated
from the x_i, and is set to the test share rho = n_test / n = 1/K (Nadeau & Bengio's heuristic).
Under the prior of the paper (Normal-Gamma, in its non-informative limit) the marginal
posterior of mu is Student's t with N - 1 degrees of freedom,

    mu | x ~ St(N - 1, location x_bar, scale^2 = (1/N + rho/(1 - rho)) s^2),

x_bar the mean and s^2 the variance (ddof = 1) of the x_i. With a region of practical
equivalence (rope) of half-width r around mu0:

    p_left  = P(mu < mu0 - r | x) = T_{N-1}((mu0 - r - x_bar) / scale),
    p_right = P(mu > mu0 + r | x) = T_{N-1}((x_bar - mu0 - r) / scale),
    p_rope  = 1 - p_left - p_right,

and the equal-tailed credible interval x_bar -+ t_{N-1, 1-alpha/2} scale. This interval is,
number for number, the interval of Bouckaert & Frank's corrected repeated K-fold t
(:func:`simstudy.inference.repeated_kfold_t_test`, factor 1/(K r) + n_test/n_train), since
rho/(1 - rho) = n_test/n_train; with r = 0, p_left is the one-sided ("greater") p-value of that
test, so the decision "p_left > 1 - alpha" is its one-sided rejection. The Bayesian reading adds
the rope and the three probabilities.

Zero spread (all x_i equal to within rounding, :func:`simstudy.inference.zero_spread`): the
posterior is the point mass at x_bar; as in ``baycomp``, with r = 0 the probabilities are
P(mu < mu0) = [x_bar < mu0] + [x_bar = mu0]/2 (and so for the right), with r > 0 the indicators
of x_bar < mu0 - r and x_bar > mu0 + r.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simstudy.inference import TestResult, t_test, zero_spread
from simstudy.lazy import LazyModule

special = LazyModule("scipy.special")

__all__ = ["CorrelatedPosterior", "correlated_posterior"]


@dataclass(frozen=True)
class CorrelatedPosterior:
    """The Student posterior of mu and its probabilities around the rope."""

    mean: np.ndarray | float
    scale: np.ndarray | float
    df: float
    rope: float
    mu0: float
    p_left: np.ndarray | float
    p_rope: np.ndarray | float
    p_right: np.ndarray | float

    def credible(self, alternative: str = "two-sided") -> TestResult:
        """The t pivot whose interval (``.confidence_interval(level)``) is the credible interval."""
        return t_test(self.mean, self.scale, self.df, self.mu0, alternative, method="bayesian correlated t")


def _f(x):
    return float(x) if np.ndim(x) == 0 else x


def correlated_posterior(estimates, rho: float, rope: float = 0.0, mu0: float = 0.0) -> CorrelatedPosterior:
    """Posterior of the mean of correlated CV estimates (Corani & Benavoli 2015).

    Parameters
    ----------
    estimates : array_like, shape (..., N)
        The N = K r per-fold estimates of r repetitions of K-fold CV (N >= 2).
    rho : float in [0, 1)
        Correlation between estimates: n_test / n (1/K for K-fold CV).
    rope : float >= 0
        Half-width of the region of practical equivalence around mu0.
    mu0 : float
    """
    x = np.asarray(estimates, dtype=float)
    if x.ndim < 1 or x.shape[-1] < 2:
        raise ValueError(f"need at least 2 estimates along the last axis; got shape {x.shape}.")
    if not 0 <= rho < 1:
        raise ValueError(f"rho must lie in [0, 1) (n_test / n, e.g. 1/K); got {rho!r}.")
    if not rope >= 0:
        raise ValueError(f"rope must be >= 0; got {rope!r}.")
    N = x.shape[-1]
    mean = x.mean(axis=-1)
    flat = zero_spread(x)
    scale = np.where(flat, 0.0, np.sqrt(x.var(axis=-1, ddof=1) * (1.0 / N + rho / (1.0 - rho))))
    df = float(N - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        left = special.stdtr(df, (mu0 - rope - mean) / scale)
        right = special.stdtr(df, (mean - mu0 - rope) / scale)
    if rope == 0:
        tie = 0.5 * (mean == mu0)
        point_left, point_right = (mean < mu0) + tie, (mean > mu0) + tie
    else:
        point_left, point_right = (mean < mu0 - rope) * 1.0, (mean > mu0 + rope) * 1.0
    left = np.where(flat, point_left, left)
    right = np.where(flat, point_right, right)
    middle = np.clip(1.0 - left - right, 0.0, 1.0)
    return CorrelatedPosterior(_f(mean), _f(scale), df, float(rope), float(mu0), _f(left), _f(middle), _f(right))
