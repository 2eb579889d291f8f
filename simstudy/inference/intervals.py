"""Confidence intervals for error rates: CV central limit theorem, hold-out, binomial."""
from __future__ import annotations

import numpy as np
from simstudy.lazy import LazyModule

stats = LazyModule("scipy.stats")

from simstudy.inference.results import ConfidenceInterval, TestResult
from simstudy.inference.tests import resampled_variance_factor
from simstudy.inference.variance import block_residuals

__all__ = ["cv_clt_sigma", "clt_interval", "clt_test", "holdout_interval", "holdout_test", "binomial_interval",
           "normal_interval", "t_interval", "cv_t_interval", "resampled_t_interval", "five_by_two_interval",
           "z_test"]

_VARIANCES = ("all-pairs", "within-fold")


def _alpha_iv(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}.")


def normal_interval(estimate, se, alpha: float = 0.05, method: str = "normal") -> ConfidenceInterval:
    """estimate +- q_{1-alpha/2} se with q the standard normal quantile (arrays broadcast).

    The building block of the CLT intervals; exposed so that studies that store only
    (estimate, se) per replicate build exactly the same intervals.
    """
    _alpha_iv(alpha)
    estimate, se = np.asarray(estimate, dtype=float), np.asarray(se, dtype=float)
    q = stats.norm.ppf(1 - alpha / 2)
    return _pack(estimate, estimate - q * se, estimate + q * se, alpha, method, se)


def t_interval(estimate, se, df, alpha: float = 0.05, method: str = "t") -> ConfidenceInterval:
    """estimate +- t_{df, 1-alpha/2} se (Student quantile; arrays broadcast)."""
    _alpha_iv(alpha)
    estimate, se = np.asarray(estimate, dtype=float), np.asarray(se, dtype=float)
    q = stats.t.ppf(1 - alpha / 2, df)
    return _pack(estimate, estimate - q * se, estimate + q * se, alpha, method, se)


def _pack(estimate, low, high, alpha, method, se) -> ConfidenceInterval:
    if np.ndim(estimate) == 0 and np.ndim(se) == 0:
        return ConfidenceInterval(float(estimate), float(low), float(high), alpha, method, float(se))
    return ConfidenceInterval(estimate, low, high, alpha, method, se)


def z_test(estimate, se, alternative: str = "less") -> TestResult:
    """Normal test of H0: mean = 0 from an estimate and its standard error.

    z = estimate / se. A zero standard error gives z = -inf / +inf by the sign of the estimate,
    and z = 0 when the estimate is 0 as well (no evidence either way).
    """
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(f"alternative must be 'two-sided', 'less' or 'greater'; got {alternative!r}.")
    estimate, se = np.asarray(estimate, dtype=float), np.asarray(se, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = estimate / se
        z = np.where(se > 0, z, np.where(estimate == 0, 0.0, np.sign(estimate) * np.inf))
    if alternative == "less":
        p = stats.norm.cdf(z)
    elif alternative == "greater":
        p = stats.norm.sf(z)
    else:
        p = np.minimum(2 * stats.norm.sf(np.abs(z)), 1.0)
    if np.ndim(z) == 0:
        z, p = float(z), float(p)
    return TestResult(z, p, float("nan"), alternative)


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
    return normal_interval(estimate, sigma / np.sqrt(n), alpha, f"cv-clt {variance}")


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
    return z_test(estimate, sigma / np.sqrt(n), "less")


def holdout_interval(losses, alpha: float = 0.05) -> ConfidenceInterval:
    """Hold-out CLT interval: mean +- q_{1-alpha/2} s / sqrt(n_test) (s with ddof = 1).

    Parameters
    ----------
    losses : array_like, shape (..., n_test)
        Losses of one trained model on an independent test set (at least 2 points).
    """
    estimate, se = _holdout_se(losses)
    return normal_interval(estimate, se, alpha, "holdout-clt")


def _holdout_se(losses):
    x = np.asarray(losses, dtype=float)
    if x.shape[-1] < 2:
        raise ValueError(f"the hold-out procedures need at least 2 test losses; got {x.shape[-1]}.")
    return x.mean(axis=-1), x.std(axis=-1, ddof=1) / np.sqrt(x.shape[-1])


def holdout_test(differences, alternative: str = "less") -> TestResult:
    """Hold-out z-test on paired loss differences of two learners on one test set.

    z = mean(d) / (s_d / sqrt(n_test)) (s with ddof = 1); ``"less"`` tests H1: learner 1 has
    the smaller error. The one-sided counterpart of :func:`holdout_interval`.
    """
    estimate, se = _holdout_se(differences)
    return z_test(estimate, se, alternative)


def cv_t_interval(fold_means, alpha: float = 0.05, rho: float = 0.0) -> ConfidenceInterval:
    """Interval for the expected CV error from the K fold means: the inverse of eq. 9.

    mu_hat +- t_{K-1, 1-alpha/2} s / sqrt(K (1 - rho)), s the standard deviation (ddof = 1) of
    the K fold means (Grandvalet & Bengio 2006, Proposition 2). ``rho = 0`` is the usual CV t
    interval (the lecture's delta_bar +- t s/sqrt(K)); ``rho = 0.7`` the conservative one. It
    contains mu0 exactly when ``cv_t_test(fold_means, mu0, rho)`` does not reject. Zero spread
    gives the point mu_hat.
    """
    fm = np.asarray(fold_means, dtype=float)
    if fm.ndim < 1 or fm.shape[-1] < 2:
        raise ValueError(f"fold_means must have K >= 2 entries along its last axis; got shape {fm.shape}.")
    if not 0 <= rho < 1:
        raise ValueError(f"rho must lie in [0, 1); got {rho!r}. Use rho=0 for the usual t interval.")
    K = fm.shape[-1]
    se = fm.std(axis=-1, ddof=1) / np.sqrt(K * (1 - rho))
    return t_interval(fm.mean(axis=-1), se, K - 1, alpha, f"cv-t rho={rho:g}")


def resampled_t_interval(estimates, n_train: int, n_test: int, alpha: float = 0.05,
                         corrected: bool = True) -> ConfidenceInterval:
    """Repeated train/validation interval, optionally with Nadeau & Bengio's (2003) correction.

    mean +- t_{J-1, 1-alpha/2} sqrt(c s^2) with c = 1/J + n_test/n_train (corrected) or 1/J,
    s^2 the variance (ddof = 1) of the J test errors. The inverse of
    :func:`~simstudy.inference.corrected_resampled_t_test`.
    """
    x = np.asarray(estimates, dtype=float)
    J = x.shape[-1]
    se = np.sqrt(resampled_variance_factor(J, n_train, n_test, corrected) * x.var(axis=-1, ddof=1))
    name = "nadeau-bengio corrected t" if corrected else "repeated train/validation t"
    return t_interval(x.mean(axis=-1), se, J - 1, alpha, name)


def five_by_two_interval(estimates, alpha: float = 0.05) -> ConfidenceInterval:
    """Interval from Dietterich's (1998) 5x2cv statistic: p_1^(1) +- t_{5, 1-alpha/2} sqrt(mean_i s_i^2).

    ``estimates`` has shape (..., 5, 2): the error (or error difference) of fold j of
    replication i. Inverting the 5x2cv t statistic gives an interval centred at the first
    fold's estimate p_1^(1), as in the statistic's numerator; it contains mu0 exactly when
    the 5x2cv t-test of H0: mean = mu0 does not reject.
    """
    p = np.asarray(estimates, dtype=float)
    if p.shape[-2:] != (5, 2):
        raise ValueError(f"estimates must have shape (..., 5, 2) (5 replications x 2 folds); got {p.shape}.")
    s2 = np.sum((p - p.mean(axis=-1, keepdims=True)) ** 2, axis=-1)
    return t_interval(p[..., 0, 0], np.sqrt(s2.mean(axis=-1)), 5, alpha, "5x2cv t")


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
