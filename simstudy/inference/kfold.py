"""Tests (with their intervals) on one K-fold cross-validation: the CV t of Grandvalet & Bengio,
the CV central limit theorem of Bayle et al., and the hold-out z on one fold.

Folds may have unequal sizes (floor(n/K) and ceil(n/K)); each function says what it does then.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from simstudy.inference.distributions import t_ppf
from simstudy.inference.folds import check_folds, fold_summary
from simstudy.inference.pivot import ROUNDING, check_alternative, pivot_test
from simstudy.inference.results import TestResult, scalar

__all__ = ["CVCLTSigma", "cv_clt_sigma", "cv_clt_test", "cv_t_test", "holdout_test", "rho_alpha", "zero_spread"]

_VARIANCES = ("all-pairs", "within-fold")


def _fold_means_iv(fold_means) -> np.ndarray:
    fm = np.asarray(fold_means, dtype=float)
    if fm.ndim < 1 or fm.shape[-1] < 2:
        raise ValueError(
            f"fold_means must have K >= 2 entries along its last axis; got shape {fm.shape}."
        )
    infinite = np.isinf(fm)
    if infinite.any():  # an infinite fold mean defines no test: NaN results there, never a confident number
        fm = np.where(infinite.any(axis=-1, keepdims=True), np.nan, fm)
    return fm


def zero_spread(fold_means) -> np.ndarray:
    """True where all fold means are equal to within rounding (theta3 = 0)."""
    fm = np.asarray(fold_means, dtype=float)
    scale = np.maximum(np.max(np.abs(fm), axis=-1), np.finfo(float).tiny)
    return (np.max(fm, axis=-1) - np.min(fm, axis=-1)) <= ROUNDING * scale


def _usual_t(fm: np.ndarray, mu0) -> np.ndarray:
    """The rho = 0 statistic sqrt(K(K-1)) (mu_hat - mu0) / sqrt(sum_k (mu_hat_k - mu_hat)^2).

    Zero spread (all fold means equal to within rounding) with mu_hat != mu0 gives +-inf
    (the test rejects); zero spread with mu_hat == mu0 to within rounding
    (abs(mu_hat - mu0) <= 64 eps abs(mu_hat)) gives 0 (no evidence either way).
    """
    K = fm.shape[-1]
    mu_hat = fm.mean(axis=-1)
    ss = np.sum((fm - mu_hat[..., None]) ** 2, axis=-1)
    diff = mu_hat - np.asarray(mu0, dtype=float)
    flat = zero_spread(fm)
    same = np.abs(diff) <= ROUNDING * np.abs(mu_hat)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.sqrt(K * (K - 1)) * diff / np.sqrt(ss)
        return np.where(flat, np.where(same, 0.0, np.sign(diff) * np.inf), t)


def _check_rho(rho) -> np.ndarray:
    rho = np.asarray(rho, dtype=float)
    if np.any((rho < 0) | (rho >= 1)) or np.any(np.isnan(rho)):
        raise ValueError(f"rho must lie in [0, 1); got {rho!r}. Use rho=0 for the usual t-test.")
    return rho


def cv_t_test(fold_means, mu0=0.0, rho=0.0, alternative: str = "two-sided", bounds=None) -> TestResult:
    """The K-fold CV t-test parametrised by the between-block correlation rho, and its interval.

    Eq. 9 (Proposition 2) of Grandvalet & Bengio (2006):

        t = sqrt(K (K-1) (1-rho)) (mu_hat - mu0) / sqrt(sum_k (mu_hat_k - mu_hat)^2),

    which follows Student's t with K-1 degrees of freedom when the fold means are jointly
    Gaussian with exchangeable covariance and correlation rho. ``rho = 0`` is the usual
    K-fold paired t-test (the lecture's delta_bar / (s_delta / sqrt(K))); ``rho = 0.7`` is
    the conservative test proposed by the paper. ``.confidence_interval(level)`` is its
    inverse, mu_hat -+ t_{K-1} s / sqrt(K (1 - rho)) (s: sd of the fold means, ddof = 1).

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
    bounds : (low, high), optional
        Range of the mean residual (e.g. (0, 1) for 0-1 losses); the interval is clipped to it.

    Returns
    -------
    TestResult
        ``estimate`` = mu_hat, the mean of the fold means; ``se`` = s / sqrt(K (1 - rho));
        ``df = K - 1``.

    Notes
    -----
    When all fold means are equal to within rounding (zero spread, :func:`zero_spread`), the
    statistic is +-inf if mu_hat != mu0 (p-value 0: H0 is rejected) and 0 if
    abs(mu_hat - mu0) <= 64 eps abs(mu_hat) (p-value 1 two-sided); se is then 0 and the interval is
    mu_hat -+ that tolerance.

    Unequal folds: the test treats the K fold means as K observations and estimates their
    unweighted mean (what ``cross_val_score(...).mean()`` reports), whose expectation is the
    average over folds of the fold models' expected losses. Under the exchangeable model of
    the paper with block sizes m_k, Var(mu_hat_k) = omega + (sigma^2 - omega)/m_k and
    Cov(mu_hat_k, mu_hat_l) = gamma, so s^2 / K has expectation Var(mean of fold means) - gamma
    for any sizes: the role of rho (= gamma / that variance) is unchanged. Proposition 2 is
    then approximate (the fold means have slightly unequal variances); with sizes differing
    by at most one point the difference is of order 1/m.
    """
    fm = _fold_means_iv(fold_means)
    rho = _check_rho(rho)
    K = fm.shape[-1]
    t = _usual_t(fm, mu0) * np.sqrt(1.0 - rho)
    se = np.where(zero_spread(fm), 0.0, fm.std(axis=-1, ddof=1) / np.sqrt(K * (1 - rho)))
    label = f"cv t rho={float(rho):g}" if rho.ndim == 0 else "cv t"
    mu_hat = fm.mean(axis=-1)
    return pivot_test(mu_hat, se, float(K - 1), mu0, alternative, label, bounds, statistic=t,
                      tolerance=ROUNDING * np.abs(mu_hat))


def rho_alpha(fold_means, mu0=0.0, alpha: float = 0.05, alternative: str = "two-sided"):
    """Largest between-block correlation up to which H0 is still rejected at level alpha.

    Section 4.2 of Grandvalet & Bengio (2006): the statistic of eq. 9 scales with
    sqrt(1 - rho), so with the usual (rho = 0) statistic t0 and the critical value t_crit
    of Student's t with K-1 degrees of freedom, H0 is rejected for every rho below

        rho_alpha = 1 - (t_crit / abs(t0))^2.

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
    check_alternative(alternative)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}.")
    fm = _fold_means_iv(fold_means)
    K = fm.shape[-1]
    t0 = _usual_t(fm, mu0)
    if alternative == "two-sided":
        t_crit = t_ppf(1 - alpha / 2, K - 1)
        t_dir = np.abs(t0)
    else:
        t_crit = t_ppf(1 - alpha, K - 1)
        t_dir = t0 if alternative == "greater" else -t0
    with np.errstate(divide="ignore"):
        out = np.where(t_dir > 0, 1.0 - (t_crit / t_dir) ** 2, -np.inf)
    return scalar(out)


class CVCLTSigma(NamedTuple):
    """The CV estimate R_hat and a CV CLT standard deviation sigma_hat (se = sigma_hat / sqrt(n))."""

    estimate: np.ndarray | float
    sigma: np.ndarray | float


def cv_clt_sigma(residuals, folds, variance: str = "all-pairs") -> CVCLTSigma:
    """Variance estimators of Bayle, Bayle, Janson & Mackey (2020) for the CV CLT.

    - ``"all-pairs"``: sigma2_out = (1/n) sum_i (e_i - R_hat)^2;
    - ``"within-fold"``: sigma2_in = sum_j (m_j / n) s_j^2, s_j^2 the variance (ddof = 1) of
      fold j's residuals; with equal folds (m_j = n/k) this is the paper's
      (1/k) sum_j 1/(n/k - 1) sum_{i in fold j} (e_i - R_hat_j)^2. Undefined for a fold of one
      point (leave-one-out).

    R_hat = (1/n) sum_i e_i. For 0-1 losses these are R_hat (1 - R_hat) and
    (1/k) sum_j m/(m-1) R_hat_j (1 - R_hat_j).

    Unequal folds (sizes m_j): Bayle et al. define R_hat = (1/n) sum_j sum_{i in B'_j} e_i and
    the k-fold test error R_n = (1/n) sum_j m_j E[loss of model j | its training set], which
    are defined for any fold sizes (the paper's (1/k) sum_j form assumes equal folds, as does
    the authors' code ``cv_num_exper.py``, "works when k divides n"). Given the fold models,
    the test losses of fold j are i.i.d. with variance sigma_j^2, so
    Var(R_hat | models) = (1/n^2) sum_j m_j sigma_j^2, which sigma2_in / n estimates without
    bias: hence the size weights m_j / n. (The pooled variance sum_j (m_j - 1) s_j^2 / (n - k)
    coincides with equal folds but not otherwise.) sigma2_out needs no change.

    Returns
    -------
    CVCLTSigma
        ``(estimate, sigma)``: floats, or arrays over the leading axes of ``residuals``.
    """
    if variance not in _VARIANCES:
        raise ValueError(f"variance must be one of {_VARIANCES}; got {variance!r}.")
    e, folds = check_folds(residuals, folds)
    if variance == "all-pairs":
        return CVCLTSigma(scalar(e.mean(axis=-1)), scalar(np.sqrt(e.var(axis=-1))))
    labels, counts = np.unique(folds, return_counts=True)
    if np.any(counts < 2):
        raise ValueError("the within-fold variance needs at least 2 residuals per fold (undefined for "
                         "leave-one-out); use variance='all-pairs'.")
    if np.all(counts == counts[0]):
        # equal folds: the paper's form, computed on (K, m) blocks
        order = np.argsort(folds, kind="stable")
        b = e[..., order].reshape(e.shape[:-1] + (labels.size, counts[0]))
        return CVCLTSigma(scalar(b.mean(axis=(-2, -1))), scalar(np.sqrt(np.mean(b.var(axis=-1, ddof=1), axis=-1))))
    summary = fold_summary(e, folds)
    sigma2 = np.sum(summary.sizes / summary.n * summary.variances, axis=-1)
    return CVCLTSigma(scalar(e.mean(axis=-1)), scalar(np.sqrt(sigma2)))


def cv_clt_test(residuals, folds, mu0=0.0, variance: str = "all-pairs", alternative: str = "two-sided",
                bounds=None) -> TestResult:
    """Cross-validation CLT test of H0: R_n = mu0 (Bayle et al. 2020), and its interval.

    z = sqrt(n) (R_hat - mu0) / sigma_hat against the standard normal, with sigma_hat from
    :func:`cv_clt_sigma`; ``.confidence_interval(level)`` is R_hat -+ z_q sigma_hat / sqrt(n).
    Bayle et al.'s test that learner 1 is better than learner 2 is ``alternative="less"`` on
    the loss differences (learner 1 minus learner 2) with mu0 = 0: it rejects when
    R_hat < q_alpha sigma_hat / sqrt(n).

    Parameters
    ----------
    residuals : array_like, shape (..., n)
        CV losses (or loss differences between two learners) of each example.
    folds : array_like, shape (n,)
        Fold label of each residual; folds may have unequal sizes (see :func:`cv_clt_sigma`).
    mu0 : float
    variance : {"all-pairs", "within-fold"}
    alternative : {"two-sided", "less", "greater"}
    bounds : (low, high), optional
        Range of R_n (e.g. (0, 1) for 0-1 losses, (-1, 1) for their differences).

    Returns
    -------
    TestResult
        With sigma_hat = 0 (e.g. all losses equal) the statistic is 0 when R_hat = mu0 and
        +-inf otherwise; the interval is the point R_hat.
    """
    estimate, sigma = cv_clt_sigma(residuals, folds, variance)
    n = np.asarray(residuals).shape[-1]
    return pivot_test(estimate, np.asarray(sigma) / np.sqrt(n), np.inf, mu0, alternative, f"cv clt {variance}",
                      bounds)


def holdout_test(losses, mu0=0.0, alternative: str = "two-sided", bounds=None) -> TestResult:
    """Hold-out z-test of H0: mean loss = mu0 on one test set, and its CLT interval.

    z = (mean - mu0) / (s / sqrt(n_test)) with s the standard deviation (ddof = 1), against
    the standard normal; the interval is mean -+ z_q s / sqrt(n_test). On paired loss
    differences of two learners, ``alternative="less"`` tests H1: learner 1 has the smaller
    error. Any n_test >= 2.

    Parameters
    ----------
    losses : array_like, shape (..., n_test)
        Losses of one trained model on an independent test set (or loss differences).
    """
    x = np.asarray(losses, dtype=float)
    if x.shape[-1] < 2:
        raise ValueError(f"the hold-out test needs at least 2 test losses; got {x.shape[-1]}.")
    se = x.std(axis=-1, ddof=1) / np.sqrt(x.shape[-1])
    return pivot_test(x.mean(axis=-1), se, np.inf, mu0, alternative, "hold-out z", bounds)
