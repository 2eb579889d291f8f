"""Figures of the cv_variance study (matplotlib, PNG)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from simstudy.report.paper import grandvalet_bengio_table2  # noqa: E402

__all__ = ["finish_figure", "plot_rho_vs_n", "plot_type1_vs_n", "plot_type1_vs_rho_hat", "cv_variance_figures"]


def _paper(dataset: str | None) -> pd.DataFrame | None:
    return grandvalet_bengio_table2(dataset) if dataset else None


def finish_figure(fig, axes, path: Path, titles=None, legend_size: int = 8) -> Path:
    """Titles, grids and legends on ``axes``; save ``fig`` as a 130-dpi PNG and close it."""
    axes = axes if isinstance(axes, (list, tuple, np.ndarray)) else [axes]
    titles = titles if isinstance(titles, (list, tuple)) else [titles] * len(axes)
    for ax, title in zip(axes, titles):
        if title:
            ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=legend_size)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def _finish(fig, ax, path: Path, title: str) -> Path:
    return finish_figure(fig, ax, path, title)


def plot_rho_vs_n(summary: pd.DataFrame, path: Path, dataset: str | None = None, label: str = "") -> Path:
    """rho (%) against n with 95% error bars (1.96 standard errors), paper points beside."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for K, g in summary.groupby("K"):
        ax.errorbar(g["n"], 100 * g["rho"], yerr=196 * g["rho_se"], marker="o", capsize=3,
                    label=f"simstudy, K={K}")
    paper = _paper(dataset)
    if paper is not None:
        ax.plot(paper["n"], paper["rho_percent"], "s--", color="black", mfc="none",
                label="Grandvalet & Bengio (2006)")
    ax.set_xscale("log")
    ax.set_xlabel("training-set size n")
    ax.set_ylabel("between-block correlation rho (%)")
    return _finish(fig, ax, path, f"rho = 1 - E[theta3]/Var(mu_hat) {label}")


def plot_type1_vs_n(tests: pd.DataFrame, path: Path, alpha: float, dataset: str | None = None,
                    rho_hats=(0.0, 0.7), label: str = "") -> Path:
    """Type-I error (%) against n for the given rho_hat values, Wilson 95% bars, paper points."""
    fig, ax = plt.subplots(figsize=(6, 4))
    paper = _paper(dataset)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, rho_hat in enumerate(rho_hats):
        g = tests[(tests["test"] == "cv_t") & ((tests["rho_hat"] - rho_hat).abs() < 1e-9)]
        if g.empty:
            continue
        rate = 100 * g["rejection_rate"]
        err = np.clip(np.vstack([rate - 100 * g["ci_low"], 100 * g["ci_high"] - rate]), 0, None)
        ax.errorbar(g["n"], rate, yerr=err, marker="o", capsize=3, color=colours[i % len(colours)],
                    label=f"simstudy, rho_hat={rho_hat:g}")
        col = "type1_rho_hat_0_percent" if rho_hat == 0 else f"type1_rho_hat_{rho_hat:g}_percent"
        if paper is not None and col in paper:
            ax.plot(paper["n"], paper[col], "s--", mfc="none", color=colours[i % len(colours)],
                    label=f"paper, rho_hat={rho_hat:g}")
    ax.axhline(100 * alpha, color="grey", ls=":", label=f"nominal {100 * alpha:g}%")
    ax.set_xscale("log")
    ax.set_xlabel("training-set size n")
    ax.set_ylabel("type-I error (%)")
    return _finish(fig, ax, path, f"Two-sided CV t-test of H0: mu = mu_true {label}")


def plot_type1_vs_rho_hat(tests: pd.DataFrame, path: Path, alpha: float, label: str = "") -> Path:
    """Type-I error (%) against the assumed rho_hat, one line per n."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for n, g in tests[tests["test"] == "cv_t"].groupby("n"):
        rate = 100 * g["rejection_rate"]
        err = np.clip(np.vstack([rate - 100 * g["ci_low"], 100 * g["ci_high"] - rate]), 0, None)
        ax.errorbar(g["rho_hat"], rate, yerr=err, marker=".", capsize=2, label=f"n={n}")
    ax.axhline(100 * alpha, color="grey", ls=":", label=f"nominal {100 * alpha:g}%")
    ax.set_xlabel("assumed between-block correlation rho_hat")
    ax.set_ylabel("type-I error (%)")
    return _finish(fig, ax, path, f"Type-I error of the rho_hat-corrected t-test {label}")


def cv_variance_figures(summary: pd.DataFrame, tests: pd.DataFrame, directory: Path, alpha: float,
                        dataset: str | None = None, label: str = "") -> list[Path]:
    """All figures of the cv_variance study, written to ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    return [
        plot_rho_vs_n(summary, directory / "rho_vs_n.png", dataset, label),
        plot_type1_vs_n(tests, directory / "type1_vs_n.png", alpha, dataset, label=label),
        plot_type1_vs_rho_hat(tests, directory / "type1_vs_rho_hat.png", alpha, label),
    ]
