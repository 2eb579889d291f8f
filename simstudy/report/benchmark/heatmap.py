"""The heat map procedure x mechanism: coverage minus nominal, one per estimand.

Each square aggregates the data cells of one procedure and mechanism (every learner, loss and n
the filters leave): its colour is the mean of coverage - nominal on a diverging scale centred at
0 (red: under-coverage, blue: over-coverage), its text the mean coverage. It links to the
drill-down of the *worst* data cell behind it (lowest coverage - nominal). The same numbers come as
a matplotlib figure (SVG) and as an HTML table the page's filters redraw.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd

from simstudy.report.benchmark.scores import cell_slug, scored_cells
from simstudy.report.figures import plt, save_figure

__all__ = ["coverage_grid", "heatmap_figure", "figure_inches", "GAP_SCALE_MIN"]

#: The smallest half-range of the colour scale: a grid whose gaps are all tiny is not painted dark.
GAP_SCALE_MIN = 0.05


def coverage_grid(cells: pd.DataFrame, estimand: str, procedures=None) -> pd.DataFrame:
    """One row per (procedure, mechanism) of the interval cells of ``estimand``.

    Columns: ``procedure``, ``mechanism``, ``coverage`` (mean), ``gap`` (mean coverage - nominal),
    ``cells`` (data cells with a coverage), ``worst_gap`` and ``worst_slug`` (the data cell to
    open). ``procedures`` orders the rows (default: alphabetical).
    """
    frame = scored_cells(cells)
    frame = frame[(frame["kind"] == "interval") & (frame["estimand"] == estimand) & frame["rate"].notna()]
    rows = []
    for (procedure, mechanism), group in frame.groupby(["procedure", "mechanism"], sort=True):
        worst = group.loc[group["gap"].idxmin()]
        rows.append({"procedure": procedure, "mechanism": mechanism, "coverage": group["rate"].mean(),
                     "gap": group["gap"].mean(), "cells": len(group), "worst_gap": worst["gap"],
                     "worst_slug": cell_slug(worst["mechanism"], worst["learner"], worst["loss"], worst["n"])})
    grid = pd.DataFrame(rows, columns=["procedure", "mechanism", "coverage", "gap", "cells", "worst_gap",
                                       "worst_slug"])
    if procedures is not None:
        rank = {p: i for i, p in enumerate(procedures)}
        grid = grid.sort_values(["procedure", "mechanism"], key=lambda s: s.map(rank).fillna(len(rank))
                                if s.name == "procedure" else s, kind="stable").reset_index(drop=True)
    return grid


def figure_inches(procedures: int, mechanisms: int) -> tuple[float, float]:
    """Width and height of the heat map figure: room for every label and a square per cell."""
    return 2.6 + 0.62 * max(mechanisms, 2), 1.3 + 0.3 * max(procedures, 2)


def heatmap_figure(grid: pd.DataFrame, estimand: str, path: Path) -> Path:
    """The grid as a colour-coded matrix (SVG or PNG by the suffix of ``path``), text = mean coverage."""
    procedures = list(dict.fromkeys(grid["procedure"]))
    mechanisms = sorted(set(grid["mechanism"]))
    gap = grid.pivot(index="procedure", columns="mechanism", values="gap").reindex(procedures)[mechanisms]
    coverage = grid.pivot(index="procedure", columns="mechanism", values="coverage").reindex(procedures)[mechanisms]
    half = max(GAP_SCALE_MIN, float(np.nanmax(np.abs(gap.to_numpy()))) if gap.size else GAP_SCALE_MIN)
    width, height = figure_inches(len(procedures), len(mechanisms))
    with matplotlib.rc_context({"svg.fonttype": "none", "font.size": 8}):
        fig, ax = plt.subplots(figsize=(width, height))
        image = ax.imshow(np.ma.masked_invalid(gap.to_numpy()), cmap="RdBu", vmin=-half, vmax=half, aspect="auto")
        for (i, j), value in np.ndenumerate(coverage.to_numpy()):
            if np.isfinite(value):
                dark = abs(gap.to_numpy()[i, j]) > 0.6 * half
                ax.text(j, i, f"{value:.3f}", ha="center", va="center", fontsize=7,
                        color="white" if dark else "#222")
        ax.set_xticks(range(len(mechanisms)), mechanisms, rotation=40, ha="right")
        ax.set_yticks(range(len(procedures)), procedures)
        ax.set_xticks(np.arange(-0.5, len(mechanisms)), minor=True)
        ax.set_yticks(np.arange(-0.5, len(procedures)), minor=True)
        ax.grid(which="minor", color="white", linewidth=1.2)
        ax.tick_params(which="minor", length=0)
        colorbar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
        colorbar.set_label("coverage − nominal (mean over cells)")
        ax.set_title(f"Coverage of {estimand} (text: mean coverage; red: under-coverage)", fontsize=9)
        return save_figure(fig, path)
