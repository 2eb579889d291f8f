"""Nested cross-validation intervals for prediction error (Bates, Hastie & Tibshirani 2023).

Ordinary CV intervals R_hat +- q sd(e)/sqrt(n) treat the n losses as independent, but the
fold models share training points, so the variance of the CV estimate is under-estimated.
Nested CV estimates the mean squared error of the CV estimate directly: for each outer fold
k, the inner CV on the other K-1 folds is an honest estimate of the error of a model trained
on the outer training set, and its disagreement with the outer fold's own losses measures
how far a CV estimate falls from the error it targets. The target is Err_XY, the error of the
model trained on all n points.

Reference: S. Bates, T. Hastie, R. Tibshirani, "Cross-validation: what does it estimate and
how well does it do it?", JASA 118 (2023), arXiv:2104.00673, Section 4 and Algorithm 1; the
authors' R package ``stephenbates19/nestedcv``, ``R/core.R``, functions ``nested_cv`` and
``nested_cv_helper`` (commit 7f9d5ae, 2022-06-09).

Both methods (``method="paper"``, the default: Algorithm 1 with the bias correction of
Section 4, factor 1 + (K-2)/K; ``method="package"``: the R package's ``nested_cv`` line by line,
factor 1 + ((K-2)/K)^1.5 and its standard-error floor) share Algorithm 1: per repetition r and
outer fold k, a = (mean inner loss - mean outer loss)^2 and b = s^2(outer losses) / m give
MSE_hat = mean(a) - mean(b), and the interval is Err_hat +- z SE. The formulas of both methods,
where each comes from, why the two bias factors differ, and what could not be checked against
the paper's text are in the documentation, :doc:`/statistics/nested_cv`
(``docs/statistics/nested_cv.rst``).

Unequal folds (n not a multiple of K; sizes floor(n/K) and ceil(n/K)). Algorithm 1 is
written for index sets I_k of any size, so a, b (with |I_k| = m_k), MSE_hat and Err_NCV (the
mean of all inner losses) are computed fold by fold as printed. The two constants come from
the training sizes of equal folds, n(K-1)/K for the outer models and n(K-2)/K for the inner
ones; with unequal folds these are exactly the *mean* training sizes (the mean of n - m_k over
folds is n - n/K, and of n - m_k - m_j over ordered pairs k != j is n - 2n/K), so the bias
factor and the (K-1)/K rescaling are kept: to first order in the spread of the sizes (at most
one point) they are unchanged. The authors' package assumes equal folds (``nested_cv_helper``
never tests the last n mod K rows, in data order, but trains on them in every fit); the
package method here uses every row, with its n_sub = floor(n (K-1)/K) as in ``nested_cv``.
Losses of unequal folds are passed NaN-padded to the largest fold size (see
:func:`simstudy.cv.loop.nested_cv_losses`).

Interval edges: an error rate lies in [0, 1]; with ``bounds=(0, 1)`` (from the loss, see
:attr:`simstudy.cv.losses.Loss.bounds`) the interval is clipped to the bounds and ``clipped``
says so. By default nothing is clipped.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simstudy.inference.distributions import norm_ppf
from simstudy.inference.pivot import check_bounds
from simstudy.inference.results import ConfidenceInterval, check_level, clip_interval, make_interval

__all__ = ["NESTED_CV_METHODS", "NestedCVResult", "bias_factor", "nested_cv_interval"]

#: The two variants of :func:`nested_cv_interval`.
NESTED_CV_METHODS = ("paper", "package")


@dataclass(frozen=True)
class NestedCVResult:
    """Outcome of :func:`nested_cv_interval`.

    Attributes
    ----------
    estimate, low, high : float
        Bias-corrected point estimate Err_hat and interval ends Err_hat -+ z SE (clipped to
        ``bounds`` when given).
    confidence_level : float
    se : float
        Standard error used for the interval (after clipping, if any).
    err_ncv, err_cv : float
        Mean inner-CV loss Err_NCV, and the ordinary-CV estimate Err_CV used by the bias
        correction (all repetitions for ``"paper"``, the first B for ``"package"``).
    mse_hat : float
        Estimated mean squared error of the CV estimate with K-1 folds (may be negative).
    bias : float
        The subtracted bias estimate (0 without bias correction).
    se_naive : float
        Lower clipping bound: sd of the outer losses / sqrt(n) (``"paper"``) or sd of the inner
        losses / sqrt(n) (``"package"``). The upper bound is sqrt(K) times it.
    se_raw : float
        sqrt((K-1)/K max(MSE_hat, 0)), the standard error before clipping (``"package"`` with
        unequal folds: n_sub/n in place of (K-1)/K, n_sub = floor(n (K-1)/K)).
    method : str
        ``"paper"`` or ``"package"``.
    bias_factor : float
        The multiplier of Err_NCV - Err_CV (0 without bias correction).
    repetitions, bias_repetitions, folds, fold_size, n : int
        R, the repetitions whose outer losses give Err_CV, K, the largest fold size and n.
    bounds : (float, float) or None
        Range the interval was clipped to.
    clipped : bool
        True when an end of the interval fell outside ``bounds`` and was moved onto it.
    """

    estimate: float
    low: float
    high: float
    confidence_level: float
    se: float
    err_ncv: float
    err_cv: float
    mse_hat: float
    bias: float
    se_naive: float
    se_raw: float = math.nan
    method: str = "paper"
    bias_factor: float = math.nan
    repetitions: int = 0
    bias_repetitions: int = 0
    folds: int = 0
    fold_size: int = 0
    n: int = 0
    bounds: tuple[float, float] | None = None
    clipped: bool = False

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Err_hat -+ z SE at ``confidence_level`` (default: the level it was computed at)."""
        level = self.confidence_level if confidence_level is None else confidence_level
        check_level(level)
        q = float(norm_ppf(0.5 + level / 2))
        return make_interval(self.estimate, self.estimate - q * self.se, self.estimate + q * self.se, level,
                             f"nested cv ({self.method})", self.se, "two-sided", self.bounds)

    @property
    def width(self) -> float:
        return self.high - self.low

    @property
    def inflation(self) -> float:
        """SE / se_naive: the package's ``sd_infl`` (in [1, sqrt(K)] when clipped)."""
        return self.se / self.se_naive if self.se_naive > 0 else math.nan


def bias_factor(K: int, method: str = "paper") -> float:
    """Multiplier of Err_NCV - Err_CV in the bias estimate.

    ``"paper"``: 1 + (K-2)/K (exact when the excess error decays like 1/training size);
    ``"package"``: 1 + ((K-2)/K)^1.5 (``bias_est`` in ``nested_cv``, ``R/core.R``).
    """
    _check_method(method)
    return 1 + (K - 2) / K if method == "paper" else 1 + ((K - 2) / K) ** 1.5


def _check_method(method: str) -> None:
    if method not in NESTED_CV_METHODS:
        raise ValueError(f"method must be one of {NESTED_CV_METHODS}; got {method!r}.")


@dataclass(frozen=True)
class _Algorithm1:
    """The quantities of Algorithm 1 shared by both methods (NaN marks padding of unequal folds)."""

    inner: np.ndarray       # (R, K, K-1, m) inner-CV losses of each outer fold
    outer: np.ndarray       # (R, K, m)
    a: np.ndarray           # (R, K)
    b: np.ndarray           # (R, K)
    padded: bool            # unequal folds: NaN-padded arrays

    @property
    def mse_hat(self) -> float:
        return float(self.a.mean() - self.b.mean())

    @property
    def err_ncv(self) -> float:
        return float(np.nanmean(self.inner) if self.padded else self.inner.mean())

    def outer_mean(self, B: int) -> float:
        """Mean of the outer losses of repetitions 0..B-1."""
        x = self.outer[:B]
        return float(np.nanmean(x) if self.padded else x.mean())

    def sd(self, losses: np.ndarray) -> float:
        """Standard deviation (ddof = 1) of all the losses (inner or outer) of every repetition."""
        return float(np.nanstd(losses, ddof=1) if self.padded else losses.std(ddof=1))


def _algorithm_1(pair: np.ndarray, outer: np.ndarray) -> _Algorithm1:
    R, K, _, m = pair.shape
    off = ~np.eye(K, dtype=bool)
    inner = pair[:, off, :].reshape(R, K, K - 1, m)           # row k: folds j != k, in order of j
    padded = bool(np.isnan(outer).any())
    if not padded:
        a = (inner.mean(axis=(2, 3)) - outer.mean(axis=2)) ** 2     # (mean e_in - mean e_out)^2
        b = outer.var(axis=2, ddof=1) / m                           # var(e_out) / |I_k|
    else:
        sizes = np.sum(~np.isnan(outer), axis=2)                    # |I_k| per repetition and fold
        a = (np.nanmean(inner, axis=(2, 3)) - np.nanmean(outer, axis=2)) ** 2
        b = np.nanvar(outer, axis=2, ddof=1) / sizes
    return _Algorithm1(inner, outer, a, b, padded)


def _validated_arrays(pair_losses, outer_losses) -> tuple[np.ndarray, np.ndarray, int]:
    """The arrays, checked; returns (pair, outer, n)."""
    pair = np.asarray(pair_losses, dtype=float)
    outer = np.asarray(outer_losses, dtype=float)
    if pair.ndim != 4 or outer.ndim != 3 or pair.shape[:2] != outer.shape[:2] or pair.shape[2] != pair.shape[1] \
            or pair.shape[3] != outer.shape[2]:
        raise ValueError(f"need pair_losses of shape (R, K, K, m) and outer_losses of shape (R, K, m); "
                         f"got {pair.shape} and {outer.shape}.")
    R, K, _, m = pair.shape
    if R < 1:
        raise ValueError("nested CV needs at least 1 repetition; got R=0.")
    if K < 3:
        raise ValueError(f"nested CV needs K >= 3 folds; got K={K}.")
    sizes = np.sum(~np.isnan(outer), axis=2)                         # (R, K)
    if np.any(sizes < 2):
        raise ValueError(f"nested CV needs at least 2 points per fold (the within-fold variance b); got fold sizes "
                         f"{sorted(set(sizes.ravel().tolist()))}.")
    n = sizes.sum(axis=1)
    if np.any(n != n[0]):
        raise ValueError(f"every repetition must test all n points once; got {n.tolist()} points.")
    off = ~np.eye(K, dtype=bool)
    pattern = np.isnan(pair) != np.isnan(outer)[:, None, :, :]       # pair[r, k, j] pads like fold j
    if np.any(pattern[:, off]):
        raise ValueError("pair_losses[r, k, j] must hold a loss exactly where outer_losses[r, j] does (NaN marks the "
                         "padding of folds smaller than the largest); a loss is NaN where it should not be, or the "
                         "layouts differ.")
    return pair, outer, int(n[0])


def nested_cv_interval(pair_losses, outer_losses, confidence_level: float = 0.95, bias_correction: bool = True,
                       clip: bool = True, method: str = "paper", bias_repetitions: int | None = None,
                       bounds=None) -> NestedCVResult:
    """Nested-CV confidence interval for Err_XY, the error of the model fit on all n points.

    The formulas of both methods, with their sources, are in the module docstring
    (:mod:`simstudy.inference.nested`). Nested CV is an interval procedure only.

    Parameters
    ----------
    pair_losses : array_like, shape (R, K, K, m)
        ``pair_losses[r, k, j]``: losses on fold j of the model trained without folds k and j
        (diagonal ignored); see :func:`simstudy.cv.loop.nested_cv_losses`. Folds smaller than
        the largest (m) are padded with NaN.
    outer_losses : array_like, shape (R, K, m)
        ``outer_losses[r, k]``: losses on fold k of the model trained without fold k (NaN
        padding as above).
    confidence_level : float
        The quantile is z_{1/2 + level/2} of the standard normal.
    bias_correction : bool
        Subtract bias_factor (Err_NCV - Err_CV) from Err_NCV (default) or centre at Err_NCV.
    clip : bool
        Keep SE in [se_naive, sqrt(K) se_naive] (default).
    method : {"paper", "package"}
        Bates, Hastie & Tibshirani's Algorithm 1 and Section 4 (default), or the R package's
        ``nested_cv``.
    bias_repetitions : int, optional
        ``"package"`` only: the number B of ordinary CVs behind Err_CV (default ceil(R/5), the
        package's ``bias_reps``); the outer CVs of repetitions 0..B-1 are used.
    bounds : (low, high), optional
        Range of Err_XY (the loss's bounds, e.g. (0, 1) for 0-1 loss): the interval is clipped
        to it. Default: not clipped.

    Returns
    -------
    NestedCVResult

    Notes
    -----
    Edge cases: m = 1 (leave-one-out folds) leaves b undefined and is rejected; all losses
    equal gives MSE_hat = 0, se_naive = 0 and the point interval at the common loss.
    """
    check_level(confidence_level)
    _check_method(method)
    bounds = check_bounds(bounds)
    pair, outer, n = _validated_arrays(pair_losses, outer_losses)
    R, K, _, m = pair.shape
    if method == "paper":
        if bias_repetitions is not None:
            raise ValueError("bias_repetitions applies to method='package' only; the paper's Err_CV uses every "
                             f"repetition (got bias_repetitions={bias_repetitions!r}).")
        B = R
    else:
        B = math.ceil(R / 5) if bias_repetitions is None else int(bias_repetitions)
        if not 1 <= B <= R:
            raise ValueError(f"bias_repetitions must lie in 1..R={R}; got {bias_repetitions!r}.")
    alg = _algorithm_1(pair, outer)
    err_ncv, mse_hat = alg.err_ncv, alg.mse_hat
    err_cv = alg.outer_mean(B)
    factor = bias_factor(K, method) if bias_correction else 0.0
    bias = factor * (err_ncv - err_cv)
    estimate = err_ncv - bias
    # (K-1)/K rescales the MSE of a (K-1)-fold CV on n(K-1)/K points to K folds on n points;
    # the package writes it as n_sub / n with n_sub = floor(n (K-1)/K), equal for equal folds
    if method == "package" and n % K:
        se_raw = math.sqrt(max(mse_hat, 0.0) * math.floor(n * (K - 1) / K) / n)
    else:
        se_raw = math.sqrt(max(mse_hat, 0.0) * (K - 1) / K)
    se_naive = alg.sd(outer if method == "paper" else alg.inner) / math.sqrt(n)
    se = float(np.clip(se_raw, se_naive, math.sqrt(K) * se_naive)) if clip else se_raw
    q = float(norm_ppf(0.5 + confidence_level / 2))
    low, high, clipped = clip_interval(estimate - q * se, estimate + q * se, bounds)
    return NestedCVResult(estimate, low, high, confidence_level, se, err_ncv, err_cv, mse_hat, float(bias), se_naive,
                          se_raw, method, factor, R, B, K, m, n, bounds, clipped)
