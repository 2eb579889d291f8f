"""Figure 3 of Nedelko's paper for the nedelko_fisher study (one figure per sample size N)."""
from __future__ import annotations

import pandas as pd

from simstudy.report.figures import plt, style_axes

__all__ = ["risk_estimate_figure", "ESTIMATOR_LABELS", "RHAT_LABELS"]

ESTIMATOR_LABELS = {"loo": "leave-one-out", "kfold": "K-fold CV", "empirical": "empirical risk",
                    "rhat": "R_hat", "boot632": ".632 bootstrap", "boot632plus": ".632+ bootstrap"}
#: The legend of R_hat under each ``study.rhat_method``.
RHAT_LABELS = {"nedelko_worst_case": "R_hat (emp. + worst-case bias)", "vc_halfplane": "R_hat (emp. + VC bound)",
               "oracle_mean_curve": "R_hat (oracle: mean curve)",
               "oracle_conditional_max": "R_hat (oracle: conditional max)"}


def risk_estimate_figure(summary: pd.DataFrame, sample_size: int, K: int = 5, rhat_method: str = "nedelko_worst_case",
                         tie_rule: str = "random"):
    """Nedelko's Figure 3 for one N: left, mean true risk and mean estimates against R0;
    right, mean Delta0 of each estimate against R0 (error bars: 1.96 Monte Carlo SE)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    truth = summary.groupby("bayes_error")["mean_true_risk"].first()
    left.plot(truth.index, truth.values, "k-", lw=2.5, label="mean true risk")
    left.plot(truth.index, truth.index, color="grey", ls=":", label="Bayes error R0")
    labels = {**ESTIMATOR_LABELS, "rhat": RHAT_LABELS.get(rhat_method, "R_hat")}
    for est, g in summary.groupby("estimator", sort=False):
        label = labels.get(est, est).replace("K-fold", f"{K}-fold")
        left.plot(g["bayes_error"], g["mean_estimate"], marker=".", label=label)
        right.errorbar(g["bayes_error"], g["mean_delta0"], yerr=1.96 * g["mean_delta0_se"].fillna(0),
                       marker=".", capsize=2, label=label)
    left.set_xlabel("Bayes error R0")
    left.set_ylabel("mean over samples")
    right.set_xlabel("Bayes error R0")
    right.set_ylabel("mean Delta0(estimate, true risk)")
    return style_axes(fig, [left, right], [f"Mean risk and mean estimates, N = {sample_size} (ties: {tie_rule})",
                                           f"Mean error Delta0 of each estimate, N = {sample_size}"], 7)
