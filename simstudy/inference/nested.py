"""Nested cross-validation intervals for prediction error (Bates, Hastie & Tibshirani 2023).

Ordinary CV intervals R_hat +- q sd(e)/sqrt(n) treat the n losses as independent, but the
fold models share training points, so the variance of the CV estimate is under-estimated.
Nested CV estimates the mean squared error of the CV estimate directly: for each outer fold
k, the inner CV on the other K-1 folds is an honest estimate of the error of a model trained
on the outer training set, and its disagreement with the outer fold's own losses measures
how far a CV estimate falls from the error it targets.

With e_in(r, k) the inner-CV losses and e_out(r, k) the outer-fold losses of repetition r
(Algorithm 1 of the paper):

    a_{r,k} = (mean e_in(r,k) - mean e_out(r,k))^2
    b_{r,k} = var(e_out(r,k)) / m                      (m = n / K points per fold)
    MSE_hat = mean(a) - mean(b)
    Err_NCV = mean of all e_in

The point estimate removes the bias of training on n (K-2)/K points: with errors that decay
like 1/(training size), Err(n(K-2)/K) - Err(n) = (1 + (K-2)/K) (Err(n(K-2)/K) - Err(n(K-1)/K)),
so bias_hat = (1 + (K-2)/K) (Err_NCV - Err_CV) and the interval is

    Err_NCV - bias_hat +- q_{1-alpha/2} sqrt((K-1)/K) sqrt(MSE_hat),

with the standard error kept between the naive CV one, sd(e)/sqrt(n), and sqrt(K) times it,
as the paper recommends. Its target is Err_XY, the error of the model trained on all n points.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from simstudy.lazy import LazyModule

stats = LazyModule("scipy.stats")

from simstudy.inference.results import ConfidenceInterval

__all__ = ["NestedCVResult", "nested_cv_interval"]


@dataclass(frozen=True)
class NestedCVResult:
    """Outcome of :func:`nested_cv_interval`.

    Attributes
    ----------
    estimate, low, high : float
        Bias-corrected point estimate and interval ends.
    alpha : float
    se : float
        Standard error used for the interval (after clipping).
    err_ncv, err_cv : float
        Mean inner-CV loss and mean outer (ordinary CV) loss.
    mse_hat : float
        Estimated mean squared error of the CV estimate (may be negative before clipping).
    bias : float
        The subtracted bias estimate (0 without bias correction).
    se_naive : float
        sd(e)/sqrt(n) of the first repetition's ordinary CV losses.
    """

    estimate: float
    low: float
    high: float
    alpha: float
    se: float
    err_ncv: float
    err_cv: float
    mse_hat: float
    bias: float
    se_naive: float

    @property
    def interval(self) -> ConfidenceInterval:
        return ConfidenceInterval(self.estimate, self.low, self.high, self.alpha, "nested cv", self.se)

    @property
    def width(self) -> float:
        return self.high - self.low


def nested_cv_interval(pair_losses, outer_losses, alpha: float = 0.05, bias_correction: bool = True,
                       clip: bool = True) -> NestedCVResult:
    """Nested-CV confidence interval for the prediction error of the model fit on all data.

    Parameters
    ----------
    pair_losses : array_like, shape (R, K, K, m)
        ``pair_losses[r, k, j]``: losses on fold j of the model trained without folds k and j
        (diagonal ignored); see :func:`simstudy.schemes.nested_cv_losses`.
    outer_losses : array_like, shape (R, K, m)
        ``outer_losses[r, k]``: losses on fold k of the model trained without fold k.
    alpha : float
    bias_correction : bool
        Subtract (1 + (K-2)/K)(Err_NCV - Err_CV) from Err_NCV (default) or centre at Err_NCV.
    clip : bool
        Keep the standard error in [se_naive, sqrt(K) se_naive] (default).

    Returns
    -------
    NestedCVResult

    Notes
    -----
    Edge cases: m = 1 (leave-one-out folds) leaves b undefined and is rejected; all losses
    equal gives MSE_hat = 0, se_naive = 0 and the point interval at the common loss.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}.")
    pair = np.asarray(pair_losses, dtype=float)
    outer = np.asarray(outer_losses, dtype=float)
    if pair.ndim != 4 or outer.ndim != 3 or pair.shape[:2] != outer.shape[:2] or pair.shape[2] != pair.shape[1] \
            or pair.shape[3] != outer.shape[2]:
        raise ValueError(f"need pair_losses of shape (R, K, K, m) and outer_losses of shape (R, K, m); "
                         f"got {pair.shape} and {outer.shape}.")
    R, K, _, m = pair.shape
    if K < 3:
        raise ValueError(f"nested CV needs K >= 3 folds; got K={K}.")
    if m < 2:
        raise ValueError(f"nested CV needs at least 2 points per fold (the within-fold variance b); got m={m}.")
    off = ~np.eye(K, dtype=bool)
    inner = pair[:, off, :].reshape(R, K, K - 1, m)          # (R, K, K-1, m): inner CV of each outer fold
    inner_mean = inner.mean(axis=(2, 3))                     # (R, K)
    outer_mean = outer.mean(axis=2)
    a = (inner_mean - outer_mean) ** 2
    b = outer.var(axis=2, ddof=1) / m
    mse_hat = float(a.mean() - b.mean())
    err_ncv = float(inner_mean.mean())
    err_cv = float(outer_mean.mean())
    bias = (1 + (K - 2) / K) * (err_ncv - err_cv) if bias_correction else 0.0
    estimate = err_ncv - bias
    se = float(np.sqrt(max(mse_hat, 0.0) * (K - 1) / K))
    se_naive = float(outer[0].std(ddof=1) / np.sqrt(K * m))
    if clip:
        se = float(np.clip(se, se_naive, np.sqrt(K) * se_naive))
    q = stats.norm.ppf(1 - alpha / 2)
    return NestedCVResult(estimate, estimate - q * se, estimate + q * se, alpha, se, err_ncv, err_cv, mse_hat,
                          float(bias), se_naive)
