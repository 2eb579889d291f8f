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


def _line(ax, frame: pd.DataFrame, x: str, y: str, proc: str, low: str | None = None, high: str | None = None):
    color, marker, style = _STYLE.get(proc, ("k", ".", "-"))
    frame = frame.sort_values(x)
    yerr = None
    if low and high:
        yerr = np.clip(np.vstack([frame[y] - frame[low], frame[high] - frame[y]]) * 100, 0, None)
    ax.errorbar(frame[x], frame[y] * 100, yerr=yerr, color=color, marker=marker, linestyle=style, markersize=4,
                capsize=2, label=proc)


def cv_clt_figures(summary: pd.DataFrame, tests: pd.DataFrame, alpha: float,
                   stability: pd.DataFrame | None = None) -> dict:
    """coverage_vs_n, coverage_full_vs_n, width_vs_n, (with comparisons) size_power_vs_n and
    (given the loss-stability table) loss_stability_vs_n."""
    out = {}
    if stability is not None and len(stability) and (stability["kind"] == "learner").any():
        out["loss_stability_vs_n"] = _stability_figure(summary, stability, alpha)
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
                _line(ax, frame, "n", "mean_width", proc)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("n")
            ax.set_ylabel("mean interval width (percentage points)")
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


def _stability_figure(summary: pd.DataFrame, stability: pd.DataFrame, alpha: float):
    """Left: n Var(R_hat - R_n) / E[sigma_hat^2] against n per learner (bands: +-1.96 delta-method
    SE). Right: the CV CLT (all-pairs) coverage of R_n with its Wilson interval against the
    coverage 2 Phi(z / sqrt(ratio)) - 1 that the ratio alone predicts."""
    fig, axes = _panels(2, width=5.6)
    learners = stability[stability["kind"] == "learner"]
    colors = dict(zip(dict.fromkeys(learners["subject"]), plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for name, frame in learners.groupby("subject", sort=False):
        frame = frame.sort_values("n")
        color = colors[name]
        for column, style in (("ratio_out", "-"), ("ratio_in", ":")):
            label = f"{name}: all-pairs sigma_hat" if column == "ratio_out" else f"{name}: within-fold sigma_hat"
            axes[0].plot(frame["n"], frame[column], color=color, linestyle=style, marker="o", markersize=3,
                         label=label)
            half = 1.96 * frame[f"{column}_se"]
            axes[0].fill_between(frame["n"], frame[column] - half, frame[column] + half, color=color, alpha=0.15,
                                 linewidth=0)
        cov = summary[(summary["subject"] == name) & (summary["procedure"] == "cv_clt_all_pairs")].sort_values("n")
        err = np.clip(np.vstack([cov["coverage"] - cov["coverage_low"], cov["coverage_high"] - cov["coverage"]]),
                      0, None) * 100
        axes[1].errorbar(cov["n"], cov["coverage"] * 100, yerr=err, color=color, marker="o", markersize=3,
                         capsize=2, linestyle="-", label=f"{name}: observed")
        axes[1].plot(frame["n"], frame["normal_coverage_out"] * 100, color=color, linestyle="--",
                     label=f"{name}: 2 Phi(z / sqrt(ratio)) - 1")
    axes[0].axhline(1, color="k", linewidth=1, label="stable loss (ratio 1)")
    axes[0].set_ylabel("n Var(R_hat - R_n) / E[sigma_hat^2]")
    axes[1].axhline(100 * (1 - alpha), color="k", linewidth=1, label="nominal")
    axes[1].set_ylabel("CV CLT (all-pairs) coverage of R_n (%)")
    sizes = sorted(learners["n"].unique())
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.set_xlabel("n")
    return style_axes(fig, axes, ["loss stability (bands: 95% Monte Carlo)", "coverage explained by the ratio"],
                      legend_size=6)
