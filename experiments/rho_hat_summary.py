"""Combine the runs of experiments/rho_hat.sh: results/rho_hat/summary.md, goal.csv and
figures/size_power_all.png (one row per population/learner: size, then power, against n, one panel per family
of at most 3 procedures + the oracle) and figures/rho_all.png (the true rho against the rho_hats, one panel per run).
Re-aggregation only: reads each run's tests.csv and summary.csv, never the replicates.

Usage: python experiments/rho_hat_summary.py [results/rho_hat]
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from simstudy.report import frame_to_markdown
from simstudy.report.figures import finish, panel_grid, save_figure
from simstudy.studies.rho_hat.aggregate import PROCEDURES, goal_table
from simstudy.studies.rho_hat.figures import FAMILIES, family_axes, rho_axes
from simstudy.studies.rho_hat.study import pivot_percent


def size_power_figure(fig_rows, alpha: float, path: Path | None):
    """One row per run: size (one panel per family of procedures), then power (the same families).

    Saved to ``path`` (returned); with ``path`` None the figure itself is returned (tests)."""
    families = list(FAMILIES)
    fig, axes = panel_grid(len(fig_rows), 2 * len(families), width=3.1, height=2.5)
    titles = []
    for row, (name, _summary, tests) in zip(axes, fig_rows):
        family_axes(row[:len(families)], row[len(families):], tests, alpha)   # one y scale per row and quantity
        row[0].set_ylabel(f"{name}\nsize (%)")
        titles += [f"{name}: size, {f}" for f in families] + [f"{name}: power, {f}" for f in families]
    fig = finish(fig, axes, titles, ncol=6, legend_size=8)
    return fig if path is None else save_figure(fig, path)


def rho_figure(fig_rows, path: Path) -> Path:
    """One panel per run: the true rho(n) against the rho_hats."""
    cols = 4
    fig, axes = panel_grid(-(-len(fig_rows) // cols), cols, width=3.6, height=2.8)
    flat = list(axes.ravel())
    for ax, (name, summary, tests) in zip(flat, fig_rows):
        rho_axes(ax, summary, tests)
    for ax in flat[len(fig_rows):]:
        ax.set_visible(False)
    titles = [name for name, _, _ in fig_rows] + [""] * (len(flat) - len(fig_rows))
    return save_figure(finish(fig, flat[:len(fig_rows)], titles[:len(fig_rows)], ncol=5), path)


def main(folder: Path) -> None:
    runs = sorted(p.parent for p in folder.glob("*/tests.csv"))
    if not runs:
        raise SystemExit(f"no runs (*/tests.csv) under {folder}")
    alpha = float(pd.read_csv(runs[0] / "tests.csv")["alpha"].iloc[0])
    lines = [f"# Data-driven rho_hat: all runs (alpha = {alpha:g})", "",
             "Size (%) of the two-sided tests of H0: mu = mu_true, power (%) at mu_true +- 2 sd(mu_hat), "
             "per population/learner; goal: size within alpha +- 1 point at every n, power >= 10 points above "
             "rho_hat = 0.7 where that has power < 80%.", ""]
    goals, fig_rows = [], []
    for run in runs:
        tests, summary = pd.read_csv(run / "tests.csv"), pd.read_csv(run / "summary.csv")
        reps = int(summary["replicates"].min())
        lines += [f"## {run.name} ({reps} replicates per n; size MC error "
                  f"{100 * (alpha * (1 - alpha) / reps) ** 0.5:.1f} points)", "",
                  "rho (%): " + ", ".join(f"n={n}: {100 * r:.1f}" for n, r in zip(summary["n"], summary["rho"])), "",
                  "Size (%):", "", frame_to_markdown(pivot_percent(tests, "size")), "",
                  "Power (%):", "", frame_to_markdown(pivot_percent(tests, "power")), ""]
        goal = goal_table(tests, alpha)
        goal.insert(0, "run", run.name)
        goals.append(goal)
        fig_rows.append((run.name, summary, tests))
    goal = pd.concat(goals, ignore_index=True)
    overall = (goal.groupby("procedure", sort=False)
               .agg(worst_size_error_points=("worst_size_error_points", "max"),
                    runs_size_within_1_point=("size_within_1_point", "sum"),
                    min_power_gain_points=("min_power_gain_points", "min"),
                    runs_power_gain_ge_10=("power_gain_>=10", "sum")).reset_index())
    overall["runs"] = len(runs)
    lines += ["## Goal over all runs", "", frame_to_markdown(overall), "", "Per run:", "", frame_to_markdown(goal), "",
              "Procedures:", ""] + [f"- `{k}`: {v}" for k, v in PROCEDURES.items()] + [""]
    (folder / "summary.md").write_text("\n".join(lines))
    goal.to_csv(folder / "goal.csv", index=False)
    size_power_figure(fig_rows, alpha, folder / "figures" / "size_power_all.png")
    rho_figure(fig_rows, folder / "figures" / "rho_all.png")
    print((folder / "summary.md").read_text())


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "results/rho_hat"))
