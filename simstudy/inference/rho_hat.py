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
  (K-fold CV re-run on both halves of B random splits of D into DISJOINT halves of size
  h = n/2), giving an unbiased estimate of theta(h) and hence of rho(h). Since rho decreases
  with n on every population we measured (Table 2: Letter 52% at n = 20, 24% at n = 2000),
  rho(h) >= rho(n) and plugging rho_hat(h) into eq. 9 at size n errs on the safe side.
  :func:`subsample_cv` runs the half-sample CVs for any ``cv(rows, rng) -> fold means`` callable.

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
        Degrees of freedom of the matching t reference: K - 1 for eq. 9 with rho_hat, B (the
        number of splits) for the direct variance test of :func:`subsample_variance`.
    method : str
    n, n_sub, subsamples : int
        Training size, half size h and number B of splits into halves (0 when not used).
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
        K = fm.shape[-1]
        if self.df == K - 1:
            return cv_t_test(fm, mu0, rho=self.rho, alternative=alternative, bounds=bounds)
        # eq. 9's statistic against t with other degrees of freedom (subsample_rho(df="satterthwaite"))
        se = fm.std(axis=-1, ddof=1) / np.sqrt(K * (1 - np.asarray(self.rho)))
        return t_test(fm.mean(axis=-1), se, self.df, mu0, alternative, bounds, method=self.method)


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


def subsample_size(n: int, K: int) -> int:
    """The half-sample size h = floor(n/2) rounded down to a multiple of K (at least K)."""
    h = n // 2 // K * K
    if h < K:
        raise ValueError(f"no two disjoint halves of at least K = {K} points in n = {n}; use n >= {2 * K}.")
    return h


@dataclass(frozen=True)
class SubsampleCV:
    """K-fold CV re-run on both halves of B random splits of one sample into disjoint halves.

    Attributes
    ----------
    mu_hats : ndarray, shape (..., B, 2)
        CV estimate of each half of each split.
    theta3s : ndarray, shape (..., B, 2)
        theta3 of each half's CV.
    n, n_sub, K : int
        Sample size, half size h and folds.
    """

    mu_hats: np.ndarray
    theta3s: np.ndarray
    n: int
    n_sub: int
    K: int

    @property
    def splits(self) -> int:
        return int(np.shape(self.mu_hats)[-2])


def subsample_cv(cv: Callable[[np.ndarray, np.random.Generator], np.ndarray], n: int, K: int, splits: int,
                 rng: np.random.Generator) -> SubsampleCV:
    """Run K-fold CV on both halves of ``splits`` random splits of one sample into disjoint halves.

    Parameters
    ----------
    cv : callable ``(rows, rng) -> fold_means``
        K-fold CV (with a fresh random fold assignment drawn from ``rng``) of the learner on
        the sample's rows ``rows`` (positions 0..n-1); returns the K fold means.
    n, K : int
    splits : int
        B >= 1 splits (2B CVs of size h = :func:`subsample_size`; when n - 2h > 0 points are
        left out of a split, a different random set each time).
    rng : Generator
        Draws the splits (and is passed on to ``cv``).
    """
    if isinstance(splits, bool) or int(splits) != splits or splits < 1:
        raise ValueError(f"need at least 1 split into halves; got {splits!r}.")
    h = subsample_size(n, K)
    fm = np.empty((splits, 2, K))
    for b in range(splits):
        perm = rng.permutation(n)
        for j in range(2):
            fm[b, j] = cv(np.sort(perm[j * h:(j + 1) * h]), rng)
    mu = fm.mean(axis=-1)
    theta3 = np.sum((fm - mu[..., None]) ** 2, axis=-1) / (K * (K - 1))
    return SubsampleCV(mu, theta3, n, h, K)


def _half_variance(sub: SubsampleCV) -> np.ndarray:
    """theta_hat(h) = mean_b (mu_hat(S_b) - mu_hat(S_b'))^2 / 2: see :func:`subsample_variance`."""
    mu = np.asarray(sub.mu_hats, dtype=float)
    if mu.ndim < 2 or mu.shape[-1] != 2 or mu.shape[-2] < 1:
        raise ValueError(f"mu_hats must have shape (..., B, 2) (both halves of B >= 1 splits); got {mu.shape}.")
    return np.mean((mu[..., 0] - mu[..., 1]) ** 2, axis=-1) / 2


def _half_rho(sub: SubsampleCV, theta_half) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - np.mean(np.asarray(sub.theta3s, dtype=float), axis=(-2, -1)) / theta_half


def subsample_variance(sub: SubsampleCV) -> RhoEstimate:
    """Var(mu_hat) at size n from K-fold CVs on disjoint halves of the sample (new).

    Derivation. Split D (n i.i.d. examples) at random into two disjoint halves S and S' of h
    examples each (h = n/2 rounded down to a multiple of K). Given the split, S and S' are two
    independent i.i.d. training sets of size h, so their K-fold CV estimates T = mu_hat(S) and
    T' = mu_hat(S') (each with its own random fold assignment) are independent draws of the CV
    estimate at size h, and

        E[(T - T')^2 / 2] = Var(mu_hat at h) = theta(h)

    exactly, whatever the learner: no linearity, stability or overlap assumption (this is why
    halves are disjoint; overlapping subsamples would need a correction that holds only for the
    linear part of mu_hat and over-counts the fold-assignment noise). Averaging over B random
    splits of the same D gives theta_hat(h) = mean_b (T_b - T'_b)^2 / 2, still unbiased. With
    independent pairs it would be theta(h) chi^2_B / B; the B splits of one D are dependent,
    but for a near-linear mu_hat their common part (through D) has about n degrees of freedom,
    so Student's t with B degrees of freedom is the reference we use.

    Scaling to n: theta(n) = theta(h) h / n under the 1/s law of a mean. CV's variance decays at
    least that fast when both the error and the instability fall with the training size (the
    usual case: the estimate is then conservative), slower otherwise. :func:`subsample_rho`
    avoids the scaling law.

    Returns
    -------
    RhoEstimate
        ``theta`` = theta_hat(h) h / n, ``df = B``, ``raw_rho`` = the rho(h) of
        :func:`subsample_rho` (for reference).
    """
    theta_half = _half_variance(sub)
    raw = _half_rho(sub, theta_half)
    return RhoEstimate(rho=_clip(raw), raw_rho=raw, theta=theta_half * sub.n_sub / sub.n, df=float(sub.splits),
                       method="subsample_variance", n=sub.n, n_sub=sub.n_sub, subsamples=sub.splits)


def subsample_rho(sub: SubsampleCV, df: str = "folds") -> RhoEstimate:
    """rho(h) at half the size, estimated from K-fold CVs on disjoint halves, used as rho_hat at n (new).

    Derivation. rho(s) = 1 - E[theta3(s)] / theta(s) at any training size s (Grandvalet &
    Bengio, section 5). At s = h = n/2 both terms can be estimated from D without bias: theta(h)
    by theta_hat(h) = mean_b (T_b - T'_b)^2 / 2 over the B splits into disjoint halves
    (:func:`subsample_variance`: the halves are independent training sets of size h), and
    E[theta3(h)] by the mean of the 2B halves' theta3. Hence

        rho_hat = 1 - mean_{b,j} theta3(S_bj) / theta_hat(h),      clipped to [0, RHO_MAX],

    a ratio estimator of rho(h), consistent as B grows (and with the number of replicates when
    averaged). The test is eq. 9 at size n with this rho_hat, i.e. the variance estimate
    theta3(D) / (1 - rho_hat): unlike :func:`subsample_variance` it needs no scaling law of
    theta in n, only rho(n) <= rho(h), which holds because rho falls with n (the safe side;
    Letter, tree: rho 52% at n = 20, 44% at 40, 24% at 2000). The reference is Student's t with
    K - 1 degrees of freedom (Proposition 2, ``df="folds"``); the noise of rho_hat is not in it,
    so with few splits the test can be liberal.

    ``df="satterthwaite"`` puts that noise in: the variance estimate is
    V = theta3(D) theta_hat(h) / mean theta3(halves); treating its three factors as independent
    scaled chi-squares with K - 1, B and 2B(K - 1) degrees of freedom, Var(log V) is about
    2/(K-1) + 2/B + 2/(2B(K-1)), and Satterthwaite's df = 2 / Var(log V) is

        df = 1 / (1/(K-1) + 1/B + 1/(2B(K-1)))          (3.1 for K = 10, B = 5),

    a conservative choice (the factors are positively correlated through D, which lowers the
    variance of the ratio).

    Parameters
    ----------
    sub : SubsampleCV
    df : {"folds", "satterthwaite"}
        Degrees of freedom of the reference t.

    Returns
    -------
    RhoEstimate
        ``theta`` NaN (the test is eq. 9's statistic), ``df`` as chosen.
    """
    if df not in ("folds", "satterthwaite"):
        raise ValueError(f"df must be 'folds' or 'satterthwaite'; got {df!r}.")
    raw = _half_rho(sub, _half_variance(sub))
    theta = np.full(np.shape(raw), np.nan) if np.ndim(raw) else np.nan
    K, B = sub.K, sub.splits
    dof = float(K - 1) if df == "folds" else 1.0 / (1 / (K - 1) + 1 / B + 1 / (2 * B * (K - 1)))
    return RhoEstimate(rho=_clip(raw), raw_rho=raw, theta=theta, df=dof,
                       method="subsample_rho" + ("" if df == "folds" else "_satterthwaite"), n=sub.n,
                       n_sub=sub.n_sub, subsamples=B)
