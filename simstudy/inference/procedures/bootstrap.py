"""Bootstrap intervals of Schulz-Kuempel et al.'s benchmark (new in simstudy): the leave-one-out
bootstrap with Efron & Tibshirani's delta-method standard error, the .632+ with that standard
error rescaled, and the location-shifted bootstrap (Noma et al. 2021) around the .632+.

References: B. Efron and R. Tibshirani, "Improvements on cross-validation: the .632+ bootstrap
method", JASA 92 (1997) 548-560 (ET); H. Noma, T. Shinozaki, K. Iba, S. Teramukai and
T. A. Furukawa, "Confidence intervals of prediction accuracy measures for multivariable
prediction models based on the bootstrap-based optimism correction methods", Statistics in
Medicine 40 (2021) (arXiv:2005.01457), Algorithm 1; the implementations in
Schulz-Kuempel et al.'s benchmark code (slds-lmu/paper_2023_ci_for_ge, R package ``inferGE``:
``infer_oob``, ``infer_632plus``, ``infer_ls_boot``). ET's text was not available here: the
equation numbers 35-40 are those the benchmark code cites; the .632+ formulas are ET's Section 3
(their equation numbers are not given, as they could not be checked).

Notation (design :class:`~.designs.Bootstrap`): B resamples, N_i^b the count of point i in
resample b, I_i^b = [N_i^b = 0], Q_i^b the loss at point i of the model fitted on resample b,
err_bar the apparent error (the model fitted on all n points, on those points).

Leave-one-out bootstrap (ET eqs. 35-40, as cited by ``infer_oob``)::

    E_i    = sum_b I_i^b Q_i^b / sum_b I_i^b           (points out of at least one resample)
    Err1   = mean_i E_i                                 (over those n' points)
    q_b    = (1/n) sum_i I_i^b Q_i^b                     (36)
    D_i    = (2 + 1/(n-1)) (E_i - Err1) / n + sum_b (N_i^b - N_bar_i) q_b / sum_b I_i^b    (40)
    SE_del = sqrt((n / n') sum_i D_i^2)                  (35; n/n' rescales for points never out)

D_i is the empirical influence of point i on Err1 (divided by n): its role as a test point,
plus, through the covariance of N_i^b with the resamples' out-of-bag errors, its role as a
training point. (The term j = i of that covariance is about -E_i / n, which the factor 2 in
the first term offsets; the tests check SE_del against the Monte Carlo standard deviation of
Err1.) Interval: Err1 -+ z_{1-alpha/2} SE_del.

.632+ (ET Section 3)::

    gamma   = (1/n^2) sum_i sum_j L(y_i, f(x_j))       no-information error
    Err632  = .368 err_bar + .632 Err1
    Err1'   = min(Err1, gamma)
    R'      = (Err1' - err_bar) / (gamma - err_bar) if Err1 > err_bar and gamma > err_bar, else 0
    Err632+ = Err632 + (Err1' - err_bar) (.368 .632 R') / (1 - .368 R')

(the form of two independent implementations, R's ``error_632`` and a Java port; without the
clipping, Err632+ = (1 - w) err_bar + w Err1 with w = .632 / (1 - .368 R), Hastie, Tibshirani &
Friedman's Elements of Statistical Learning, Section 7.11, and ``inferGE``'s). Its interval, as ``infer_632plus``:
Err632+ -+ z SE_del Err632+ / Err1 (the coefficient of variation of Err1 carried over).

Location-shifted bootstrap (Noma et al., Algorithm 1, with the .632+ as optimism correction,
as ``infer_ls_boot``): the apparent error of each resample's model on its own resample,
err_b = (1/n) sum_i N_i^b Q_i^b, has percentiles q_{alpha/2}, q_{1-alpha/2} (linear
interpolation, R's type 7); the optimism estimate is err_bar - Err632+ and the interval

    [q_{alpha/2} - (err_bar - Err632+), q_{1-alpha/2} - (err_bar - Err632+)].

Edge cases: when all out-of-bag losses are equal (to within rounding) Err1 is that value whatever
the data, and SE_del is set to 0 (the point interval): the formula would otherwise return the
resampling noise of its covariance term, whose expectation is 0 (the count of out-of-bag points
of a resample is uncorrelated with each N_i^b). Err1 = 0 makes the .632+ standard error 0 (the
ratio Err632+/Err1 is taken as 1); a point never out of bag is
left out of Err1 (ET's convention), and the procedures refuse plans where fewer than 2 are out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from simstudy.inference import zero_spread

__all__ = ["LeaveOneOutBootstrap", "leave_one_out_bootstrap", "location_shifted_interval", "no_information_error",
           "point632plus"]


@dataclass(frozen=True)
class LeaveOneOutBootstrap:
    """Err1, its delta-method standard error SE_del, the n' points used and each E_i (NaN if never out)."""

    estimate: np.ndarray | float
    se: np.ndarray | float
    used: int
    point_errors: np.ndarray


def _f(x):
    return float(x) if np.ndim(x) == 0 else x


def leave_one_out_bootstrap(losses, counts) -> LeaveOneOutBootstrap:
    """Err1 and SE_del (ET eqs. 35-40) from the resamples' losses and counts.

    Parameters
    ----------
    losses : array_like, shape (..., B, n)
        Q_i^b; only the out-of-bag entries (counts 0) are read.
    counts : array_like of int, shape (B, n)
        N_i^b, each row summing to n.
    """
    Q = np.asarray(losses, dtype=float)
    N = np.asarray(counts)
    if N.ndim != 2 or Q.shape[-2:] != N.shape:
        raise ValueError(f"losses (..., B, n) and counts (B, n) must match; got {Q.shape} and {N.shape}.")
    B, n = N.shape
    out = N == 0
    times_out = out.sum(axis=0)
    used = times_out > 0
    if used.sum() < 2:
        raise ValueError(f"only {int(used.sum())} point(s) are out of bag in any of the B={B} resamples; the "
                         "leave-one-out bootstrap needs more resamples (B >= 20 or so).")
    oob = np.where(out, Q, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        E = oob.sum(axis=-2) / times_out                                          # (..., n), NaN if never out
    err1 = np.nanmean(np.where(used, E, np.nan), axis=-1)
    q = oob.sum(axis=-1) / n                                                      # (..., B)   eq. 36
    centred = N - N.mean(axis=0)                                                  # N_i^b - N_bar_i
    with np.errstate(invalid="ignore", divide="ignore"):
        train_part = np.einsum("bn,...b->...n", centred, q) / times_out
    D = (2 + 1 / (n - 1)) * (E - err1[..., None]) / n + train_part                # eq. 40
    se = np.sqrt(n / used.sum() * np.sum(np.where(used, D, 0.0) ** 2, axis=-1))   # eq. 35
    spread = np.stack([np.where(out, Q, np.inf).min(axis=(-2, -1)), np.where(out, Q, -np.inf).max(axis=(-2, -1))],
                      axis=-1)
    se = np.where(zero_spread(spread), 0.0, se)
    return LeaveOneOutBootstrap(_f(err1), _f(se), int(used.sum()), np.where(used, E, np.nan))


def point632plus(err1, apparent, gamma):
    """Efron & Tibshirani's .632+ estimate (module docstring); arrays broadcast."""
    err1, apparent, gamma = (np.asarray(v, dtype=float) for v in (err1, apparent, gamma))
    err632 = 0.368 * apparent + 0.632 * err1
    err1p = np.minimum(err1, gamma)
    overfit = (err1 > apparent) & (gamma > apparent)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(overfit, (err1p - apparent) / (gamma - apparent), 0.0)
    return _f(err632 + (err1p - apparent) * (0.368 * 0.632 * rate) / (1 - 0.368 * rate))


def location_shifted_interval(resample_apparent, apparent, estimate, alpha: float):
    """Noma et al.'s location-shifted percentile interval: (lower, upper).

    ``resample_apparent`` (..., B): apparent error of each resample's model on its resample;
    the interval is its (alpha/2, 1 - alpha/2) percentiles minus the optimism apparent - estimate.
    """
    shift = np.asarray(apparent, dtype=float) - np.asarray(estimate, dtype=float)
    qs = np.quantile(np.asarray(resample_apparent, dtype=float), [alpha / 2, 1 - alpha / 2], axis=-1)
    return _f(qs[0] - shift), _f(qs[1] - shift)


def no_information_error(loss: Callable[[np.ndarray, np.ndarray], np.ndarray], y, predictions,
                         block: int = 1024) -> float:
    """gamma = (1/n^2) sum_i sum_j L(y_i, f(x_j)): the error of the predictions with the labels shuffled
    over every pairing (ET Section 3; for 0-1 loss sum_l p_l (1 - q_l), p_l and q_l the shares of class l
    among labels and predictions).

    Parameters
    ----------
    loss : callable ``(y, predictions) -> losses``, elementwise and broadcasting
    y, predictions : array_like, shape (n,)
        Labels, and the predictions at the n points of the model fitted on all of them.
    block : int
        Rows of the n x n table computed at once (memory).
    """
    y = np.asarray(y)
    pred = np.asarray(predictions)
    if y.shape[:1] != pred.shape[:1] or y.ndim != 1:
        raise ValueError(f"y and predictions must be 1-D of equal length; got {y.shape} and {pred.shape}.")
    total = 0.0
    for start in range(0, y.size, block):
        total += float(np.sum(loss(y[start:start + block, None], pred[None, :])))
    return total / y.size ** 2
