"""The benchmark's cell table and its run configuration, read and checked against the contract.

The site reads only two things of a benchmark run (``BENCH_CONTRACT``): ``cells.parquet``, one
row per (procedure, mechanism, learner, loss, n, estimand), and ``config.json``, the resolved
grid. :func:`read_benchmark` accepts a run directory or any object with ``.cells`` (a DataFrame)
and ``.config`` (a dict), such as the study's ``BenchmarkResult``; the report layer sits below the
studies and imports none of them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy.report.benchmark.scores import DATA_CELL
from simstudy.errors import ConfigError, DataUnavailableError

__all__ = ["BenchmarkTables", "CELL_COLUMNS", "read_benchmark", "checked_cells"]

#: The contract's columns and their kinds ("str", "int", "float", "bool").
CELL_COLUMNS = {
    "procedure": "str", "kind": "str", "mechanism": "str", "task": "str", "learner": "str", "loss": "str",
    "n": "int", "estimand": "str", "nominal": "float", "replicates": "int", "failed": "int",
    "coverage": "float", "coverage_lo": "float", "coverage_hi": "float", "coverage_mcse": "float",
    "miss_left": "float", "miss_right": "float", "width_mean": "float", "width_median": "float",
    "relative_width": "float", "null_true": "bool", "rejection_rate": "float", "rejection_lo": "float",
    "rejection_hi": "float", "truth_mean": "float", "truth_mcse": "float", "fits": "float",
    "cpu_seconds": "float", "cell_seed": "int",
}
_KINDS = ("interval", "test")


@dataclass(frozen=True)
class BenchmarkTables:
    """A benchmark run as the site sees it.

    Attributes
    ----------
    cells : pandas.DataFrame
        The cell table, checked (contract columns, kinds, sorted by kind, procedure and data cell).
    config : dict
        The run's resolved grid (``config.json``).
    """

    cells: pd.DataFrame
    config: dict


def read_benchmark(result_or_dir: Any) -> BenchmarkTables:
    """The cell table and config of a run directory, or of a result object with ``.cells`` and ``.config``.

    Raises
    ------
    DataUnavailableError
        A run directory without ``cells.parquet`` or ``config.json``.
    ConfigError
        The cell table breaks the contract (a missing column, an unknown kind, a negative count).
    """
    if hasattr(result_or_dir, "cells") and hasattr(result_or_dir, "config"):
        cells, config = result_or_dir.cells, dict(result_or_dir.config or {})
    else:
        run = Path(result_or_dir)
        missing = [name for name in ("cells.parquet", "config.json") if not (run / name).is_file()]
        if missing:
            raise DataUnavailableError(f"{run} holds no benchmark run: {', '.join(missing)} missing. Pass the "
                                       "directory run_benchmark(out=...) wrote, or the BenchmarkResult itself.")
        cells = pd.read_parquet(run / "cells.parquet")
        config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    if not isinstance(cells, pd.DataFrame):
        raise ConfigError(f"result.cells must be a pandas DataFrame; got {type(cells).__name__}.")
    return BenchmarkTables(checked_cells(cells), config)


def checked_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``cells`` with the contract's columns in their types, checked, in a stable order."""
    missing = [c for c in CELL_COLUMNS if c not in cells.columns]
    if missing:
        raise ConfigError(f"the cell table lacks the column(s) {', '.join(missing)} of the benchmark's contract; "
                          "write it with simstudy.studies.benchmark (or add the columns, NaN where not measured).")
    frame = cells.copy()
    for column, kind in CELL_COLUMNS.items():
        if kind == "str":
            frame[column] = frame[column].astype(str)
        elif kind == "int":
            frame[column] = pd.to_numeric(frame[column], errors="raise").astype("int64")
        elif kind == "float":
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
        else:
            frame[column] = frame[column].fillna(False).astype(bool)
    bad = sorted(set(frame["kind"]) - set(_KINDS))
    if bad:
        raise ConfigError(f"the cell table's column kind holds {bad}; it must be 'interval' or 'test'.")
    for column in ("replicates", "failed"):
        if (frame[column] < 0).any():
            raise ConfigError(f"the cell table's column {column} holds a negative count; counts are >= 0.")
    if not np.isfinite(frame["nominal"]).all() or not frame["nominal"].between(0, 1, inclusive="neither").all():
        raise ConfigError("the cell table's column nominal must lie in (0, 1) in every row (1 - alpha for "
                          "intervals, alpha for tests).")
    order = ["kind", "procedure", "estimand", *DATA_CELL]
    return frame.sort_values(order, kind="stable").reset_index(drop=True)[list(CELL_COLUMNS) + [
        c for c in frame.columns if c not in CELL_COLUMNS]]
