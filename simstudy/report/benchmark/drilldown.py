"""The drill-down: one page per data cell (mechanism, learner, loss, n) with its figure and numbers.

The figure of an interval cell has three panels sharing the procedures' axis: coverage with its
95% Wilson interval against the nominal (grey band: nominal +- 2 MCSE_0 at the cell's replicate
count), the shares of intervals missing the truth on the left (upper end below it) and on the
right (lower end above it), and the median and mean widths. A test cell (a pair of learners)
shows each procedure's rejection rate with its Wilson interval against alpha.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from simstudy.report.benchmark.markup import esc, html_table, page_frame
from simstudy.report.benchmark.scores import DATA_CELL, cell_slug, nominal_mcse, scored_cells
from simstudy.report.figures import plt, save_figure

__all__ = ["data_cells", "cell_figure", "cell_page", "CELL_DIR"]

#: The folder of the drill-down pages and figures inside the site.
CELL_DIR = "cells"
#: Columns of one kind only (shown when a row of the cell measures them).
_KIND_COLUMNS = ("coverage_lo", "coverage_hi", "rejection_lo", "rejection_hi", "miss_left", "miss_right",
                 "width_median", "width_mean", "relative_width")
_STYLE = {"R_n": dict(color="tab:blue", marker="o", mfc="tab:blue"),
          "Err_n": dict(color="tab:orange", marker="s", mfc="white"),
          "Err_XY": dict(color="tab:green", marker="D", mfc="white")}


def data_cells(cells: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(slug, rows) of every data cell, in the table's order."""
    return [(cell_slug(*key), group) for key, group in cells.groupby(list(DATA_CELL), sort=True)]


def _offsets(estimands) -> dict[str, float]:
    step = 0.22 if len(estimands) > 1 else 0.0
    return {e: (i - (len(estimands) - 1) / 2) * step for i, e in enumerate(estimands)}


def cell_figure(rows: pd.DataFrame, path: Path) -> Path:
    """The figure of one data cell (its rows of the cell table), saved to ``path``."""
    rows = scored_cells(rows)
    test = (rows["kind"] == "test").all()
    procedures = sorted(set(rows["procedure"]))
    estimands = sorted(set(rows["estimand"]), key=lambda e: (e != "R_n", e))
    height = 1.0 + 0.28 * len(procedures)
    fig, axes = plt.subplots(1, 1 if test else 3, figsize=(4.6 if test else 10.5, height), sharey=True,
                             squeeze=False, gridspec_kw=None if test else {"width_ratios": [1.25, 1, 0.8]})
    axes = axes[0]
    position = {p: i for i, p in enumerate(procedures)}
    offsets = _offsets(estimands)
    nominal = rows["nominal"].iloc[0]
    replicates = rows["replicates"].max()
    band = 2 * nominal_mcse(nominal, replicates) if replicates > 0 else 0.0
    if not test or rows["null_true"].any():     # under a false null the rate is a power: no band to be in
        axes[0].axvspan(max(0.0, nominal - band), min(1.0, nominal + band), color="0.88", zorder=0)
    axes[0].axvline(nominal, color="0.3", lw=0.8)
    for estimand in estimands:
        part = rows[rows["estimand"] == estimand]
        y = part["procedure"].map(position).to_numpy() + offsets[estimand]
        low, high = (("coverage_lo", "coverage_hi") if not test else ("rejection_lo", "rejection_hi"))
        rate = part["rate"].to_numpy()
        # rounding can put a Wilson end a hair inside the rate (rate 0 or 1): bars are never negative
        err = np.clip(np.vstack([rate - part[low].to_numpy(), part[high].to_numpy() - rate]), 0, None)
        axes[0].errorbar(rate, y, xerr=err, ls="none", ms=4, capsize=2, lw=1, label=estimand, **_STYLE.get(
            estimand, {}))
        if not test:
            colour = _STYLE.get(estimand, {}).get("color", "0.4")
            axes[1].barh(y, -part["miss_left"], height=0.2, color=colour, alpha=0.8)
            axes[1].barh(y, part["miss_right"], height=0.2, color=colour, alpha=0.45)
    axes[0].set_xlabel("rejection rate (alpha: line)" if test else "coverage, 95% Wilson interval")
    nulls = set(rows["null_true"]) if test else set()
    first = {frozenset({True}): "size (null true)", frozenset({False}): "power (null false)"}.get(
        frozenset(nulls), "size where the null is true, else power") if test else "coverage"
    for ax, title in zip(axes, (first, "misses", "width")):
        ax.set_title(title, fontsize=9, loc="right")
    if not test:
        _miss_and_width(axes, rows, estimands[0], position, 1 - nominal)
    axes[0].set_yticks(range(len(procedures)), procedures)
    axes[0].set_ylim(len(procedures) - 0.5, -0.5)
    axes[0].legend(fontsize=7, loc="lower left", bbox_to_anchor=(0, 1.0), ncol=len(estimands), frameon=False)
    for ax in axes:
        ax.grid(axis="x", color="0.9")
        ax.tick_params(labelsize=8)
    return save_figure(fig, path, dpi=100)


def _miss_and_width(axes, rows: pd.DataFrame, estimand: str, position: dict, alpha: float) -> None:
    """The miss panel's reference lines and the width panel (widths are the same for every estimand)."""
    for x in (-alpha / 2, alpha / 2):
        axes[1].axvline(x, color="0.3", lw=0.8, ls="--")
    axes[1].axvline(0, color="0.3", lw=0.8)
    axes[1].set_xlabel("miss left (upper < truth)  |  miss right (lower > truth)", fontsize=8)
    axes[1].xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{abs(v):g}"))
    part = rows[rows["estimand"] == estimand]
    y = part["procedure"].map(position).to_numpy()
    axes[2].plot(part["width_median"], y, "o", color="0.2", ms=4, label="median")
    axes[2].plot(part["width_mean"], y, "x", color="0.5", ms=4, label="mean")
    axes[2].set_xlabel("interval width")
    axes[2].legend(fontsize=7, loc="lower left", bbox_to_anchor=(0, 1.0), ncol=2, frameon=False)


def cell_page(slug: str, rows: pd.DataFrame, figure_name: str) -> str:
    """The HTML page of one data cell: its figure, truth and every number of its rows."""
    first = rows.iloc[0]
    title = f"{first['mechanism']} / {first['learner']} / {first['loss']} / n = {int(first['n'])}"
    frame = scored_cells(rows).sort_values(["estimand", "procedure"], key=lambda s: s.map(
        {"R_n": "0", "Err_n": "1"}).fillna(s) if s.name == "estimand" else s, kind="stable")
    frame["within"] = frame["within"].map({1.0: "yes", 0.0: "no"}).fillna("")
    test = (frame["kind"] == "test").all()
    frame["measures"] = np.where(frame["kind"] == "interval", "coverage",
                                 np.where(frame["null_true"], "size", "power"))
    unmeasured = [c for c in _KIND_COLUMNS if frame[c].isna().all()]
    empty = "" if frame["rate"].notna().any() else (
        '<p class="note">No replicate of this data cell gave an outcome: every one failed (see the failed '
        "column). The failures are recorded in the run.</p>")
    formats = {"procedure": "", "kind": "", "estimand": "", "measures": "", "rate": ".3f", "coverage_lo": ".3f",
               "coverage_hi": ".3f",
               "rejection_lo": ".3f", "rejection_hi": ".3f", "nominal": ".3f", "band": ".3f", "within": "",
               "miss_left": ".3f", "miss_right": ".3f", "width_median": ".4g", "width_mean": ".4g",
               "relative_width": ".2f", "truth_mean": ".4g", "truth_mcse": ".2g", "replicates": "d", "failed": "d",
               "fits": ".0f", "cpu_seconds": ".3g"}
    headers = {"rate": "rate", "coverage_lo": "cov. lo", "coverage_hi": "cov. hi",
               "rejection_lo": "rej. lo", "rejection_hi": "rej. hi", "band": "2 MCSE₀", "within": "within ±2 MCSE₀"}
    body = (f'<p class="crumbs"><a href="../index.html#heatmap">← back to the results</a></p>'
            f"<h1>{esc(title)}</h1><p class=\"meta\">task {esc(first['task'])}; cell seed {int(first['cell_seed'])}; "
            f"nominal {first['nominal']:.3f}; replicates up to {int(rows['replicates'].max())}. Filled markers: "
            "R_n (error of the models at hand); open: Err_n (expected error at size n).</p>"
            f'<figure><img src="{esc(figure_name)}" alt="coverage, misses and widths of every procedure in '
            f'{esc(title)}"><figcaption>{_caption(test)}</figcaption></figure>'
            + empty + '<div class="scroll">'
            + html_table(frame, {c: f for c, f in formats.items() if c not in unmeasured}, headers, classes="numbers")
            + "</div>")
    return page_frame(title, body, depth=1)


def _caption(test: bool) -> str:
    band = ("grey band: nominal ± 2 MCSE₀, the Monte Carlo error of the nominal at this replicate count")
    if test:
        return (f"Rejection rate of each test of the two learners' equal errors; error bars: 95% Wilson intervals; "
                f"{band}, drawn where the null is true (alpha: the size a test should have there).")
    return f"Error bars: 95% Wilson intervals; {band}; dashed lines: alpha/2 missed on each side."
