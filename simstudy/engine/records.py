"""Reading and writing per-replicate records (Parquet), with array-valued columns."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from simstudy.engine.chunks import ChunkOutput
from simstudy.files import atomic_path

__all__ = ["order_records", "write_records", "read_records", "timing_by_condition"]

_ARRAY_COLUMNS = ("fold_means", "fold_true_errors")


def write_records(records: pd.DataFrame, path: Path) -> Path:
    """Write records to Parquet; array cells become list<double> columns.

    The cells go to pyarrow as float arrays (it converts each to a list<double> value in compiled
    code); as Python lists of floats they would cost a Python object per element, which at a
    million replicates dominates the time and the peak memory of the whole write. The file is the
    same byte for byte."""
    out = records.copy(deep=False)  # the array columns are replaced below, the caller's frame is left alone
    for col in _ARRAY_COLUMNS:
        if col in out:
            out[col] = [_float_cell(v) for v in out[col]]
    with atomic_path(path) as tmp:
        out.to_parquet(tmp, index=False)
    return path


def _float_cell(value) -> np.ndarray | float:
    """A cell as a float array (a scalar cell, e.g. NaN of a failed replicate, as a float)."""
    array = np.asarray(value, dtype=float)
    return array if array.ndim else float(array)


def read_records(path: Path) -> pd.DataFrame:
    """Read records written by :func:`write_records` (list cells back to arrays)."""
    records = pd.read_parquet(path)
    for col in _ARRAY_COLUMNS:
        if col in records:
            records[col] = [np.asarray(v, dtype=float) for v in records[col]]
    if "error" in records:
        records["error"] = records["error"].fillna("")
    return records


def timing_by_condition(outputs: Sequence[ChunkOutput]) -> dict[int, dict[str, float]]:
    """Summed worker wall and CPU seconds per condition index."""
    timing: dict[int, dict[str, float]] = {}
    for o in outputs:
        t = timing.setdefault(o.chunk.condition, {"worker_wall_s": 0.0, "worker_cpu_s": 0.0})
        t["worker_wall_s"] += o.wall_time
        t["worker_cpu_s"] += o.cpu_time
    return timing


def order_records(records: pd.DataFrame, condition_keys: Sequence[str], subjects: Sequence[str]) -> pd.DataFrame:
    """Records in (condition, replicate, subject) order, whatever chunks made them (chunks are
    already in (condition, replicate) order; only phases with ``subjects`` need sorting)."""
    if not subjects or records.empty or "subject" not in records:
        return records
    condition = {key: i for i, key in enumerate(condition_keys)}
    rank = {s: i for i, s in enumerate(subjects)}
    order = np.lexsort((records["subject"].map(rank).to_numpy(), records["replicate"].to_numpy(),
                        records["condition_key"].map(condition).to_numpy()))
    return records.iloc[order].reset_index(drop=True)
