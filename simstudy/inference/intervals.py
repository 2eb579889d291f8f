"""Confidence intervals for error rates: CV central limit theorem, hold-out, binomial."""
from __future__ import annotations

import numpy as np
from scipy import stats

from simstudy.inference.results import ConfidenceInterval, TestResult
from simstudy.inference.variance import block_residuals

__all__ = ["cv_clt_sigma", "clt_interval", "clt_test", "holdout_interval", "binomial_interval"]

_VARIANCES = ("all-pairs", "within-fold")


def _alpha_iv(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}.")


def cv_clt_sigma(residuals, folds, variance: str = "all-pairs"):
    """Variance estimators of Bayle, Bayle, Janson & Mackey (2020) for the CV CLT.

    - ``"all-pairs"``: sigma2_out = (1/n) sum_i (e_i - R_hat)^2;
    - ``"within-fold"``: sigma2_in = (1/k) sum_j 1/(n/k - 1) sum_{i in fold j} (e_i - R_hat_j)^2,
      with R_hat_j the mean of fold j (undefined for leave-one-out, n/k = 1).

    For 0-1 losses these are R_hat (1 - R_hat) and (1/k) sum_j m/(m-1) R_hat_j (1 - R_hat_j).

    Returns
    -------
    estimate, sigma : float or ndarray (leading axes of ``residuals``)
    """
    if variance not in _VARIANCES:
        raise ValueError(f"variance must be one of {_VARIANCES}; got {variance!r}.")
    e = np.asarray(residuals, dtype=float)
    folds = np.asarray(folds)
    if variance == "within-fold":
        labels, counts = np.unique(folds, return_counts=True)
        if np.any(counts < 2):
            raise ValueError("the within-fold variance needs at least 2 residuals per fold (undefined for "
                             "leave-one-out); use variance='all-pairs'.")
        b = block_residuals(e, folds)
        estimate = b.mean(axis=(-2, -1))
        sigma2 = np.mean(b.var(axis=-1, ddof=1), axis=-1)
    else:
        estimate = e.mean(axis=-1)
        sigma2 = e.var(axis=-1)
    return estimate, np.sqrt(sigma2)


def clt_interval(residuals, folds, alpha: float = 0.05, variance: str = "all-pairs") -> ConfidenceInterval:
    """Cross-validation CLT interval for the k-fold test error (Bayle et al. 2020).

    R_hat +- q_{1-alpha/2} sigma_hat / sqrt(n), with sigma_hat from :func:`cv_clt_sigma`.

    Parameters
    ----------
    residuals : array_like, shape (..., n)
        CV losses (or loss differences between two learners) of each example.
    folds : array_like, shape (n,)
        Fold label of each residual (equal fold sizes for ``"within-fold"``).
    alpha : float
    variance : {"all-pairs", "within-fold"}

    Returns
    -------
    ConfidenceInterval
        When sigma_hat = 0 (e.g. all losses equal) the interval is the point R_hat.
    """
    _alpha_iv(alpha)
    estimate, sigma = cv_clt_sigma(residuals, folds, variance)
    n = np.asarray(residuals).shape[-1]
    se = sigma / np.sqrt(n)
    q = stats.norm.ppf(1 - alpha / 2)
    return ConfidenceInterval(estimate, estimate - q * se, estimate + q * se, alpha, f"cv-clt {variance}", se)


def clt_test(residuals, folds, alpha: float = 0.05, variance: str = "all-pairs") -> TestResult:
    """One-sided CV CLT test that learner 1 is better: H0: R_n >= 0 against H1: R_n < 0.

    ``residuals`` are loss differences (learner 1 minus learner 2). Bayle et al. reject H0
    when R_hat < q_alpha sigma_hat / sqrt(n), i.e. when z = sqrt(n) R_hat / sigma_hat < q_alpha;
    the p-value is Phi(z). With sigma_hat = 0, z is -inf (p = 0) if R_hat < 0, +inf (p = 1) if
    R_hat > 0 and 0 (p = 1/2) if R_hat = 0.
    """
    _alpha_iv(alpha)
    estimate, sigma = cv_clt_sigma(residuals, folds, variance)
    n = np.asarray(residuals).shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.sqrt(n) * estimate / sigma
        z = np.where(sigma > 0, z, np.where(estimate == 0, 0.0, np.sign(estimate) * np.inf))
    p = stats.norm.cdf(z)
    if np.ndim(z) == 0:
        z, p = float(z), float(p)
    return TestResult(z, p, float("nan"), "less")


def holdout_interval(losses, alpha: float = 0.05) -> ConfidenceInterval:
    """Hold-out CLT interval: mean +- q_{1-alpha/2} s / sqrt(n_test) (s with ddof = 1).

    Parameters
    ----------
    losses : array_like, shape (..., n_test)
        Losses of one trained model on an independent test set (at least 2 points).
    """
    _alpha_iv(alpha)
    x = np.asarray(losses, dtype=float)
    if x.shape[-1] < 2:
        raise ValueError("holdout_interval needs at least 2 test losses.")
    estimate = x.mean(axis=-1)
    se = x.std(axis=-1, ddof=1) / np.sqrt(x.shape[-1])
    q = stats.norm.ppf(1 - alpha / 2)
    return ConfidenceInterval(estimate, estimate - q * se, estimate + q * se, alpha, "holdout-clt", se)


def binomial_interval(errors, n, alpha: float = 0.05, method: str = "wilson") -> ConfidenceInterval:
    """Confidence interval for an error rate from ``errors`` mistakes on ``n`` test points.

    Methods: ``"normal"`` (the lecture's e +- z sqrt(e(1-e)/n), clipped to [0, 1]; zero width
    when e is 0 or 1), ``"wilson"`` (score interval), ``"clopper-pearson"`` (exact, from beta
    quantiles; one-sided ends at 0 and 1).
    """
    _alpha_iv(alpha)
    k = np.asarray(errors, dtype=float)
    n = np.asarray(n, dtype=float)
    if np.any(n <= 0) or np.any((k < 0) | (k > n)):
        raise ValueError(f"need 0 <= errors <= n and n > 0; got errors={errors!r}, n={n!r}.")
    p = k / n
    z = stats.norm.ppf(1 - alpha / 2)
    se = np.sqrt(p * (1 - p) / n)
    if method == "normal":
        low, high = np.clip(p - z * se, 0, 1), np.clip(p + z * se, 0, 1)
    elif method == "wilson":
        denom = 1 + z**2 / n
        centre = (p + z**2 / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
        low, high = np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)
        se = np.full_like(p, np.nan)
    elif method == "clopper-pearson":
        with np.errstate(invalid="ignore"):
            low = np.where(k == 0, 0.0, stats.beta.ppf(alpha / 2, k, n - k + 1))
            high = np.where(k == n, 1.0, stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
        se = np.full_like(p, np.nan)
    else:
        raise ValueError(f"method must be 'normal', 'wilson' or 'clopper-pearson'; got {method!r}.")
    if np.ndim(p) == 0:
        p, low, high, se = float(p), float(low), float(high), float(se)
    return ConfidenceInterval(p, low, high, alpha, f"binomial {method}", se)
