"""Figures of the cv_clt study, in the layout of Bayle et al. (2020): coverage and width of
intervals against n, size and power of tests against n.

Small multiples: one row per learner (or comparison), one column per family of procedures
(:data:`FAMILIES`: CLT-type intervals, t-type intervals), so that no panel holds more than five
series; the same procedure has the same colour and marker in every panel and figure.
"""
from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from simstudy.report.figures import (finish, mean_bars, panel_grid, plain_log_axis, rate_bars, series_style,
                                     size_axis)

__all__ = ["cv_clt_figures", "FAMILIES"]

#: Procedures grouped into panels: normal-approximation intervals and t-type intervals.
FAMILIES = {
    "CLT-type (Bayle et al., hold-out, nested CV)": ["cv_clt_all_pairs", "cv_clt_within_fold", "holdout_clt",
                                                     "nested_cv"],
    "t-type (CV t, corrected t, 5x2cv)": ["cv_t", "cv_t_rho0.7", "5x2cv_t", "repeated_tv_t", "nadeau_bengio"],
}
_STYLE = series_style([p for family in FAMILIES.values() for p in family])
#: Size / power points from fewer replicates than this (H0 or H1 replicates) are not drawn.
MIN_REPLICATES = 10
_DENOMINATOR = {"size": "h0_replicates", "power": "h1_replicates"}
_LINES = {"holdout_clt": "--", "nested_cv": "-.", "cv_t_rho0.7": ":", "repeated_tv_t": "--"}


def _style(proc: str) -> dict:
    return {**_STYLE.get(proc, {"color": "k", "marker": "."}), "ls": _LINES.get(proc, "-"), "label": proc}


def _families(present) -> list[tuple[str, list[str]]]:
    present = set(present)
    out = [(title, [p for p in procs if p in present]) for title, procs in FAMILIES.items()]
    others = sorted(present - {p for procs in FAMILIES.values() for p in procs})
    if others:
        out.append(("other procedures", others))
    return [(t, p) for t, p in out if p]


def _rate_grid(frame: pd.DataFrame, rows: list[str], row_key: str, proc_key: str, columns: list[tuple[str, str]],
               sizes, reference: float | None, reference_label: str):
    """One row per subject, one column per (rate column, family); rates with Wilson intervals."""
    families = _families(frame[proc_key])
    panels = [(column, ylabel, title, procs) for column, ylabel in columns for title, procs in families]
    fig, axes = panel_grid(len(rows), len(panels), width=3.6, height=2.9)
    for i, subject in enumerate(rows):
        sub = frame[frame[row_key] == subject]
        for j, (column, ylabel, title, procs) in enumerate(panels):
            ax = axes[i, j]
            for proc in procs:
                g = sub[(sub[proc_key] == proc) & sub[column].notna()].sort_values("n")
                if column in _DENOMINATOR:
                    g = g[g[_DENOMINATOR[column]] >= MIN_REPLICATES]
                if len(g):
                    rate_bars(ax, g["n"], g[column], g[f"{column}_low"], g[f"{column}_high"], **_style(proc))
            if reference is not None and column != "power":
                ax.axhline(100 * reference, color="k", lw=0.8, label=reference_label)
            size_axis(ax, sizes, label="training-set size n" if i == len(rows) - 1 else None)
            ax.set_ylabel(f"{subject}\n{ylabel}" if j == 0 else ylabel, fontsize=8)
            heading = f"{ylabel.split(' (')[0]}: {title}" if len(columns) > 1 else title
            ax.set_title(heading if i == 0 else "", fontsize=8)
    return fig, axes


def cv_clt_figures(summary: pd.DataFrame, tests: pd.DataFrame, alpha: float,
                   stability: pd.DataFrame | None = None, rate_loss: bool = True) -> dict:
    """coverage_vs_n, coverage_full_vs_n, width_vs_n, (with comparisons) size_power_vs_n and
    (given the loss-stability table) loss_stability_vs_n, as figure makers
    (:func:`simstudy.report.figures.draw_figure`).

    ``rate_loss``: the loss is a rate in [0, 1] (widths in percentage points); otherwise
    (squared, absolute... losses) widths are shown in the loss's units."""
    out = {}
    if stability is not None and len(stability) and (stability["kind"] == "learner").any():
        out["loss_stability_vs_n"] = partial(_stability_figure, summary, stability, alpha)
    sizes = sorted(summary["n"].unique())
    learners = summary[summary["kind"] == "learner"]
    names = list(dict.fromkeys(learners["subject"]))
    if names:
        for column, fname, ylabel in (("coverage", "coverage_vs_n", "coverage of R_n (%)"),
                                      ("coverage_full", "coverage_full_vs_n", "coverage of Err_XY (%)")):
            out[fname] = partial(_coverage_figure, learners, names, column, ylabel, sizes, alpha)
        out["width_vs_n"] = partial(_width_figure, learners, names, sizes, rate_loss)
    if tests is not None and len(tests):
        out["size_power_vs_n"] = partial(_size_power_figure, tests, sizes, alpha)
    return out


def _coverage_figure(learners: pd.DataFrame, names: list, column: str, ylabel: str, sizes: list, alpha: float):
    """Coverage (``column``) against n: rows learners, columns families of procedures."""
    fig, axes = _rate_grid(learners, names, "subject", "procedure", [(column, ylabel)], sizes, 1 - alpha,
                           f"nominal {100 * (1 - alpha):g}%")
    return finish(fig, axes, caption=f"Coverage of level-{100 * (1 - alpha):g}% intervals; rows: "
                                     "learners. Error bars: 95% Wilson intervals.")


def _width_figure(learners: pd.DataFrame, names: list, sizes: list, rate_loss: bool):
    """Mean interval width against n (log scale): rows learners, columns families of procedures."""
    families = _families(learners["procedure"])
    scale, unit = (100, "points") if rate_loss else (1, "loss units")
    fig, axes = panel_grid(len(names), len(families), width=3.8, height=2.9)
    for i, name in enumerate(names):
        sub = learners[learners["subject"] == name]
        for j, (title, procs) in enumerate(families):
            ax = axes[i, j]
            for proc in procs:
                g = sub[sub["procedure"] == proc].sort_values("n")
                se = g["width_se"] if "width_se" in g else 0 * g["mean_width"]
                mean_bars(ax, g["n"], g["mean_width"], se, scale=scale, **_style(proc))
            size_axis(ax, sizes, label="training-set size n" if i == len(names) - 1 else None)
            ax.set_yscale("log")
            plain_log_axis(ax, "y")
            ax.set_ylabel(f"{name}\nmean width ({unit})" if j == 0 else f"mean width ({unit})", fontsize=8)
            ax.set_title(title if i == 0 else "", fontsize=8)
    return finish(fig, axes, caption=f"Mean width of the intervals in "
                                     f"{'percentage points' if rate_loss else 'loss units'} (log scale); rows: "
                                     "learners. Error bars: +-1.96 Monte Carlo SE (mostly smaller than the markers).")


def _size_power_figure(tests: pd.DataFrame, sizes: list, alpha: float):
    """Size and power of the one-sided tests against n: rows comparisons."""
    comparisons = list(dict.fromkeys(tests["comparison"]))
    fig, axes = _rate_grid(tests, comparisons, "comparison", "test",
                           [("size", "size (%)"), ("power", "power (%)")], sizes, alpha, f"alpha = {alpha:g}")
    caption = ("One-sided tests of \"A better than B\" (rows: A vs B). Size: rejection rate among replicates with "
               "R_n(A) >= R_n(B); power: among those with R_n(A) < R_n(B) (counts in summary.md); points from fewer "
               f"than {MIN_REPLICATES} such replicates are not drawn. Error bars: 95% Wilson intervals.")
    return finish(fig, axes, caption=caption)


def _stability_figure(summary: pd.DataFrame, stability: pd.DataFrame, alpha: float):
    """Left: n Var(R_hat - R_n) / E[sigma_hat^2] against n per learner (error bars: +-1.96
    delta-method SE). Right: the CV CLT (all-pairs) coverage of R_n with its Wilson interval beside
    the coverage 2 Phi(z / sqrt(ratio)) - 1 that the ratio alone predicts."""
    learners = stability[stability["kind"] == "learner"]
    names = list(dict.fromkeys(learners["subject"]))
    colors = series_style(names)
    sizes = sorted(learners["n"].unique())
    fig, axes = panel_grid(1, 2, width=4.6, height=3.4)
    left, right = axes[0]
    for name in names:
        frame = learners[learners["subject"] == name].sort_values("n")
        color = colors[name]["color"]
        mean_bars(left, frame["n"], frame["ratio_out"], frame["ratio_out_se"], color=color, marker="o", ls="-",
                  label=f"{name}")
        cov = summary[(summary["subject"] == name) & (summary["procedure"] == "cv_clt_all_pairs")].sort_values("n")
        rate_bars(right, cov["n"], cov["coverage"], cov["coverage_low"], cov["coverage_high"], color=color,
                  marker="o", ls="-", label=f"{name}")
        right.plot(frame["n"], 100 * frame["normal_coverage_out"], color=color, ls="--", lw=1)
    left.axhline(1, color="k", lw=0.8, label="stable loss (ratio 1)")
    right.axhline(100 * (1 - alpha), color="k", lw=0.8, label=f"nominal {100 * (1 - alpha):g}%")
    right.plot([], [], color="grey", ls="--", lw=1, label="predicted by the ratio: 2 Phi(z/sqrt(ratio)) - 1")
    left.set_ylabel("n Var(R_hat - R_n) / E[sigma_hat^2]", fontsize=8)
    right.set_ylabel("CV CLT (all-pairs) coverage of R_n (%)", fontsize=8)
    for ax in (left, right):
        size_axis(ax, sizes, label="training-set size n")
    caption = ("Loss stability: a ratio above 1 makes the CV CLT interval too narrow by sqrt(ratio). Error bars: "
               "+-1.96 delta-method Monte Carlo SE (left), 95% Wilson intervals (right). All-pairs sigma_hat "
               "(the within-fold ratios are in loss_stability.csv).")
    return finish(fig, [left, right], titles=["loss stability", "coverage explained by the ratio"], caption=caption,
                  ncol=3)
