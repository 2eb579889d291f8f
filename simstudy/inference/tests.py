"""Hypothesis tests on cross-validation output (pure functions, no simulation inside)."""
from __future__ import annotations

import numpy as np
from scipy import stats

from simstudy.inference.results import TestResult

__all__ = ["cv_t_test", "rho_alpha", "zero_spread"]

_ALTERNATIVES = ("two-sided", "less", "greater")


def _check_alternative(alternative: str) -> None:
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}; got {alternative!r}.")


def _fold_means_iv(fold_means) -> np.ndarray:
    fm = np.asarray(fold_means, dtype=float)
    if fm.ndim < 1 or fm.shape[-1] < 2:
        raise ValueError(
            f"fold_means must have K >= 2 entries along its last axis; got shape {fm.shape}."
        )
    return fm


#: Relative size below which a spread or a difference is rounding noise (treated as 0).
_ROUNDING = 64 * np.finfo(float).eps


def zero_spread(fold_means) -> np.ndarray:
    """True where all fold means are equal to within rounding (theta3 = 0)."""
    fm = np.asarray(fold_means, dtype=float)
    scale = np.maximum(np.max(np.abs(fm), axis=-1), np.finfo(float).tiny)
    return (np.max(fm, axis=-1) - np.min(fm, axis=-1)) <= _ROUNDING * scale


def _usual_t(fm: np.ndarray, mu0) -> np.ndarray:
    """The rho = 0 statistic sqrt(K(K-1)) (mu_hat - mu0) / sqrt(sum_k (mu_hat_k - mu_hat)^2).

    Zero spread (all fold means equal to within rounding) with mu_hat != mu0 gives +-inf
    (the test rejects); zero spread with mu_hat == mu0 (to within rounding) gives 0 (no
    evidence either way; the test does not reject).
    """
    K = fm.shape[-1]
    mu_hat = fm.mean(axis=-1)
    ss = np.sum((fm - mu_hat[..., None]) ** 2, axis=-1)
    mu0 = np.asarray(mu0, dtype=float)
    diff = mu_hat - mu0
    flat = zero_spread(fm)
    same = np.abs(diff) <= _ROUNDING * np.maximum(np.abs(mu_hat), np.abs(mu0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.sqrt(K * (K - 1)) * diff / np.sqrt(ss)
        return np.where(flat, np.where(same, 0.0, np.sign(diff) * np.inf), t)


def cv_t_test(fold_means, mu0=0.0, rho=0.0, alternative: str = "two-sided") -> TestResult:
    """The K-fold CV t-test parametrised by the between-block correlation rho.

    Eq. 9 (Proposition 2) of Grandvalet & Bengio (2006):

        t = sqrt(K (K-1) (1-rho)) (mu_hat - mu0) / sqrt(sum_k (mu_hat_k - mu_hat)^2),

    which follows Student's t with K-1 degrees of freedom when the fold means are jointly
    Gaussian with exchangeable covariance and correlation rho. ``rho = 0`` is the usual
    K-fold paired t-test (the lecture's delta_bar / (s_delta / sqrt(K))); ``rho = 0.7`` is
    the conservative test proposed by the paper.

    Parameters
    ----------
    fold_means : array_like, shape (..., K)
        Mean residual of each fold (leading axes: replicates).
    mu0 : float or array_like
        Value of the expected residual under H0 (0 when comparing two algorithms).
    rho : float or array_like in [0, 1)
        Assumed between-block correlation. Broadcasts against ``fold_means[..., 0]``.
    alternative : {"two-sided", "less", "greater"}
        "less" tests H1: mu < mu0.

    Returns
    -------
    TestResult
        ``statistic``, ``pvalue``, ``df = K - 1``.

    Notes
    -----
    When all fold means are equal (zero spread), the statistic is +-inf if mu_hat != mu0
    (p-value 0: H0 is rejected) and 0 if mu_hat == mu0 (p-value 1 two-sided).
    """
    _check_alternative(alternative)
    fm = _fold_means_iv(fold_means)
    rho = np.asarray(rho, dtype=float)
    if np.any((rho < 0) | (rho >= 1)) or np.any(np.isnan(rho)):
        raise ValueError(f"rho must lie in [0, 1); got {rho!r}. Use rho=0 for the usual t-test.")
    K = fm.shape[-1]
    t = _usual_t(fm, mu0) * np.sqrt(1.0 - rho)
    dist = stats.t(K - 1)
    if alternative == "two-sided":
        p = 2.0 * dist.sf(np.abs(t))
    elif alternative == "less":
        p = dist.cdf(t)
    else:
        p = dist.sf(t)
    p = np.minimum(p, 1.0)
    if np.ndim(t) == 0:
        t, p = float(t), float(p)
    return TestResult(statistic=t, pvalue=p, df=float(K - 1), alternative=alternative)


def rho_alpha(fold_means, mu0=0.0, alpha: float = 0.05, alternative: str = "two-sided"):
    """Largest between-block correlation up to which H0 is still rejected at level alpha.

    Section 4.2 of Grandvalet & Bengio (2006): the statistic of eq. 9 scales with
    sqrt(1 - rho), so with the usual (rho = 0) statistic t0 and the critical value t_crit
    of Student's t with K-1 degrees of freedom, H0 is rejected for every rho below

        rho_alpha = 1 - (t_crit / |t0|)^2.

    "Provided rho <= rho_alpha, the difference is significant at level alpha." The score is
    monotone in the p-value of the usual test.

    Parameters
    ----------
    fold_means : array_like, shape (..., K)
    mu0 : float
        Value under H0.
    alpha : float in (0, 1)
    alternative : {"two-sided", "less", "greater"}
        For one-sided alternatives, t_crit is the 1 - alpha quantile and t0 must point in the
        direction of the alternative.

    Returns
    -------
    float or ndarray
        rho_alpha in (-inf, 1]. Convention when even the usual test does not reject: the
        same formula is returned, which is then <= 0 (rejection would need a negative
        between-block correlation, below what is typically plausible), and -inf when t0 = 0
        or t0 points away from a one-sided alternative. It is 1 when the fold means have no
        spread and mu_hat != mu0 (t0 infinite). Thus ``rho_alpha > 0`` if and only if the
        usual t-test rejects.
    """
    _check_alternative(alternative)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}.")
    fm = _fold_means_iv(fold_means)
    K = fm.shape[-1]
    t0 = _usual_t(fm, mu0)
    if alternative == "two-sided":
        t_crit = stats.t.ppf(1 - alpha / 2, K - 1)
        t_dir = np.abs(t0)
    else:
        t_crit = stats.t.ppf(1 - alpha, K - 1)
        t_dir = t0 if alternative == "greater" else -t0
    with np.errstate(divide="ignore"):
        out = np.where(t_dir > 0, 1.0 - (t_crit / t_dir) ** 2, -np.inf)
    return float(out) if out.ndim == 0 else out
