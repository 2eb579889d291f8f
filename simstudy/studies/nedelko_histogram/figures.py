"""Figure 4 of Nedelko's paper for the nedelko_histogram study."""
from __future__ import annotations

import numpy as np
import pandas as pd

from simstudy.report.figures import plt

__all__ = ["histogram_scatter_figure"]

_LABELS = {"loo": "leave-one-out", "kfold": "K-fold CV", "empirical": "empirical risk"}


def histogram_scatter_figure(summary: pd.DataFrame, sample_size: int, K: int, cells: int = 3, tie: str = "overall"):
    """Nedelko's Figure 4: mean Delta0 of one estimate against another's, one point per
    distribution of the grid, coloured by its Bayes error; the diagonal marks equal accuracy."""
    wide = summary.pivot(index="distribution", columns="estimator", values="mean_delta0")
    bayes = summary.groupby("distribution")["bayes_error"].first().loc[wide.index]
    pairs = (("loo", "kfold"), ("loo", "empirical"), ("kfold", "empirical"))
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.5), gridspec_kw={"wspace": 0.35})
    for ax, (a, b) in zip(axes, pairs):
        sc = ax.scatter(wide[a], wide[b], c=bayes, s=12, cmap="viridis")
        values = wide[[a, b]].to_numpy()
        top = float(np.nanmax(values[np.isfinite(values)]))
        ax.plot([0, top], [0, top], color="grey", ls=":")
        ax.set_xlabel(f"mean Delta0, {_LABELS[a].replace('K-fold', f'{K}-fold')}")
        ax.set_ylabel(f"mean Delta0, {_LABELS[b].replace('K-fold', f'{K}-fold')}")
        ax.grid(True, alpha=0.3)
    fig.colorbar(sc, ax=axes, label="Bayes error of the distribution", shrink=0.85)
    fig.suptitle(f"Histogram classifier, exact: {cells} cells, N = {sample_size}, K = {K}, ties: {tie}; one point per "
                 "distribution", fontsize=10)
    fig.text(0.45, -0.02, "Exact expectations over samples (no Monte Carlo error, hence no error bars); dotted: "
                          "equal accuracy.", ha="center", va="top", fontsize=7, style="italic")
    return fig
