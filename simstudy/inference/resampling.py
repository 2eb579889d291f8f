"""Tests (with their intervals) on repeated resampling designs: repeated train/validation splits
(with or without Nadeau & Bengio's correction), Bouckaert & Frank's repeated k-fold, and
Dietterich's / Alpaydin's 5x2cv.

Each estimate entering these tests is one split's mean loss (or mean loss difference), so the
designs work on any n: halves of odd n differ by one point, folds of n not a multiple of k by
at most one, and each split's estimate is averaged with equal weight.
"""
from __future__ import annotations

import numpy as np
from simstudy.lazy import LazyModule

stats = LazyModule("scipy.stats")

from simstudy.inference.pivot import pivot_test
from simstudy.inference.results import TestResult, scalar

__all__ = ["CORRECTIONS", "FTestResult", "five_by_two_f_test", "five_by_two_t_test", "repeated_kfold_t_test",
           "resampled_t_test", "resampled_variance_factor"]

#: Variance corrections of the repeated train/validation t.
CORRECTIONS = (None, "nadeau-bengio")


def resampled_variance_factor(J: int, n_train: float, n_test: float, correction: str | None = "nadeau-bengio") -> float:
    """Variance factor of the mean of J split estimates: 1/J, plus n_test/n_train with Nadeau &
    Bengio's (2003) correction of the training-set overlap."""
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}; got {correction!r}.")
    if J < 2:
        raise ValueError(f"need at least 2 train/validation splits; got {J}.")
    if not (n_train > 0 and n_test > 0):
        raise ValueError(f"n_train and n_test must be positive; got {n_train}, {n_test}.")
    return 1.0 / J + (n_test / n_train if correction == "nadeau-bengio" else 0.0)


def resampled_t_test(estimates, n_train: float, n_test: float, mu0=0.0, correction: str | None = "nadeau-bengio",
                     alternative: str = "two-sided", bounds=None) -> TestResult:
    """Repeated train/validation t-test of H0: mu = mu0, with Nadeau & Bengio's (2003) correction.

    J random splits give estimates x_1..x_J (test errors, or differences of two learners'
    test errors). t = (mean(x) - mu0) / sqrt(c s^2), s^2 the variance (ddof = 1) of the x_j,
    Student t with J - 1 degrees of freedom, where

    - ``correction=None``: c = 1/J, the plain (uncorrected) repeated train/validation t;
    - ``correction="nadeau-bengio"``: c = 1/J + n_test/n_train (the corrected resampled t),
      which accounts for the overlap of the training sets.

    ``.confidence_interval(level)`` is mean -+ t_{J-1} sqrt(c s^2).

    Parameters
    ----------
    estimates : array_like, shape (..., J)
    n_train, n_test : float
        Sizes of each training and test set (their averages when splits differ by a point).

    Notes
    -----
    Zero spread: t = +-inf when mean != mu0 (p-value 0), 0 when they are equal.
    """
    name = "nadeau-bengio corrected t" if correction else "repeated train/validation t"
    return _mean_t(np.asarray(estimates, dtype=float), n_train, n_test, mu0, correction, alternative, bounds, name)


def _mean_t(x, n_train, n_test, mu0, correction, alternative, bounds, name) -> TestResult:
    """The t of the mean of the last axis of x, variance factor from :func:`resampled_variance_factor`."""
    J = x.shape[-1]
    factor = resampled_variance_factor(J, n_train, n_test, correction)
    mean, var = x.mean(axis=-1), x.var(axis=-1, ddof=1)
    return pivot_test(mean, np.sqrt(factor * var), float(J - 1), mu0, alternative, name, bounds)


def repeated_kfold_t_test(estimates, n_train: float, n_test: float, mu0=0.0,
                          correction: str | None = "nadeau-bengio", alternative: str = "two-sided",
                          bounds=None) -> TestResult:
    """Bouckaert & Frank's (2004) corrected repeated k-fold CV t-test of H0: mu = mu0.

    ``estimates`` has shape (..., r, k): the per-fold mean losses (or loss differences) of r
    repetitions of k-fold CV. t = (mean - mu0) / sqrt((1/(k r) + n_test/n_train) s^2), s^2 the
    variance of all k r values, Student t with k r - 1 degrees of freedom;
    ``correction=None`` drops n_test/n_train. With unequal folds pass the average sizes
    n_test = n/k and n_train = n - n/k; each fold's mean counts once.
    """
    d = np.asarray(estimates, dtype=float)
    if d.ndim < 2:
        raise ValueError(f"estimates must have shape (..., r, k); got {d.shape}.")
    name = "bouckaert-frank corrected repeated k-fold t" if correction else "repeated k-fold t"
    return _mean_t(d.reshape(d.shape[:-2] + (-1,)), n_train, n_test, mu0, correction, alternative, bounds, name)


def _five_by_two(estimates) -> np.ndarray:
    d = np.asarray(estimates, dtype=float)
    if d.ndim < 2 or d.shape[-2:] != (5, 2):
        raise ValueError(f"estimates must have shape (..., 5, 2) (5 replications x 2 folds); got {d.shape}.")
    return d


def _five_by_two_s2(d: np.ndarray) -> np.ndarray:
    """s_i^2 = (p_i^(1) - pbar_i)^2 + (p_i^(2) - pbar_i)^2, shape (..., 5)."""
    return np.sum((d - d.mean(axis=-1, keepdims=True)) ** 2, axis=-1)


def five_by_two_t_test(estimates, mu0=0.0, alternative: str = "two-sided", bounds=None) -> TestResult:
    """Dietterich's (1998) 5x2cv paired t-test of H0: mu = mu0, and its interval.

    p_i^(j): the estimate (error rate, or difference of error rates) on fold j of replication
    i. With s_i^2 = (p_i^(1) - pbar_i)^2 + (p_i^(2) - pbar_i)^2,
    t = (p_1^(1) - mu0) / sqrt(mean_i s_i^2), t with 5 degrees of freedom; the interval is
    centred at the first fold's estimate p_1^(1), as the statistic's numerator. All s_i = 0
    gives t = +-inf (or 0 when p_1^(1) = mu0).

    Parameters
    ----------
    estimates : array_like, shape (..., 5, 2)
        Halves of odd n differ by one point; each half's estimate is its mean loss.
    """
    d = _five_by_two(estimates)
    return pivot_test(d[..., 0, 0], np.sqrt(_five_by_two_s2(d).mean(axis=-1)), 5.0, mu0, alternative, "5x2cv t",
                      bounds)


class FTestResult(TestResult):
    """A test without a matching confidence interval (Alpaydin's combined 5x2cv F)."""

    def confidence_interval(self, confidence_level: float = 0.95):
        raise NotImplementedError(
            "Alpaydin's combined 5x2cv F test has no confidence interval: the values mu0 it does not reject, "
            "{mu0: sum_ij (p_ij - mu0)^2 <= 2 F_crit sum_i s_i^2}, can be empty. Use five_by_two_t_test(...)"
            ".confidence_interval() for an interval from the same 5x2 design.")


def five_by_two_f_test(estimates, mu0=0.0) -> FTestResult:
    """Alpaydin's (1999) combined 5x2cv F test of H0: mu = mu0 (test only, two-sided by construction).

    f = sum_ij (p_i^(j) - mu0)^2 / (2 sum_i s_i^2) ~ F(10, 5); large f rejects. All s_i = 0
    gives f = inf (p = 0) unless every p_i^(j) equals mu0 (f = 0, p = 1). ``estimate`` is the
    mean of the ten estimates; there is no interval (see :class:`FTestResult`).
    """
    d = _five_by_two(estimates)
    mu0 = np.asarray(mu0, dtype=float)
    s2 = _five_by_two_s2(d)
    num, den = np.sum((d - mu0[..., None, None]) ** 2, axis=(-2, -1)), 2 * s2.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = num / den
    f = np.where(den > 0, f, np.where(num == 0, 0.0, np.inf))
    p = stats.f.sf(f, 10, 5)
    return FTestResult(scalar(f), scalar(p), 10.0, "two-sided", scalar(d.mean(axis=(-2, -1))), float("nan"),
                       scalar(mu0), "5x2cv combined F")

