"""Figures of Nedelko's risk-estimate studies (matplotlib, PNG)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from simstudy.report.figures import finish_figure  # noqa: E402

__all__ = ["risk_estimate_figure", "ESTIMATOR_LABELS"]

ESTIMATOR_LABELS = {"loo": "leave-one-out", "kfold": "K-fold CV", "empirical": "empirical risk",
                    "rhat": "R_hat (emp. + bias corr.)", "boot632": ".632 bootstrap", "boot632plus": ".632+ bootstrap"}


def risk_estimate_figure(summary: pd.DataFrame, path: Path, sample_size: int, K: int = 5) -> Path:
    """Nedelko's Figure 3 for one N: left, mean true risk and mean estimates against R0;
    right, mean Delta0 of each estimate against R0 (error bars: 1.96 Monte Carlo SE)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    truth = summary.groupby("bayes_error")["mean_true_risk"].first()
    left.plot(truth.index, truth.values, "k-", lw=2.5, label="mean true risk")
    left.plot(truth.index, truth.index, color="grey", ls=":", label="Bayes error R0")
    for est, g in summary.groupby("estimator", sort=False):
        label = ESTIMATOR_LABELS.get(est, est).replace("K-fold", f"{K}-fold")
        left.plot(g["bayes_error"], g["mean_estimate"], marker=".", label=label)
        right.errorbar(g["bayes_error"], g["mean_delta0"], yerr=1.96 * g["mean_delta0_se"].fillna(0),
                       marker=".", capsize=2, label=label)
    left.set_xlabel("Bayes error R0")
    left.set_ylabel("mean over samples")
    right.set_xlabel("Bayes error R0")
    right.set_ylabel("mean Delta0(estimate, true risk)")
    return finish_figure(fig, [left, right], path, [f"Mean risk and mean estimates, N = {sample_size}",
                                                    f"Mean error Delta0 of each estimate, N = {sample_size}"], 7)


def histogram_scatter_figure(summary: pd.DataFrame, path: Path, sample_size: int, K: int) -> Path:
    """Nedelko's Figure 4: mean Delta0 of one estimate against another's, one point per
    distribution of the grid, coloured by its Bayes error; the diagonal marks equal accuracy."""
    path.parent.mkdir(parents=True, exist_ok=True)
    wide = summary.pivot(index="distribution", columns="estimator", values="mean_delta0")
    bayes = summary.groupby("distribution")["bayes_error"].first().loc[wide.index]
    pairs = (("loo", "kfold"), ("loo", "empirical"), ("kfold", "empirical"))
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.5), gridspec_kw={"wspace": 0.35})
    for ax, (a, b) in zip(axes, pairs):
        sc = ax.scatter(wide[a], wide[b], c=bayes, s=12, cmap="viridis")
        top = float(np.nanmax(wide[[a, b]].to_numpy()[np.isfinite(wide[[a, b]].to_numpy())]))
        ax.plot([0, top], [0, top], color="grey", ls=":")
        name = lambda e: ESTIMATOR_LABELS[e].replace("K-fold", f"{K}-fold")
        ax.set_xlabel(f"mean Delta0, {name(a)}")
        ax.set_ylabel(f"mean Delta0, {name(b)}")
        ax.grid(True, alpha=0.3)
    fig.colorbar(sc, ax=axes, label="Bayes error of the distribution", shrink=0.85)
    fig.suptitle(f"Histogram classifier, exact: 3 cells, N = {sample_size}, K = {K}; one point per distribution",
                 fontsize=10)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    plt.close(fig)
    return path
