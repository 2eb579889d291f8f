"""Combine the runs of experiments/rho_hat.sh: results/rho_hat/summary.md, goal.csv and
figures/size_power_all.png (one row per population/learner: size, power, rho against n).

Usage: python experiments/rho_hat_summary.py [results/rho_hat]
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from simstudy.report import frame_to_markdown
from simstudy.report.figures import plt, save_figure, style_axes
from simstudy.studies.rho_hat.aggregate import PROCEDURES, goal_table
from simstudy.studies.rho_hat.figures import size_power_axes
from simstudy.studies.rho_hat.study import pivot_percent


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
    fig, axes = plt.subplots(len(fig_rows), 3, figsize=(16, 4.2 * len(fig_rows)), squeeze=False)
    titles = []
    for row, (name, summary, tests) in zip(axes, fig_rows):
        size_power_axes(list(row), summary, tests, alpha)
        titles += [f"size, {name}", f"power, {name}", f"rho, {name}"]
    save_figure(style_axes(fig, list(axes.ravel()), titles, legend_size=6), folder / "figures" / "size_power_all.png")
    print((folder / "summary.md").read_text())


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "results/rho_hat"))
