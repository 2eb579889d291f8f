"""Figures of the cv_clt study, in the layout of Bayle et al. (2020): coverage and width of
intervals against n (one panel per learner), size and power of tests against n."""
from __future__ import annotations

import numpy as np
import pandas as pd

from simstudy.report.figures import plt, style_axes

__all__ = ["cv_clt_figures"]

_STYLE = {
    "cv_clt_all_pairs": ("tab:red", "o", "-"), "cv_clt_within_fold": ("tab:orange", "s", "-"),
    "holdout_clt": ("tab:gray", "v", "--"), "cv_t": ("tab:blue", "^", "--"), "cv_t_rho0.7": ("tab:cyan", "<", ":"),
    "5x2cv_t": ("tab:green", "D", "--"), "repeated_tv_t": ("tab:purple", ">", "--"),
    "nadeau_bengio": ("tab:brown", "P", ":"), "nested_cv": ("black", "X", "-."),
}


def _panels(count: int, width: float = 5.2, height: float = 4.0):
    fig, axes = plt.subplots(1, count, figsize=(width * count, height), squeeze=False)
    return fig, list(axes[0])


def _line(ax, frame: pd.DataFrame, x: str, y: str, proc: str, low: str | None = None, high: str | None = None,
          scale: float = 100):
    color, marker, style = _STYLE.get(proc, ("k", ".", "-"))
    frame = frame.sort_values(x)
    yerr = None
    if low and high:
        yerr = np.clip(np.vstack([frame[y] - frame[low], frame[high] - frame[y]]) * scale, 0, None)
    ax.errorbar(frame[x], frame[y] * scale, yerr=yerr, color=color, marker=marker, linestyle=style, markersize=4,
                capsize=2, label=proc)


def cv_clt_figures(summary: pd.DataFrame, tests: pd.DataFrame, alpha: float, rate_loss: bool = True) -> dict:
    """coverage_vs_n, coverage_full_vs_n, width_vs_n and (with comparisons) size_power_vs_n.

    ``rate_loss``: the loss is a rate in [0, 1] (widths in percentage points); otherwise
    (squared, absolute... losses) widths are shown in the loss's units."""
    out = {}
    learners = summary[summary["kind"] == "learner"]
    names = list(dict.fromkeys(learners["subject"]))
    if names:
        for column, fname, ylabel in (("coverage", "coverage_vs_n", "coverage of R_n (%)"),
                                      ("coverage_full", "coverage_full_vs_n", "coverage of Err_XY (%)")):
            fig, axes = _panels(len(names))
            for ax, name in zip(axes, names):
                for proc, frame in learners[learners["subject"] == name].groupby("procedure", sort=False):
                    _line(ax, frame, "n", column, proc, f"{column}_low", f"{column}_high")
                ax.axhline(100 * (1 - alpha), color="k", linewidth=1, label="nominal")
                ax.set_xscale("log", base=2)
                ax.set_xlabel("n")
                ax.set_ylabel(ylabel)
            out[fname] = style_axes(fig, axes, names, legend_size=6)
        fig, axes = _panels(len(names))
        for ax, name in zip(axes, names):
            for proc, frame in learners[learners["subject"] == name].groupby("procedure", sort=False):
                _line(ax, frame, "n", "mean_width", proc, scale=100 if rate_loss else 1)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("n")
            ax.set_ylabel("mean interval width (percentage points)" if rate_loss else "mean interval width (loss units)")
        out["width_vs_n"] = style_axes(fig, axes, names, legend_size=6)
    if tests is not None and len(tests):
        comparisons = list(dict.fromkeys(tests["comparison"]))
        fig, grid = plt.subplots(len(comparisons), 2, figsize=(10.5, 3.8 * len(comparisons)), squeeze=False)
        axes, titles = [], []
        for row, comp in enumerate(comparisons):
            sub = tests[tests["comparison"] == comp]
            for col, (column, label) in enumerate((("size", "size: rejections when R_n(A) >= R_n(B) (%)"),
                                                   ("power", "power: rejections when R_n(A) < R_n(B) (%)"))):
                ax = grid[row, col]
                for proc, frame in sub.groupby("test", sort=False):
                    _line(ax, frame[frame[column].notna()], "n", column, proc, f"{column}_low", f"{column}_high")
                if column == "size":
                    ax.axhline(100 * alpha, color="k", linewidth=1, label="alpha")
                ax.set_xlim(tests["n"].min() / 1.25, tests["n"].max() * 1.25)   # also when a panel is empty
                ax.set_xscale("log", base=2)
                ax.set_xlabel("n")
                ax.set_ylabel(label, fontsize=8)
                axes.append(ax)
                titles.append(comp)
        out["size_power_vs_n"] = style_axes(fig, axes, titles, legend_size=6)
    return out
