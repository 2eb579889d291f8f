"""The leaderboard: one row per procedure (and kind, and estimand), every number from the cell table.

Interval procedures (coverage of the estimand):

- ``within_share``: share of scored cells whose coverage is within nominal +- 2 MCSE_0
  (:mod:`.scores`);
- ``worst_gap`` and ``worst_cell``: the lowest coverage minus nominal, and where;
- ``mean_undercoverage``: mean of max(0, nominal - coverage), the screening measure of
  Schulz-Kuempel et al. (their cut-off: 0.10);
- ``median_relative_width``: median over cells of the width relative to the cell's median
  interval procedure;
- ``median_fits``, ``median_cpu_seconds``: cost per replicate (median over cells);
- ``failed_share``: failed replicates over all replicates.

Tests: ``size_within_share`` (cells with a true null whose rejection rate is within alpha +- 2
MCSE_0), ``worst_size`` and its cell, ``median_power`` (cells with a false null), cost, failures.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from simstudy.report.benchmark.scores import cell_label, scored_cells

__all__ = ["leaderboard", "INTERVAL_COLUMNS", "TEST_COLUMNS"]

INTERVAL_COLUMNS = ("cells", "unscored", "within_share", "worst_gap", "worst_cell", "mean_undercoverage",
                    "median_relative_width", "median_fits", "median_cpu_seconds", "failed_share")
TEST_COLUMNS = ("size_cells", "size_within_share", "worst_size", "worst_size_cell", "power_cells", "median_power",
                "median_fits", "median_cpu_seconds", "failed_share")


def leaderboard(cells: pd.DataFrame, by: Sequence[str] = ("kind", "estimand", "procedure")) -> pd.DataFrame:
    """One row per group of ``by`` (which must include ``kind``), best first within each kind.

    Intervals are ordered by ``within_share`` (then ``worst_gap``), tests by ``size_within_share``
    (then ``median_power``); NaN where a measure has no cell.
    """
    by = list(by)
    if "kind" not in by:
        raise ValueError("leaderboard(by=...) must include 'kind'.")
    frame = scored_cells(cells)
    rows = []
    for key, group in frame.groupby(by, sort=True):
        row = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        row.update(_interval_row(group) if row["kind"] == "interval" else _test_row(group))
        row.update(_cost(group))
        rows.append(row)
    board = pd.DataFrame(rows, columns=[*by, *dict.fromkeys(INTERVAL_COLUMNS + TEST_COLUMNS)])
    board["_key1"] = board["within_share"].fillna(board["size_within_share"])
    board["_key2"] = board["worst_gap"].fillna(board["median_power"])
    board = board.sort_values(["kind", "_key1", "_key2"], ascending=[True, False, False], na_position="last",
                              kind="stable")
    return board.drop(columns=["_key1", "_key2"]).reset_index(drop=True)


def _interval_row(group: pd.DataFrame) -> dict:
    scored = group[group["within"].notna()]
    worst = scored.loc[scored["gap"].idxmin()] if len(scored) else None
    return {"cells": len(scored), "unscored": len(group) - len(scored),
            "within_share": scored["within"].mean() if len(scored) else np.nan,
            "worst_gap": worst["gap"] if worst is not None else np.nan,
            "worst_cell": cell_label(worst) if worst is not None else "",
            "mean_undercoverage": np.maximum(0.0, -scored["gap"]).mean() if len(scored) else np.nan,
            "median_relative_width": scored["relative_width"].median()}


def _test_row(group: pd.DataFrame) -> dict:
    scored = group[group["rate"].notna() & (group["replicates"] > 0)]
    null = scored[scored["null_true"]]
    alternative = scored[~scored["null_true"]]
    worst = null.loc[null["rate"].idxmax()] if len(null) else None
    return {"size_cells": len(null), "size_within_share": null["within"].mean() if len(null) else np.nan,
            "worst_size": worst["rate"] if worst is not None else np.nan,
            "worst_size_cell": cell_label(worst) if worst is not None else "",
            "power_cells": len(alternative), "median_power": alternative["rate"].median()}


def _cost(group: pd.DataFrame) -> dict:
    attempted = (group["replicates"] + group["failed"]).sum()
    return {"median_fits": group["fits"].median(), "median_cpu_seconds": group["cpu_seconds"].median(),
            "failed_share": group["failed"].sum() / attempted if attempted else np.nan}
