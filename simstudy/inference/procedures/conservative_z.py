"""Nadeau & Bengio's (2003) conservative Z (new in simstudy).

Reference: C. Nadeau and Y. Bengio, "Inference for the generalization error", Machine Learning
52 (2003) 239-281, Section 4 (the conservative Z; its variance estimator from M splits of the
data into two halves). Read alongside the implementations of Schulz-Kuempel et al.'s benchmark
(``inferGE::infer_conservative_z``) and mlr3inferr (``MeasureCiConZ``), whose design and
interval this follows; the paper's equation numbers could not be checked here.

Design (:class:`~.designs.PairedSubsampling`): J random train/validation splits of the sample
(n1 = n - n2 training, n2 test points) give split estimates mu_hat_j (mean test loss) and

    mu_hat = mu_hat_{n1,n2}^J = (1/J) sum_j mu_hat_j.

For m = 1..M the sample is split into two disjoint halves S_m, S_m^c of h = floor(n/2) points;
on each half the same J-split estimator is computed with n2 test and n1' = h - n2 training
points: mu_hat_m and mu_hat_m^c. Given the split, the halves are independent samples of h
points, so E[(mu_hat_m - mu_hat_m^c)^2] = 2 Var(mu_hat_{n1',n2}^J) exactly (any learner), and

    sigma2_hat = (1 / (2M)) sum_m (mu_hat_m - mu_hat_m^c)^2

is unbiased for Var(mu_hat_{n1',n2}^J), the variance at half the sample size. The paper argues
(and shows empirically) that this exceeds Var(mu_hat_{n1,n2}^J), hence "conservative". The
interval and test use the standard normal:

    mu_hat -+ z_{1-alpha/2} sigma_hat,        Z = (mu_hat - mu0) / sigma_hat.

Zero spread: when all 2M half estimates are equal to within rounding sigma_hat is 0; the
interval is then the point mu_hat and Z is 0 (mu_hat = mu0) or +-inf
(:class:`simstudy.inference.TestResult`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simstudy.inference import TestResult, z_test, zero_spread

__all__ = ["ConservativeZ", "conservative_z", "conservative_z_test"]


@dataclass(frozen=True)
class ConservativeZ:
    """mu_hat (J splits of the sample), sigma2_hat (M pairs of halves) and the half estimates."""

    estimate: np.ndarray | float
    variance: np.ndarray | float
    halves: np.ndarray          # (..., M, 2) the J-split estimates of each half


def conservative_z(main_estimates, half_estimates) -> ConservativeZ:
    """The conservative Z's estimate and variance from split estimates.

    Parameters
    ----------
    main_estimates : array_like, shape (..., J)
        mu_hat_j of the J splits of the whole sample.
    half_estimates : array_like, shape (..., M, 2, J)
        The J split estimates on the first and second half of each of the M splits into halves.
    """
    main = np.asarray(main_estimates, dtype=float)
    halves = np.asarray(half_estimates, dtype=float)
    if main.ndim < 1 or halves.ndim < 3 or halves.shape[-2] != 2 or halves.shape[-3] < 1:
        raise ValueError(f"need main_estimates (..., J) and half_estimates (..., M, 2, J) with M >= 1; got "
                         f"{main.shape} and {halves.shape}.")
    per_half = halves.mean(axis=-1)                                           # (..., M, 2)
    variance = np.mean((per_half[..., 0] - per_half[..., 1]) ** 2, axis=-1) / 2
    flat = zero_spread(per_half.reshape(per_half.shape[:-2] + (-1,)))
    variance = np.where(flat, 0.0, variance)
    estimate = main.mean(axis=-1)
    return ConservativeZ(estimate if estimate.ndim else float(estimate),
                         variance if variance.ndim else float(variance), per_half)


def conservative_z_test(main_estimates, half_estimates, mu0=0.0, alternative: str = "two-sided",
                        bounds=None) -> TestResult:
    """Z = (mu_hat - mu0) / sigma_hat against the standard normal, and its interval mu_hat -+ z sigma_hat."""
    cz = conservative_z(main_estimates, half_estimates)
    return z_test(cz.estimate, np.sqrt(cz.variance), mu0, alternative, bounds, method="conservative Z")
