"""Figures of the rho_hat study: size and power of every procedure against n, and the true rho
against the estimated rho_hat."""
from __future__ import annotations

import numpy as np
import pandas as pd

from simstudy.report.figures import plt, style_axes

__all__ = ["rho_hat_figures", "STYLE"]

#: Colour, marker, line style per procedure.
STYLE = {
    "rho_hat=0": ("tab:blue", "^", "--"), "rho_hat=0.7": ("tab:cyan", "<", ":"),
    "nadeau_bengio": ("tab:brown", "P", ":"), "subsample_rho": ("tab:red", "o", "-"),
    "subsample_variance": ("tab:orange", "s", "-"), "subsample_rho_satt": ("tab:pink", "o", "--"), "cv_clt": ("tab:purple", "D", "--"),
    "nested_cv": ("black", "X", "-."), "oracle_rho": ("tab:gray", ".", "-"),
}


def _line(ax, frame: pd.DataFrame, column: str, proc: str) -> None:
    color, marker, style = STYLE.get(proc, ("k", ".", "-"))
    frame = frame.sort_values("n")
    yerr = np.clip(np.vstack([frame[column] - frame[f"{column}_low"], frame[f"{column}_high"] - frame[column]]) * 100,
                   0, None)
    ax.errorbar(frame["n"], frame[column] * 100, yerr=yerr, color=color, marker=marker, linestyle=style,
                markersize=4, capsize=2, label=proc, linewidth=2 if proc.startswith("subsample") else 1)


def size_power_axes(axes, summary: pd.DataFrame, tests: pd.DataFrame, alpha: float) -> None:
    """Draw size (axes[0]), power (axes[1]) and rho (axes[2]) against n."""
    for proc, frame in tests.groupby("procedure", sort=False):
        _line(axes[0], frame, "size", proc)
        if proc != "oracle_rho":
            _line(axes[1], frame, "power", proc)
    axes[0].axhspan(100 * alpha - 1, 100 * alpha + 1, color="green", alpha=0.12, label="goal: alpha +- 1 point")
    axes[0].axhline(100 * alpha, color="k", linewidth=1)
    axes[0].set_ylabel("size (%): rejections of a true H0")
    axes[1].set_ylabel("power (%) at mu_true +- shift sd(mu_hat)")
    s = summary.sort_values("n")
    axes[2].errorbar(s["n"], 100 * s["rho"], yerr=200 * s["rho_se"], color="k", marker="o", label="true rho(n)",
                     capsize=2)
    axes[2].plot(s["n"], 100 * s["subsample_rho_mean"], color="tab:red", marker="o", label="subsample rho_hat (mean)")
    axes[2].plot(s["n"], 100 * s["subsample_rho_median"], color="tab:red", marker="o", linestyle=":",
                 label="subsample rho_hat (median)")
    nb = tests[tests["procedure"] == "nadeau_bengio"]["rho_hat_mean"]
    if len(nb):
        axes[2].axhline(100 * float(nb.iloc[0]), color="tab:brown", linestyle=":", label="Nadeau-Bengio rho")
    axes[2].axhline(70, color="tab:cyan", linestyle=":", label="rho_hat = 0.7")
    axes[2].set_ylabel("rho (%)")
    sizes = sorted(summary["n"].unique())
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(n) for n in sizes])
        ax.minorticks_off()
        ax.set_xlabel("n")


def rho_hat_figures(summary: pd.DataFrame, tests: pd.DataFrame, alpha: float, title: str) -> dict:
    """size_power_vs_n: size, power and rho against n (one row of three panels)."""
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    size_power_axes(list(axes), summary, tests, alpha)
    return {"size_power_vs_n": style_axes(fig, list(axes), [f"size, {title}", "power", "rho"], legend_size=6)}
