"""Hypothesis tests on cross-validation output (pure functions, no simulation inside)."""
from __future__ import annotations

import numpy as np
from simstudy.lazy import LazyModule

stats = LazyModule("scipy.stats")

from simstudy.inference.results import TestResult

__all__ = ["combined_f_test_5x2cv", "corrected_repeated_kfold_t_test", "corrected_resampled_t_test", "cv_t_test",
           "mcnemar_test", "paired_t_test_5x2cv", "rho_alpha", "two_proportion_z_test", "zero_spread"]

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


def _t_pvalue(t, df, alternative):
    dist = stats.t(df)
    if alternative == "two-sided":
        return np.minimum(2.0 * dist.sf(np.abs(t)), 1.0)
    return dist.cdf(t) if alternative == "less" else dist.sf(t)


def _scalar(result: TestResult) -> TestResult:
    if np.ndim(result.statistic) == 0:
        return TestResult(float(result.statistic), float(result.pvalue), result.df, result.alternative)
    return result


def resampled_variance_factor(J: int, n_train: int, n_test: int, corrected: bool = True) -> float:
    """Variance factor of the repeated train/validation mean: 1/J, plus n_test/n_train for
    Nadeau & Bengio's (2003) correction of the training-set overlap."""
    if J < 2:
        raise ValueError(f"need at least 2 train/validation splits; got {J}.")
    if n_train < 1 or n_test < 1:
        raise ValueError(f"n_train and n_test must be positive; got {n_train}, {n_test}.")
    return 1.0 / J + (n_test / n_train if corrected else 0.0)


def corrected_resampled_t_test(differences, n_train: int, n_test: int, alternative: str = "two-sided",
                               corrected: bool = True) -> TestResult:
    """Repeated train/validation t-test, with Nadeau & Bengio's (2003) variance correction.

    J random splits give differences d_1..d_J of the two learners' test errors. The
    uncorrected test (``corrected=False``) uses t = mean(d) / sqrt(s^2 / J); the corrected
    resampled t-test replaces 1/J by 1/J + n_test/n_train to account for the overlap of the
    training sets. Student t with J - 1 degrees of freedom.

    Parameters
    ----------
    differences : array_like, shape (..., J)
    n_train, n_test : int
        Sizes of each training and test set.

    Notes
    -----
    Zero spread: t = +-inf when mean(d) != 0 (p-value 0), 0 when mean(d) = 0.
    """
    _check_alternative(alternative)
    d = np.asarray(differences, dtype=float)
    J = d.shape[-1]
    factor = resampled_variance_factor(J, n_train, n_test, corrected)
    mean, var = d.mean(axis=-1), d.var(axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / np.sqrt(factor * var)
        t = np.where(var > 0, t, np.where(mean == 0, 0.0, np.sign(mean) * np.inf))
    return _scalar(TestResult(t, _t_pvalue(t, J - 1, alternative), float(J - 1), alternative))


def corrected_repeated_kfold_t_test(differences, n_train: int, n_test: int,
                                    alternative: str = "two-sided") -> TestResult:
    """Bouckaert & Frank's (2004) corrected repeated k-fold CV t-test.

    ``differences`` has shape (..., r, k): the per-fold error differences of r repetitions of
    k-fold CV. t = mean / sqrt((1/(k r) + n_test/n_train) s^2), s^2 the variance of all k r
    differences, Student t with k r - 1 degrees of freedom.
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim < 2:
        raise ValueError(f"differences must have shape (..., r, k); got {d.shape}.")
    return corrected_resampled_t_test(d.reshape(d.shape[:-2] + (-1,)), n_train, n_test, alternative)


def _five_by_two(differences) -> np.ndarray:
    d = np.asarray(differences, dtype=float)
    if d.shape[-2:] != (5, 2):
        raise ValueError(f"differences must have shape (..., 5, 2) (5 replications x 2 folds); got {d.shape}.")
    return d


def paired_t_test_5x2cv(differences, alternative: str = "two-sided") -> TestResult:
    """Dietterich's (1998) 5x2cv paired t-test.

    p_i^(j): difference of error rates on fold j of replication i. With
    s_i^2 = (p_i^(1) - pbar_i)^2 + (p_i^(2) - pbar_i)^2, t = p_1^(1) / sqrt(mean_i s_i^2), t with
    5 degrees of freedom. All s_i = 0 gives t = +-inf (or 0 when p_1^(1) = 0).
    """
    _check_alternative(alternative)
    d = _five_by_two(differences)
    s2 = np.sum((d - d.mean(axis=-1, keepdims=True)) ** 2, axis=-1)       # (..., 5)
    num, den = d[..., 0, 0], np.sqrt(s2.mean(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = num / den
        t = np.where(den > 0, t, np.where(num == 0, 0.0, np.sign(num) * np.inf))
    return _scalar(TestResult(t, _t_pvalue(t, 5, alternative), 5.0, alternative))


def combined_f_test_5x2cv(differences) -> TestResult:
    """Alpaydin's (1999) combined 5x2cv F test: f = sum_ij (p_i^(j))^2 / (2 sum_i s_i^2) ~ F(10, 5).

    Two-sided by construction (large f rejects). All s_i = 0 gives f = inf (p = 0) unless all
    differences are 0 (f = 0, p = 1).
    """
    d = _five_by_two(differences)
    s2 = np.sum((d - d.mean(axis=-1, keepdims=True)) ** 2, axis=-1)
    num, den = np.sum(d**2, axis=(-2, -1)), 2 * s2.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = num / den
    f = np.where(den > 0, f, np.where(num == 0, 0.0, np.inf))
    p = stats.f.sf(f, 10, 5)
    return _scalar(TestResult(f, p, 10.0, "two-sided"))


def mcnemar_test(b: int, c: int, exact: bool = True) -> TestResult:
    """McNemar's test on the discordant counts of two classifiers on one test set.

    Parameters
    ----------
    b : int
        Examples misclassified by classifier 1 only.
    c : int
        Examples misclassified by classifier 2 only.
    exact : bool
        True: the exact binomial test of b ~ Bin(b + c, 1/2) (two-sided; p = 1 when b + c = 0).
        False: chi-square with continuity correction, (|b - c| - 1)^2 / (b + c), 1 degree of
        freedom (statistic 0 when |b - c| <= 1).
    """
    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise ValueError(f"counts must be non-negative; got b={b}, c={c}.")
    if b + c == 0:
        return TestResult(0.0, 1.0, 1.0, "two-sided")
    if exact:
        res = stats.binomtest(b, b + c, 0.5)
        return TestResult(float(b), float(res.pvalue), float("nan"), "two-sided")
    chi2 = max(abs(b - c) - 1, 0) ** 2 / (b + c)
    return TestResult(float(chi2), float(stats.chi2.sf(chi2, 1)), 1.0, "two-sided")


def two_proportion_z_test(errors1: int, n1: int, errors2: int, n2: int, alternative: str = "two-sided",
                          pooled: bool = True) -> TestResult:
    """z-test for the difference of two error rates measured on independent test sets.

    z = (p1 - p2) / sqrt(p (1 - p) (1/n1 + 1/n2)) with the pooled rate p (``pooled=True``, the
    textbook test) or sqrt(p1 (1-p1)/n1 + p2 (1-p2)/n2). A zero standard error gives z = 0 when
    p1 = p2 and +-inf otherwise.
    """
    _check_alternative(alternative)
    if n1 <= 0 or n2 <= 0 or not (0 <= errors1 <= n1 and 0 <= errors2 <= n2):
        raise ValueError("need 0 <= errors <= n and n > 0 for both samples.")
    p1, p2 = errors1 / n1, errors2 / n2
    if pooled:
        p = (errors1 + errors2) / (n1 + n2)
        se = np.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    else:
        se = np.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    z = (p1 - p2) / se if se > 0 else (0.0 if p1 == p2 else np.sign(p1 - p2) * np.inf)
    if alternative == "two-sided":
        pv = 2 * stats.norm.sf(abs(z))
    else:
        pv = stats.norm.cdf(z) if alternative == "less" else stats.norm.sf(z)
    return TestResult(float(z), float(min(pv, 1.0)), float("nan"), alternative)
