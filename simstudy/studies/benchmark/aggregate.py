"""From records to the cell table (the columns of ``BENCH_CONTRACT.md``): one row per
(procedure, mechanism, learner, loss, n, estimand).

Per cell and estimand, over the replicates that gave an outcome (finite interval ends; a
p-value or a decision for tests): coverage = share of intervals with lower <= truth <= upper
and its Wilson 95% interval (:func:`simstudy.inference.wilson_bounds`), miss left (upper <
truth) and miss right (lower > truth), widths; tests: the share of rejections at level alpha
with its Wilson interval. ``failed`` counts the replicates recorded with an error or without an
outcome. ``relative_width`` divides a cell's median width by the median over the interval
procedures of the same data cell and estimand.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from simstudy.inference import wilson_bounds
from simstudy.studies.benchmark.cells import split_pair
from simstudy.studies.benchmark.truth import err_n_truth

__all__ = ["CELL_COLUMNS", "aggregate_cells", "err_n_table"]

CELL_COLUMNS = ["procedure", "kind", "mechanism", "task", "learner", "loss", "n", "estimand", "nominal", "replicates",
                "failed", "coverage", "coverage_lo", "coverage_hi", "coverage_mcse", "miss_left", "miss_right",
                "width_mean", "width_median", "relative_width", "null_true", "rejection_rate", "rejection_lo",
                "rejection_hi", "truth_mean", "truth_mcse", "fits", "cpu_seconds", "cell_seed"]


def err_n_table(truths: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Err_n and its Monte Carlo error by cell key, from the truth phase's records."""
    ok = truths[truths["error"].fillna("") == ""]
    return {key: err_n_truth(g["truth"].to_numpy(), g["truth_se"].to_numpy()) for key, g in ok.groupby("cell_key")}


def _rate(flags: np.ndarray) -> tuple[float, float, float]:
    k, m = int(flags.sum()), int(flags.size)
    if m == 0:
        return np.nan, np.nan, np.nan
    low, high = wilson_bounds(k, m)
    return k / m, float(low), float(high)


def _interval_columns(lower, upper, truth) -> dict[str, float]:
    covered = (lower <= truth) & (truth <= upper)
    c, lo, hi = _rate(covered)
    width = upper - lower
    return {"coverage": c, "coverage_lo": lo, "coverage_hi": hi,
            "coverage_mcse": float(np.sqrt(c * (1 - c) / covered.size)) if covered.size else np.nan,
            "miss_left": float(np.mean(upper < truth)) if truth.size else np.nan,
            "miss_right": float(np.mean(lower > truth)) if truth.size else np.nan,
            "width_mean": float(width.mean()) if width.size else np.nan,
            "width_median": float(np.median(width)) if width.size else np.nan}


def _group_rows(group: pd.DataFrame, estimand: str, err_n: tuple[float, float] | None, alpha: float) -> list[dict]:
    """The rows of one (data cell, procedure): one per estimand it is scored against."""
    kind = group["kind"].iloc[0]
    failed = group["error"].fillna("") != ""
    if kind == "test":
        failed |= ~np.isfinite(group["reject"].to_numpy())
    else:
        failed |= ~(np.isfinite(group["lower"].to_numpy()) & np.isfinite(group["upper"].to_numpy()))
    ok = group[~failed]
    truths: dict[str, tuple[np.ndarray, float]] = {}
    if ok["truth_R_n"].notna().any():
        truths["R_n"] = (ok["truth_R_n"].to_numpy(), 0.0)
    if err_n is not None:
        truths["Err_n"] = (np.full(len(ok), err_n[0]), err_n[1])
    if estimand == "Err_XY":
        truths["Err_XY"] = (ok["truth_Err_XY"].to_numpy(), 0.0)
    pair = split_pair(str(group["learner"].iloc[0]))
    rows = []
    for name, (truth, mcse) in truths.items():
        row: dict[str, Any] = {"estimand": name, "nominal": alpha if kind == "test" else 1 - alpha,
                               "replicates": int(len(ok)), "failed": int(failed.sum()),
                               "truth_mean": float(np.mean(truth)) if truth.size else (err_n or (np.nan,))[0],
                               "truth_mcse": float(mcse), "fits": float(group["fits"].mean()),
                               "cpu_seconds": float(ok["cpu_seconds"].mean()) if len(ok) else np.nan}
        if kind == "test":
            rate, lo, hi = _rate(ok["reject"].to_numpy() > 0.5)
            row.update(null_true=bool(pair is not None and pair[0] == pair[1]), rejection_rate=rate,
                       rejection_lo=lo, rejection_hi=hi)
        else:
            row.update(_interval_columns(ok["lower"].to_numpy(), ok["upper"].to_numpy(), truth), null_true=False)
        rows.append(row)
    return rows


def aggregate_cells(records: pd.DataFrame, truths: pd.DataFrame, alpha: float, estimands: dict[str, str],
                    cells: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The cell table.

    Parameters
    ----------
    records : the main phase's records (one row per replicate and procedure)
    truths : the truth phase's records
    alpha : float
    estimands : procedure name -> its declared estimand
    cells : cell key -> {"task": ..., "cell_seed": ...}
    """
    err_n = err_n_table(truths) if len(truths) else {}
    scored = records[records["kind"] != "skipped"]
    rows = []
    for (key, procedure), group in scored.groupby(["condition_key", "subject"], sort=False):
        first = group.iloc[0]
        ident = {"procedure": procedure, "kind": first["kind"], "mechanism": first["mechanism"],
                 "task": cells[key]["task"], "learner": first["learner"], "loss": first["loss"], "n": int(first["n"]),
                 "cell_seed": int(cells[key]["cell_seed"])}
        for row in _group_rows(group, estimands.get(procedure, ""), err_n.get(key), alpha):
            rows.append({**ident, **row})
    frame = pd.DataFrame(rows).reindex(columns=CELL_COLUMNS)
    if not len(frame):
        return frame
    intervals = frame["kind"] == "interval"
    by = ["mechanism", "learner", "loss", "n", "estimand"]
    reference = frame[intervals].groupby(by)["width_median"].transform("median")
    frame["relative_width"] = np.nan
    frame.loc[intervals, "relative_width"] = frame.loc[intervals, "width_median"] / reference
    frame["null_true"] = frame["null_true"].astype(bool)
    frame = frame.sort_values(["procedure", "mechanism", "learner", "loss", "n", "estimand"], kind="stable")
    return frame.reset_index(drop=True)
