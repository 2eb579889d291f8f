"""Reading and writing per-replicate records (Parquet), with array-valued columns."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np
import pandas as pd

from simstudy.files import atomic_path

if TYPE_CHECKING:  # annotations only: chunks imports stored, which writes with this module
    from simstudy.engine.chunks import ChunkOutput

__all__ = ["compact_array_cells", "order_records", "write_parts", "write_records", "read_records",
           "timing_by_condition"]

_ARRAY_COLUMNS = ("fold_means", "fold_true_errors")
#: pyarrow's default row-group length (``pyarrow.parquet.write_table``): records longer than this are
#: written a row group at a time, into the same file.
ROW_GROUP_ROWS = 1024 * 1024


def write_records(records: pd.DataFrame, path: Path) -> Path:
    """Write records to Parquet; array cells become list<double> columns.

    The cells go to pyarrow as float arrays (it converts each to a list<double> value in compiled
    code); as Python lists of floats they would cost a Python object per element, which at a
    million replicates dominates the time and the peak memory of the whole write. The file is the
    same byte for byte."""
    out = _float_cells(records)
    with atomic_path(path) as tmp:
        if len(out) <= ROW_GROUP_ROWS:
            out.to_parquet(tmp, index=False)
        else:
            write_row_groups(out, tmp, ROW_GROUP_ROWS)
    return path


def write_row_groups(frame: pd.DataFrame, path: Path, rows: int) -> None:
    """Write ``frame`` as ``frame.to_parquet(path, index=False, row_group_size=rows)`` does, byte for
    byte, converting ``rows`` rows at a time: the Arrow copy of the frame that ``to_parquet`` makes
    (about 0.25 KB per cv_variance replicate) is then bounded by one row group, not by the run."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.Schema.from_pandas(frame, preserve_index=False)
    with pq.ParquetWriter(path, schema, compression="snappy") as writer:
        for start in range(0, len(frame), rows):
            part = pa.Table.from_pandas(frame.iloc[start:start + rows], schema=schema, preserve_index=False)
            writer.write_table(part, row_group_size=rows)


def _float_cells(records: pd.DataFrame) -> pd.DataFrame:
    """``records`` with the array cells as float arrays (the caller's frame is left alone)."""
    out = records.copy(deep=False)
    for col in _ARRAY_COLUMNS:
        if col in out:
            out[col] = [_float_cell(v) for v in out[col]]
    return out


class _NotUniform(Exception):
    """The chunks' records do not all convert to one Arrow schema."""


def write_parts(parts: Iterable[pd.DataFrame], path: Path, rows: int = ROW_GROUP_ROWS) -> bool:
    """Write the concatenation of ``parts`` as :func:`write_records` writes it, byte for byte, holding
    one row group (``rows`` records, in Arrow form) and one part at a time. False, and nothing
    written, when the parts' schemas differ (a column some chunks lack, an all-failed chunk's array
    column): the caller then writes the concatenated frame.

    Each part is converted with the schema of the first; the row group's columns are then made
    contiguous, so the writer sees the arrays that converting the whole frame's slice gives."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with atomic_path(path) as tmp:
            writer, pending, held = None, [], 0
            try:
                for part in parts:
                    frame = _float_cells(part)
                    schema = pa.Schema.from_pandas(frame, preserve_index=False)
                    if writer is None:
                        writer = pq.ParquetWriter(tmp, schema, compression="snappy")
                    elif not schema.equals(writer.schema, check_metadata=True):
                        raise _NotUniform
                    pending.append(pa.Table.from_pandas(frame, schema=writer.schema, preserve_index=False))
                    held += len(frame)
                    while held >= rows:
                        pending, held = _flush(writer, pending, rows), held - rows
                if held:
                    _flush(writer, pending, held)
            finally:
                if writer is not None:
                    writer.close()
            if writer is None:
                raise _NotUniform
    except _NotUniform:
        return False
    return True


def _flush(writer, pending: list, rows: int) -> list:
    """Write the first ``rows`` rows of the ``pending`` tables as one row group; the rest."""
    import pyarrow as pa

    table = pa.concat_tables(pending)
    writer.write_table(table.slice(0, rows).combine_chunks(), row_group_size=rows)
    rest = table.slice(rows)
    return [rest] if len(rest) else []


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


def compact_array_cells(records: pd.DataFrame) -> pd.DataFrame:
    """``records`` with each column of equal-shaped array cells (e.g. ``fold_means``) held as the rows
    of one 2-D array; the cells keep their values, dtype and shape.

    A chunk's records arrive from a worker process unpickled, each small array cell with its own
    buffer and bookkeeping: about 1.4 KB per replicate for cv_variance's two 5-element columns,
    against about 0.5 KB once the cells are rows of one block. The engine holds every chunk's
    records until it aggregates, so this sets the memory a run needs per replicate. A column whose
    cells are not all arrays of one shape and dtype (a failed replicate's NaN) is left as it is.
    """
    if not isinstance(records, pd.DataFrame) or records.empty:
        return records
    for column in records.columns:
        cells = records[column].to_numpy()
        first = cells[0]
        if cells.dtype != object or not isinstance(first, np.ndarray) or first.ndim != 1:
            continue
        if all(isinstance(v, np.ndarray) and v.shape == first.shape and v.dtype == first.dtype for v in cells):
            records[column] = pd.Series(list(np.stack(cells)), index=records.index, dtype=object)
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
