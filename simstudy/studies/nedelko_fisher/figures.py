"""Figure 3 of Nedelko's paper for the nedelko_fisher study (one figure per sample size N)."""
from __future__ import annotations

import pandas as pd

from simstudy.report.figures import finish, mean_bars, panel_grid, series_style

__all__ = ["risk_estimate_figure", "ESTIMATOR_LABELS", "RHAT_LABELS"]

ESTIMATOR_LABELS = {"loo": "leave-one-out", "kfold": "K-fold CV", "empirical": "empirical risk",
                    "rhat": "R_hat", "boot632": ".632 bootstrap", "boot632plus": ".632+ bootstrap"}
#: The legend of R_hat under each ``study.rhat_method``.
RHAT_LABELS = {"nedelko_worst_case": "R_hat (emp. + worst-case bias)", "vc_halfplane": "R_hat (emp. + VC bound)",
               "oracle_mean_curve": "R_hat (oracle: mean curve)",
               "oracle_conditional_max": "R_hat (oracle: conditional max)"}


#: Estimates in two panels each (at most five series per panel).
PANEL_GROUPS = (("loo", "kfold", "empirical"), ("rhat", "boot632", "boot632plus"))


def risk_estimate_figure(summary: pd.DataFrame, sample_size: int, K: int = 5, rhat_method: str = "nedelko_worst_case",
                         tie_rule: str = "random"):
    """Nedelko's Figure 3 for one N, as small multiples: top, the mean true risk and the mean
    estimates against R0; bottom, the mean Delta0 of each estimate against R0 (error bars: 95%,
    +-1.96 Monte Carlo SE). Columns: the resampling estimates and the empirical risk; the
    corrected estimates (R_hat, bootstrap)."""
    labels = {**ESTIMATOR_LABELS, "rhat": RHAT_LABELS.get(rhat_method, "R_hat")}
    present = list(dict.fromkeys(summary["estimator"]))
    groups = [[e for e in group if e in present] for group in PANEL_GROUPS]
    groups = [g for g in groups if g] + ([[e for e in present if not any(e in g for g in PANEL_GROUPS)]]
                                         if any(not any(e in g for g in PANEL_GROUPS) for e in present) else [])
    style = series_style(present)
    fig, axes = panel_grid(2, len(groups), width=4.6, height=3.2, sharey="row")
    truth = summary.groupby("bayes_error")[["mean_true_risk", "mean_true_risk_se"]].first()
    for j, group in enumerate(groups):
        top, bottom = axes[0, j], axes[1, j]
        top.plot(truth.index, truth["mean_true_risk"], "k-", lw=2.2, label="mean true risk")
        top.plot(truth.index, truth.index, color="grey", ls=":", label="Bayes error R0")
        for est in group:
            g = summary[summary["estimator"] == est].sort_values("bayes_error")
            label = labels.get(est, est).replace("K-fold", f"{K}-fold")
            mean_bars(top, g["bayes_error"], g["mean_estimate"], g["mean_estimate_se"], label=label, **style[est])
            mean_bars(bottom, g["bayes_error"], g["mean_delta0"], g["mean_delta0_se"], label=label, **style[est])
        bottom.set_xlabel("Bayes error R0")
    axes[0, 0].set_ylabel("mean over samples")
    axes[1, 0].set_ylabel("mean Delta0(estimate, true risk)")
    titles = [f"N = {sample_size}: {'resampling and empirical' if j == 0 else 'corrected estimates'}"
              if j < 2 else "other estimates" for j in range(len(groups))] + [""] * len(groups)
    return finish(fig, axes, titles, ncol=4,
                  caption=f"Fisher's discriminant, threshold ties: {tie_rule}. Error bars: +-1.96 Monte Carlo SE.")
