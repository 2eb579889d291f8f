"""Figures of the rho_hat study: size and power of every procedure against n, and the true rho
against the estimated rho_hat."""
from __future__ import annotations

from functools import partial

import pandas as pd

from simstudy.report.figures import finish, mean_bars, panel_grid, rate_bars, size_axis

__all__ = ["FAMILIES", "STYLE", "family_axes", "rho_axes", "rho_hat_figures", "size_power_figure"]

#: Colour, marker, line style per procedure.
STYLE = {
    "rho_hat=0": ("tab:blue", "^", "--"), "rho_hat=0.7": ("tab:cyan", "<", ":"),
    "nadeau_bengio": ("tab:brown", "P", ":"), "subsample_rho": ("tab:red", "o", "-"),
    "subsample_variance": ("tab:orange", "s", "-"), "subsample_rho_satt": ("tab:pink", "o", "--"), "cv_clt": ("tab:purple", "D", "--"),
    "nested_cv": ("black", "X", "-."), "oracle_rho": ("tab:gray", ".", ":"),
}


#: Procedures grouped into families of at most 4 (the house limit is 5 series per panel); the oracle
#: (true rho) is drawn in every size panel as the reference a perfect rho_hat would reach.
FAMILIES = {
    "fixed rho_hat": ("rho_hat=0", "rho_hat=0.7", "nadeau_bengio"),
    "subsample (new)": ("subsample_rho", "subsample_rho_satt", "subsample_variance"),
    "other intervals": ("cv_clt", "nested_cv"),
}
REFERENCE = "oracle_rho"


def family_axes(size_axes, power_axes, tests: pd.DataFrame, alpha: float) -> None:
    """Size (one panel per family in ``size_axes``) and power (``power_axes``) against n.

    Every point is a rate with its 95% Wilson interval (:func:`rate_bars`), x ticked at the sizes
    run (:func:`size_axis`); the size panels carry the goal band alpha +- 1 point and the oracle.
    """
    sizes = sorted(tests["n"].unique())
    for family, ax_size, ax_power in zip(FAMILIES.values(), size_axes, power_axes):
        for proc in (*family, REFERENCE):
            frame = tests[tests["procedure"] == proc].sort_values("n")
            if frame.empty:
                continue
            color, marker, line = STYLE.get(proc, ("k", ".", "-"))
            style = dict(color=color, marker=marker, linestyle=line, linewidth=1, label=proc)
            rate_bars(ax_size, frame["n"], frame["size"], frame["size_low"], frame["size_high"], **style)
            if proc != REFERENCE:
                rate_bars(ax_power, frame["n"], frame["power"], frame["power_low"], frame["power_high"], **style)
        ax_size.axhspan(100 * alpha - 1, 100 * alpha + 1, color="green", alpha=0.12, label="goal: alpha +- 1 point")
        ax_size.axhline(100 * alpha, color="k", linewidth=0.8)
        for ax in (ax_size, ax_power):
            size_axis(ax, sizes, label="n")
    for group in (size_axes, power_axes):   # one y scale per quantity: panels compare at a glance
        top = max(ax.get_ylim()[1] for ax in group)
        for ax in group:
            ax.set_ylim(0, top)
    size_axes[0].set_ylabel("size (%)")
    power_axes[0].set_ylabel("power (%)")


def rho_axes(ax, summary: pd.DataFrame, tests: pd.DataFrame) -> None:
    """The true rho(n) (+-1.96 MC se) against the mean and median subsample rho_hat and the fixed rho_hats."""
    s = summary.sort_values("n")
    mean_bars(ax, s["n"], s["rho"], s["rho_se"], scale=100, color="k", marker="o", label="true rho(n)")
    ax.plot(s["n"], 100 * s["subsample_rho_mean"], color="tab:red", marker="o", label="subsample rho_hat (mean)")
    ax.plot(s["n"], 100 * s["subsample_rho_median"], color="tab:red", marker="o", linestyle=":",
            label="subsample rho_hat (median)")
    nb = tests[tests["procedure"] == "nadeau_bengio"]["rho_hat_mean"]
    if len(nb):
        ax.axhline(100 * float(nb.iloc[0]), color="tab:brown", linestyle=":", label="Nadeau-Bengio rho")
    ax.axhline(70, color="tab:cyan", linestyle=":", label="rho_hat = 0.7")
    size_axis(ax, s["n"], label="n")
    ax.set_ylabel("rho (%)")


def rho_hat_figures(summary: pd.DataFrame, tests: pd.DataFrame, alpha: float, title: str) -> dict:
    """size_power_vs_n (:func:`size_power_figure`) as a figure maker
    (:func:`simstudy.report.figures.draw_figure`)."""
    return {"size_power_vs_n": partial(size_power_figure, summary, tests, alpha, title)}


def size_power_figure(summary: pd.DataFrame, tests: pd.DataFrame, alpha: float, title: str):
    """Top row size (one panel per family) and rho, bottom row power (the same families)."""
    families = list(FAMILIES)
    fig, axes = panel_grid(2, len(families) + 1, width=3.4, height=2.8)
    family_axes(axes[0, :len(families)], axes[1, :len(families)], tests, alpha)
    rho_axes(axes[0, -1], summary, tests)
    axes[1, -1].set_visible(False)
    panels = list(axes[0]) + list(axes[1, :len(families)])
    titles = ([f"{title}: size, {f}" for f in families] + ["rho"] + [f"power, {f}" for f in families])
    return finish(fig, panels, titles, ncol=5, legend_size=7)
