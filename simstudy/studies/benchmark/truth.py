"""The truths the benchmark scores intervals and tests against.

- ``R_n`` (per replicate): the error of the models at hand, the mean of the true errors of the
  split models whose test losses make the point estimate, weighted by their test points
  (:func:`estimate_weights`): for K-fold CV, Bayle et al.'s R_n = (1/n) sum_k m_k Err(f_{-k});
  for hold-out, the one model's error; for J random splits or the 5x2 design, the mean of the
  J (10) models' errors; for the designs with half-sample CVs (the subsample rho_hat, the
  conservative Z), the models of the main CV only; for nested CV, the outer fold models. The
  bootstrap's point estimate is not a mean over models tested on disjoint sets, so it has no
  R_n row.
- ``Err_n`` (per cell): E[Err(f_D)] over samples D of n points, estimated by T independent
  samples of n points (the truth phase), each fitted on all n points; ``truth_mcse`` =
  sqrt(s^2 / T + mean(se^2)), s the sd of the T true errors and se the Monte Carlo error of each
  (0 for closed-form and finite populations; a fixed evaluation sample's otherwise, which does
  not average out over T).
- ``Err_XY`` (per replicate): the true error of the model fitted on all n points.

For a comparison cell every truth is the difference A - B; the tests' null is true when A and B
are the same learner (fitted from independent streams: equal true errors by construction).
"""
from __future__ import annotations

import numpy as np

from simstudy.inference.procedures import (
    BootstrapDesign, KFoldHalvesDesign, NestedCVDesign, PairedSubsamplingDesign, SplitPlan,
)

__all__ = ["estimate_weights", "err_n_truth"]


def estimate_weights(plan: SplitPlan) -> np.ndarray | None:
    """Weights (S,) of the split models in R_n (summing to 1), None when the design has no R_n."""
    design = plan.design
    rows = np.ones(plan.splits, dtype=bool)
    if isinstance(design, BootstrapDesign):
        return None
    if isinstance(design, KFoldHalvesDesign):
        rows[design.K:] = False
    elif isinstance(design, PairedSubsamplingDesign):
        rows[design.J:] = False
    elif isinstance(design, NestedCVDesign):
        rows[:] = (np.arange(plan.splits) % design.per_repetition) < design.K
    weights = np.where(rows, plan.test_sizes(), 0).astype(float)
    return weights / weights.sum()


def err_n_truth(values: np.ndarray, mc_se: np.ndarray) -> tuple[float, float]:
    """Err_n and its Monte Carlo error from the truth phase's T true errors (see the module docstring)."""
    values = np.asarray(values, dtype=float)
    mc_se = np.asarray(mc_se, dtype=float)
    T = values.size
    spread = values.var(ddof=1) / T if T > 1 else np.nan
    return float(values.mean()), float(np.sqrt(spread + np.mean(mc_se ** 2)))
