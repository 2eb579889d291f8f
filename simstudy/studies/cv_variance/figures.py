"""Figures of the cv_variance study: rho against n, type-I error against n and against rho_hat."""
from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from simstudy.report.figures import finish, mean_bars, paper_points, plt, rate_bars, size_axis
from simstudy.report.paper import grandvalet_bengio_table2

__all__ = ["cv_variance_figures", "plot_learning_curve", "plot_rho_vs_n", "plot_type1_vs_n", "plot_type1_vs_rho_hat",
           "plot_error_vs_parameter", "sweep_figures"]


def _paper(dataset: str | None) -> pd.DataFrame | None:
    return grandvalet_bengio_table2(dataset) if dataset else None


def plot_rho_vs_n(summary: pd.DataFrame, dataset: str | None = None, label: str = ""):
    """rho (%) against n with 95% error bars (1.96 standard errors), paper points beside."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for K, g in summary.groupby("K"):
        mean_bars(ax, g["n"], g["rho"], g["rho_se"], scale=100, marker="o", label=f"simstudy, K={K}")
    paper = _paper(dataset)
    if paper is not None:
        paper_points(ax, paper["n"], paper["rho_percent"], label="Grandvalet & Bengio (2006), Table 2")
    size_axis(ax, summary["n"], label="training-set size n")
    ax.set_ylabel("between-block correlation rho (%)")
    return finish(fig, ax, f"rho = 1 - E[theta3]/Var(mu_hat) {label}",
                  caption="Error bars: +-1.96 Monte Carlo SE (delta method).")


def plot_type1_vs_n(tests: pd.DataFrame, alpha: float, dataset: str | None = None, rho_hats=(0.0, 0.7),
                    label: str = ""):
    """Type-I error (%) against n for the given rho_hat values, Wilson 95% bars, paper points."""
    fig, ax = plt.subplots(figsize=(6, 4))
    paper = _paper(dataset)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    with_paper = False
    for i, rho_hat in enumerate(rho_hats):
        g = tests[(tests["test"] == "cv_t") & ((tests["rho_hat"] - rho_hat).abs() < 1e-9)]
        if g.empty:
            continue
        rate_bars(ax, g["n"], g["rejection_rate"], g["ci_low"], g["ci_high"], marker="o",
                  color=colours[i % len(colours)], label=f"simstudy, rho_hat={rho_hat:g}")
        col = "type1_rho_hat_0_percent" if rho_hat == 0 else f"type1_rho_hat_{rho_hat:g}_percent"
        if paper is not None and col in paper:
            paper_points(ax, paper["n"], paper[col], color=colours[i % len(colours)],
                         label=f"paper, rho_hat={rho_hat:g}")
            with_paper = True
    ax.axhline(100 * alpha, color="grey", ls=":", label=f"nominal {100 * alpha:g}%")
    size_axis(ax, tests["n"], label="training-set size n")
    ax.set_ylabel("type-I error (%)")
    caption = "Error bars: 95% Wilson intervals."
    if with_paper:  # the squares are named only where they are drawn
        caption = "Open squares: Grandvalet & Bengio (2006), Table 2. " + caption
    return finish(fig, ax, f"Two-sided CV t-test of H0: mu = mu_true {label}", caption=caption)


def plot_type1_vs_rho_hat(tests: pd.DataFrame, alpha: float, label: str = ""):
    """Type-I error (%) against the assumed rho_hat, one line per n."""
    t = tests[tests["test"] == "cv_t"]
    sizes = sorted(t["n"].unique())
    groups = [sizes[i:i + 4] for i in range(0, len(sizes), 4)]  # at most 4 sizes (+ nominal) per panel
    fig, axes = plt.subplots(1, len(groups), figsize=(4.6 * len(groups), 3.8), squeeze=False, sharey=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, group in zip(axes[0], groups):
        for n in group:
            g = t[t["n"] == n].sort_values("rho_hat")
            rate_bars(ax, g["rho_hat"], g["rejection_rate"], g["ci_low"], g["ci_high"], marker=".",
                      color=colours[sizes.index(n) % len(colours)], label=f"n = {n}")
        ax.axhline(100 * alpha, color="grey", ls=":", label=f"nominal {100 * alpha:g}%")
        ax.set_xlabel("assumed between-block correlation rho_hat")
    axes[0][0].set_ylabel("type-I error (%)")
    return finish(fig, axes[0], [f"Type-I error against rho_hat {label}"] + [""] * (len(groups) - 1),
                  caption="Error bars: 95% Wilson intervals.", ncol=5)


def plot_learning_curve(summary: pd.DataFrame, loss: str = "loss", label: str = ""):
    """Learning curve: the CV estimate and the fold models' true error against n.

    Lines: the mean of mu_hat and of the true error (when the run has the truth) with their
    Monte Carlo 95% bands (1.96 standard errors of the mean over replicates); light bands: the
    spread across training sets, the 5%-95% quantiles of mu_hat (and of the true error).
    """
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    s = summary.sort_values("n")
    curves = [("mu_hat", "CV estimate mu_hat", "tab:blue")]
    if "true_error_mean" in s and s["true_error_mean"].notna().any():
        curves.append(("true_error", "true error of the fold models", "tab:red"))
    for prefix, name, colour in curves:
        mean, se = s[f"{prefix}_mean"], s[f"{prefix}_se"]
        ax.plot(s["n"], mean, marker="o", color=colour, label=f"mean {name}")
        ax.fill_between(s["n"], mean - 1.96 * se, mean + 1.96 * se, color=colour, alpha=0.35, linewidth=0,
                        label="Monte Carlo 95% band of the mean")
        if f"{prefix}_q05" in s:
            ax.fill_between(s["n"], s[f"{prefix}_q05"], s[f"{prefix}_q95"], color=colour, alpha=0.1,
                            linewidth=0, label=f"{name}: 5%-95% across training sets")
    size_axis(ax, s["n"], label="training-set size n")
    ax.set_ylabel(f"expected {loss} loss")
    return finish(fig, ax, f"Learning curve {label}", legend_size=7, ncol=2,
                  caption="Dark bands: 95% Monte Carlo intervals of the means (+-1.96 SE); light bands: 5%-95% "
                          "of the estimates across training sets.")


def cv_variance_figures(summary: pd.DataFrame, tests: pd.DataFrame, alpha: float, dataset: str | None = None,
                        label: str = "", loss: str = "loss") -> dict:
    """All figures of the cv_variance study by file stem, as figure makers (functions of no
    argument drawing the figure: :func:`simstudy.report.figures.draw_figure`)."""
    return {"rho_vs_n": partial(plot_rho_vs_n, summary, dataset, label),
            "type1_vs_n": partial(plot_type1_vs_n, tests, alpha, dataset, label=label),
            "type1_vs_rho_hat": partial(plot_type1_vs_rho_hat, tests, alpha, label),
            "learning_curve": partial(plot_learning_curve, summary, loss, label)}


def plot_error_vs_parameter(summary: pd.DataFrame, parameter: str):
    """Mean CV estimate (solid) and mean true error (dashed) against a swept numeric parameter
    (e.g. population.label_noise: the noise curve), one colour per n, Monte Carlo 95% bars."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (n, g) in enumerate(summary.groupby("n", sort=True)):
        g = g.sort_values(parameter)
        c = colours[i % len(colours)]
        mean_bars(ax, g[parameter], g["mu_hat_mean"], g["mu_hat_se"], marker="o", color=c, label=f"mu_hat, n={n}")
        if "true_error_mean" in g and g["true_error_mean"].notna().any():
            mean_bars(ax, g[parameter], g["true_error_mean"], g["true_error_se"], marker="s", ls="--", mfc="none",
                      color=c, label=f"true error, n={n}")
    ax.set_xlabel(parameter)
    ax.set_ylabel("mean loss")
    return finish(fig, ax, f"CV estimate and true error against {parameter}", legend_size=7,
                  caption="Error bars: +-1.96 Monte Carlo SE.")


def _sweep_label(row: pd.Series, keys: list[str]) -> str:
    return ", ".join(f"{k}={row[k]}" for k in keys) or "all runs"


def _series(frame: pd.DataFrame, keys: list[str]):
    """(label, rows) per setting of ``keys`` (one series, "all runs", without keys)."""
    if not keys:
        return [(_sweep_label(frame.iloc[0], keys), frame)] if len(frame) else []
    return [(_sweep_label(g.iloc[0], keys), g) for _, g in frame.groupby(keys, dropna=False, sort=True)]


def _left_out_caption(caption: str, left_out: list[str]) -> str:
    return caption + (f" Left out: {'; '.join(left_out)}." if left_out else "")


def sweep_figures(summary: pd.DataFrame, tests: pd.DataFrame | None, parameters: list[str]) -> dict:
    """rho against n and the type-I error against rho_hat, one colour per swept setting.

    The sizes are pooled across runs: a series is a setting of the parameters other than the
    sizes (``*.sizes``), its points every n its runs computed, in order of n. The type-I error is
    drawn at each setting's largest n. A setting without a finite value is named in the caption
    as left out, never dropped silently.
    """
    out = {}
    keys = [k for k in parameters if k in summary and summary[k].nunique(dropna=False) > 1
            and not k.endswith(".sizes")]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    left_out = []
    for label, g in _series(summary, keys):
        if not np.isfinite(pd.to_numeric(g["rho"], errors="coerce")).any():
            left_out.append(f"{label} (no finite rho)")
            continue
        mean_bars(ax, g["n"], g["rho"], g["rho_se"], scale=100, marker="o", label=label)
    size_axis(ax, summary["n"], label="training-set size n")
    ax.set_ylabel("rho (%)")
    out["rho_vs_n"] = finish(fig, ax, "Between-block correlation across the sweep", legend_size=7,
                             caption=_left_out_caption("Error bars: +-1.96 Monte Carlo SE (delta method).", left_out))
    if tests is not None and "rho_hat" in tests:
        out["type1_vs_rho_hat"] = _sweep_type1_vs_rho_hat(tests, keys)
    for parameter in parameters:   # noise curves and the like: error against a swept numeric setting
        if parameter in summary and not parameter.endswith(".sizes") and summary[parameter].nunique() > 1 \
                and pd.api.types.is_numeric_dtype(summary[parameter]):
            out[f"error_vs_{parameter.split('.')[-1]}"] = plot_error_vs_parameter(summary, parameter)
    return out


def _sweep_type1_vs_rho_hat(tests: pd.DataFrame, keys: list[str]):
    """The CV t-test's rejection rate against rho_hat, per setting at its largest n."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    t = tests[tests["test"] == "cv_t"] if "test" in tests else tests
    drawn, left_out = [], []
    for label, g in _series(t, keys):
        g = g[g["n"] == g["n"].max()]
        if np.isfinite(pd.to_numeric(g["rejection_rate"], errors="coerce")).any():
            drawn.append((label, g))
        else:
            left_out.append(f"{label} (no finite rejection rate)")
    largest = [int(g["n"].iloc[0]) for _, g in drawn]
    for label, g in drawn:
        rate_bars(ax, g["rho_hat"], g["rejection_rate"], g["ci_low"], g["ci_high"], marker=".",
                  label=label if len(set(largest)) == 1 else f"{label}, n={g['n'].iloc[0]}")
    alpha = float(t["alpha"].iloc[0])
    ax.axhline(100 * alpha, color="grey", ls=":", label=f"nominal {100 * alpha:g}%")
    ax.set_xlabel("assumed rho_hat")
    ax.set_ylabel("rejection rate (%)")
    at = f"n = {largest[0]}" if len(set(largest)) == 1 else "each setting's largest n"
    return finish(fig, ax, f"Type-I error against rho_hat ({at})", legend_size=7,
                  caption=_left_out_caption("Error bars: 95% Wilson intervals.", left_out))
