"""Data-driven rho_hat: estimates of the between-block correlation rho (or of Var(mu_hat))
from ONE training sample, for the K-fold CV t-test of Grandvalet & Bengio (2006, eq. 9).

Notation (Grandvalet & Bengio): a training sample D of n examples, K folds of m = n/K,
fold means mu_hat_k, mu_hat = mean_k mu_hat_k, theta(n) = Var(mu_hat) over training sets,
theta3 = sum_k (mu_hat_k - mu_hat)^2 / (K (K-1)), and rho(n) = 1 - E[theta3] / theta(n). The
t-test of eq. 9 with rho_hat uses the variance estimate theta3 / (1 - rho_hat); it has level
alpha (Proposition 2) when rho_hat = rho and the fold means are exchangeable Gaussian.

The paper proves that no unbiased estimator of theta exists from one K-fold CV. The estimators
here step outside that setting in two ways:

- :func:`nadeau_bengio_rho`: no data at all; the Nadeau-Bengio / Bouckaert-Frank variance
  correction read as a fixed rho;
- :func:`subsample_variance` and :func:`subsample_rho`: more computation on the same data
  (K-fold CV re-run on B subsamples of size n' < n drawn WITHOUT replacement from D), giving
  a direct estimate of theta(n') and hence of rho(n'). Since rho decreases with n on every
  population we measured (Table 2: Letter 52% at n = 20, 24% at n = 2000), rho(n') >= rho(n)
  and plugging rho_hat(n') into eq. 9 at size n errs on the safe side.
  :func:`subsample_cv` runs the subsample CVs for any ``cv(rows, rng) -> fold means`` callable.

All estimators are pure functions on arrays with leading replicate axes and return a
:class:`RhoEstimate`; ``RhoEstimate.test(fold_means, mu0)`` gives the matching test (a
:class:`~simstudy.inference.results.TestResult` with ``.confidence_interval()``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from simstudy.inference.kfold import cv_t_test
from simstudy.inference.pivot import t_test
from simstudy.inference.results import TestResult

__all__ = ["RhoEstimate", "SubsampleCV", "nadeau_bengio_rho", "subsample_cv", "subsample_rho",
           "subsample_size", "subsample_variance", "RHO_MAX"]

#: Largest rho_hat used in a test (eq. 9 divides by 1 - rho_hat): estimates are clipped to [0, RHO_MAX].
RHO_MAX = 0.95


@dataclass(frozen=True)
class RhoEstimate:
    """An estimate of rho (and, where available, of theta = Var(mu_hat)) at training size n.

    Attributes
    ----------
    rho : float or ndarray
        The rho_hat to use in eq. 9, clipped to [0, ``RHO_MAX``].
    raw_rho : float or ndarray
        The unclipped estimate (may be negative, or >= 1, by chance).
    theta : float or ndarray
        Estimated Var(mu_hat) at size n (NaN when the method gives only a rho).
    df : float
        Degrees of freedom of the matching t reference: K - 1 for eq. 9 with rho_hat, B - 1
        for the direct variance test of :func:`subsample_variance`.
    method : str
    n, n_sub, subsamples : int
        Training size, subsample size n' and number B of subsamples (0 when not used).
    """

    rho: np.ndarray | float
    raw_rho: np.ndarray | float
    theta: np.ndarray | float
    df: float
    method: str
    n: int
    n_sub: int = 0
    subsamples: int = 0

    def test(self, fold_means, mu0=0.0, alternative: str = "two-sided", bounds=None) -> TestResult:
        """Test of H0: mu = mu0 with this estimate.

        With a variance estimate (``theta`` finite, :func:`subsample_variance`): Student's t
        (mu_hat - mu0) / sqrt(theta_hat) with ``df`` degrees of freedom. Otherwise eq. 9 with
        rho_hat = ``rho`` (:func:`~simstudy.inference.cv_t_test`, K - 1 degrees of freedom).
        """
        fm = np.asarray(fold_means, dtype=float)
        if np.all(np.isfinite(self.theta)):
            return t_test(fm.mean(axis=-1), np.sqrt(self.theta), self.df, mu0, alternative, bounds,
                          method=self.method)
        return cv_t_test(fm, mu0, rho=self.rho, alternative=alternative, bounds=bounds)


def _clip(rho) -> np.ndarray | float:
    out = np.clip(np.nan_to_num(np.asarray(rho, dtype=float), nan=RHO_MAX), 0.0, RHO_MAX)
    return float(out) if out.ndim == 0 else out


def nadeau_bengio_rho(K: int, n_train: float | None = None, n_test: float | None = None) -> RhoEstimate:
    """The Nadeau-Bengio / Bouckaert-Frank correction of the K-fold t-test, read as a rho.

    Derivation. Nadeau & Bengio (2003) correct the variance of the mean of J resampled
    train/test estimates from s^2 / J to (1/J + n_test/n_train) s^2; Bouckaert & Frank (2004)
    apply it to the K fold estimates of one K-fold CV (J = K, n_test/n_train = m/(n - m)
    = 1/(K - 1) with equal folds). Eq. 9 uses the variance s^2 / (K (1 - rho)) with
    s^2 = sum_k (mu_hat_k - mu_hat)^2 / (K - 1) (so that s^2 / K = theta3). Equating the two,

        1 / (K (1 - rho)) = 1/K + r,   r = n_test / n_train
        => 1 - rho = 1 / (1 + K r)  =>  rho_NB = K r / (1 + K r),

    which for K-fold CV (r = 1/(K - 1)) is rho_NB = K / (2K - 1): 0.526 for K = 10, 0.556 for
    K = 5, always between 1/2 and 2/3. The corrected test is eq. 9 with this rho and K - 1
    degrees of freedom; it does not look at the data, so it is right exactly when the true rho
    happens to equal rho_NB (Proposition 2).

    Parameters
    ----------
    K : int
        Number of folds (>= 2).
    n_train, n_test : float, optional
        Training and test sizes of one fold; default ratio 1/(K - 1) (equal folds).

    Returns
    -------
    RhoEstimate
        ``theta`` is NaN (the test is eq. 9), ``df = K - 1``.

    Examples
    --------
    >>> round(nadeau_bengio_rho(10).rho, 4)   # 10 / 19
    0.5263
    """
    if isinstance(K, bool) or int(K) != K or K < 2:
        raise ValueError(f"K must be an integer >= 2; got {K!r}.")
    if (n_train is None) != (n_test is None):
        raise ValueError("give both n_train and n_test, or neither (equal folds: n_test/n_train = 1/(K-1)).")
    r = 1.0 / (K - 1) if n_train is None else float(n_test) / float(n_train)
    if not r > 0:
        raise ValueError(f"n_test / n_train must be > 0; got n_train={n_train!r}, n_test={n_test!r}.")
    rho = K * r / (1 + K * r)
    return RhoEstimate(rho=_clip(rho), raw_rho=rho, theta=np.nan, df=float(K - 1), method="nadeau_bengio_rho",
                       n=0)


def subsample_size(n: int, K: int, fraction: float = 0.5) -> int:
    """The subsample size n' = fraction * n rounded down to a multiple of K, at least K, below n."""
    if not 0 < fraction < 1:
        raise ValueError(f"the subsample fraction must lie in (0, 1); got {fraction!r}.")
    n_sub = max(K, int(fraction * n) // K * K)
    if n_sub >= n:
        raise ValueError(f"no subsample size n' < n = {n} with K = {K} folds of at least one point; "
                         f"use n >= {2 * K}.")
    return n_sub


@dataclass(frozen=True)
class SubsampleCV:
    """K-fold CV re-run on B subsamples of size n' drawn without replacement from one sample.

    Attributes
    ----------
    mu_hats : ndarray, shape (..., B)
        CV estimate of each subsample.
    theta3s : ndarray, shape (..., B)
        theta3 of each subsample's CV.
    n, n_sub, K : int
    """

    mu_hats: np.ndarray
    theta3s: np.ndarray
    n: int
    n_sub: int
    K: int


def subsample_cv(cv: Callable[[np.ndarray, np.random.Generator], np.ndarray], n: int, K: int, subsamples: int,
                 rng: np.random.Generator, fraction: float = 0.5) -> SubsampleCV:
    """Run K-fold CV on ``subsamples`` subsamples of size n' (:func:`subsample_size`) of one sample.

    Parameters
    ----------
    cv : callable ``(rows, rng) -> fold_means``
        K-fold CV (with a fresh random fold assignment drawn from ``rng``) of the learner on
        the sample's rows ``rows`` (positions 0..n-1); returns the K fold means.
    n, K : int
    subsamples : int
        B >= 2.
    rng : Generator
        Draws the subsamples (and is passed on to ``cv``).
    fraction : float
        n' / n before rounding (default 1/2).
    """
    if subsamples < 2:
        raise ValueError(f"need at least 2 subsamples to estimate a variance; got {subsamples}.")
    n_sub = subsample_size(n, K, fraction)
    fm = np.empty((subsamples, K))
    for b in range(subsamples):
        rows = np.sort(rng.choice(n, n_sub, replace=False))
        fm[b] = cv(rows, rng)
    mu = fm.mean(axis=-1)
    theta3 = np.sum((fm - mu[:, None]) ** 2, axis=-1) / (K * (K - 1))
    return SubsampleCV(mu, theta3, n, n_sub, K)


def _overlap_corrected(mu_hats, n: int, n_sub: int) -> np.ndarray:
    """theta_hat(n') = Var_b(mu_hat(S_b)) n / (n - n'): see :func:`subsample_variance`."""
    mu = np.asarray(mu_hats, dtype=float)
    if not 0 < n_sub < n:
        raise ValueError(f"the subsample size must satisfy 0 < n' < n; got n'={n_sub}, n={n}.")
    if mu.shape[-1] < 2:
        raise ValueError(f"need the CV estimates of at least 2 subsamples; got {mu.shape[-1]}.")
    return mu.var(axis=-1, ddof=1) * n / (n - n_sub)


def subsample_variance(sub: SubsampleCV) -> RhoEstimate:
    """Var(mu_hat) at size n from the spread of CV estimates over subsamples (half-sampling).

    Derivation. Write the CV estimate on a set S of size s as a symmetric statistic
    T(S) = mu + (1/s) sum_{i in S} h(z_i) + R(S), with Var(h) = v so that the linear part has
    variance v / s (Hoeffding/ANOVA decomposition; R collects the higher-order, "instability"
    terms, and the random fold assignment). For subsamples S_b of size n' drawn without
    replacement from D (|D| = n), the conditional variance of the linear part given D is the
    finite-population variance of a mean,

        Var(mean_{S_b} h | D) = s_D^2 (1/n' - 1/n),   E[s_D^2] = v,

    so E[Var_b(T(S_b))] = v (1/n' - 1/n) for the linear part while theta(n') = v / n': the
    overlap between subsamples (each pair shares n'^2/n points on average) hides the fraction
    n'/n of the variance. Hence the overlap-corrected estimate

        theta_hat(n') = Var_b(mu_hat(S_b)) * n / (n - n')        (unbiased for the linear part)

    and, scaling the 1/s law from n' to n, theta_hat(n) = theta_hat(n') n' / n
    = Var_b(mu_hat(S_b)) n' / (n - n'), which for n' = n/2 is simply the variance of the
    half-sample CV estimates. A component of order j of R has conditional share 1 - (n'/n)^j
    >= 1 - n'/n, so the correction over-compensates it (conservative); the fold-assignment
    noise of T is included at its own size, as in theta(n). The 1/s scaling is conservative
    when theta(s) decays faster than 1/s (error and instability falling with s) and
    anti-conservative otherwise: :func:`subsample_rho` avoids this assumption.

    With B subsamples, Var_b has B - 1 degrees of freedom (chi-square when the mu_hat(S_b) are
    Gaussian given D); the matching test is (mu_hat - mu0) / sqrt(theta_hat(n)) against
    Student's t with B - 1 degrees of freedom. The implied rho is 1 - theta3 / theta_hat(n)
    per replicate, reported in ``raw_rho`` as 1 - mean_b theta3_b / theta_hat(n').

    Returns
    -------
    RhoEstimate
        ``theta`` = theta_hat(n), ``df = B - 1``.
    """
    theta_sub = _overlap_corrected(sub.mu_hats, sub.n, sub.n_sub)
    theta = theta_sub * sub.n_sub / sub.n
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = 1.0 - np.mean(sub.theta3s, axis=-1) / theta_sub
    B = np.asarray(sub.mu_hats).shape[-1]
    return RhoEstimate(rho=_clip(raw), raw_rho=raw, theta=theta, df=float(B - 1), method="subsample_variance",
                       n=sub.n, n_sub=sub.n_sub, subsamples=B)


def subsample_rho(sub: SubsampleCV) -> RhoEstimate:
    """rho(n') from subsamples, used as rho_hat at size n in eq. 9.

    Derivation. rho(s) = 1 - E[theta3(s)] / theta(s) at any training size s. At s = n' both
    terms can be estimated from D: theta(n') by the overlap-corrected spread of the subsample
    CV estimates (:func:`subsample_variance`, unbiased for the linear part) and E[theta3(n')]
    by the mean of the subsamples' theta3 (each is theta3 of a K-fold CV of size n', an
    unbiased draw of it up to the dependence through D). Hence

        rho_hat(n') = 1 - mean_b theta3(S_b) / (Var_b(mu_hat(S_b)) n / (n - n')),

    clipped to [0, RHO_MAX]. The test is eq. 9 at size n with rho_hat = rho_hat(n'), i.e. the
    variance estimate theta3(D) / (1 - rho_hat): unlike :func:`subsample_variance` it needs no
    scaling law of theta in n, only rho(n) <= rho(n') (rho falls with n: the safe side).
    The reference is Student's t with K - 1 degrees of freedom (Proposition 2); the noise of
    rho_hat (B - 1 degrees of freedom in its denominator) is not in it, which makes the test
    slightly liberal when B is small and rho(n') = rho(n).

    Returns
    -------
    RhoEstimate
        ``theta`` NaN (the test is eq. 9), ``df = K - 1``.
    """
    theta_sub = _overlap_corrected(sub.mu_hats, sub.n, sub.n_sub)
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = 1.0 - np.mean(sub.theta3s, axis=-1) / theta_sub
    B = np.asarray(sub.mu_hats).shape[-1]
    return RhoEstimate(rho=_clip(raw), raw_rho=raw, theta=np.full(np.shape(raw), np.nan) if np.ndim(raw) else np.nan,
                       df=float(sub.K - 1), method="subsample_rho", n=sub.n, n_sub=sub.n_sub, subsamples=B)
