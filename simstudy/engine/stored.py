"""Records kept on disk: a phase's records as the shards that hold them (:class:`StoredRecords`).

A run into a directory writes every finished chunk as a shard at once
(:class:`~simstudy.engine.shards.ShardStore`). For a study whose aggregation reads its records a
condition and a few columns at a time (``Study.streams_records``), the engine then keeps only a
reference to each chunk's rows (:class:`ShardPart`) instead of the records themselves: the memory
a run needs no longer grows with its replicates, and ``replicates.parquet`` is written a row
group at a time from the shards. :meth:`StoredRecords.frame` gives the DataFrame the engine
would have held, column for column.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import pandas as pd

__all__ = ["ShardPart", "StoredRecords"]


@dataclass(frozen=True)
class ShardPart:
    """One chunk's records on disk: the rows of replicates ``[start, stop)`` of a shard file.

    Attributes
    ----------
    path : Path
        The shard's Parquet file.
    start, stop : int
        The chunk's replicate range.
    whole : bool
        Every row of the file belongs to the chunk (else the rows are selected by ``replicate``).
    rows : int
        The chunk's record count.
    failed : int
        How many of them carry an ``error``.
    columns : tuple of str
        The record columns of the shard.
    """

    path: Path
    start: int
    stop: int
    whole: bool
    rows: int
    failed: int
    columns: tuple[str, ...]

    def read(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The chunk's records (all columns, or those of ``columns`` the shard has), as loading the
        shard whole and selecting the chunk's replicates gives them."""
        if columns is None:
            frame = pd.read_parquet(self.path)
        else:
            wanted = [c for c in dict.fromkeys([*columns, *([] if self.whole else ["replicate"])])
                      if c in self.columns]
            frame = pd.read_parquet(self.path, columns=wanted)
        if not self.whole:
            keep = (frame["replicate"] >= self.start) & (frame["replicate"] < self.stop)
            frame = frame[keep].reset_index(drop=True)
            if columns is not None:
                frame = frame[[c for c in columns if c in frame]]
        return frame


def part_of(path: Path, start: int, stop: int, records: pd.DataFrame, whole: bool,
            columns: Sequence[str] | None = None) -> ShardPart:
    """The :class:`ShardPart` of a chunk whose records (or their ``replicate``/``error`` columns) are
    ``records``; ``columns``: the shard's columns when ``records`` holds only some of them."""
    if not whole:
        records = records[(records["replicate"] >= start) & (records["replicate"] < stop)]
    failed = int((records["error"].fillna("") != "").sum()) if "error" in records else 0
    return ShardPart(Path(path), int(start), int(stop), bool(whole), int(len(records)), failed,
                     tuple(columns if columns is not None else records.columns))


class StoredRecords:
    """A phase's records as the shard parts that hold them, in (condition, replicate) order.

    Parameters
    ----------
    parts : sequence of (int, ShardPart)
        The condition index of each chunk and its part, in (condition, replicate) order.
    labels : dict
        Constant columns put first in every record (the study's ``record_labels``).
    """

    def __init__(self, parts: Sequence[tuple[int, ShardPart]], labels: dict[str, Any] | None = None):
        self.parts = list(parts)
        self.labels = dict(labels or {})

    def __len__(self) -> int:
        return sum(part.rows for _, part in self.parts)

    @property
    def columns(self) -> list[str]:
        """Every record column (labels first), in the order concatenating the chunks gives."""
        names = dict.fromkeys(self.labels)
        for _, part in self.parts:
            names.update(dict.fromkeys(part.columns))
        return list(names)

    def conditions(self) -> list[int]:
        """The condition indices that have records, in order."""
        return list(dict.fromkeys(c for c, _ in self.parts))

    def condition_parts(self, condition: int) -> list[ShardPart]:
        return [part for c, part in self.parts if c == condition]

    def _labelled(self, frame: pd.DataFrame) -> pd.DataFrame:
        for i, (name, value) in enumerate(self.labels.items()):
            frame.insert(i, name, value)
        return frame

    def frame(self) -> pd.DataFrame:
        """Every record in one DataFrame, labels first: what a run holding its records in memory gives."""
        from simstudy.engine.records import compact_array_cells

        frames = [compact_array_cells(part.read()) for _, part in self.parts]
        return self._labelled(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame())

    def failures(self) -> pd.DataFrame:
        """The records that carry an ``error`` (labels first); an empty frame when none does."""
        frames = []
        for _, part in self.parts:
            if part.failed:
                frame = part.read()
                frames.append(frame[frame["error"].fillna("") != ""])
        if not frames:
            return pd.DataFrame()
        return self._labelled(pd.concat(frames, ignore_index=True))

    def labelled_parts(self) -> Iterator[pd.DataFrame]:
        """Each chunk's records with the labels first, in order."""
        for _, part in self.parts:
            yield self._labelled(part.read())

    def scalar_block(self, condition: int, columns: Sequence[str]) -> tuple[pd.DataFrame, int]:
        """(frame of ``columns`` over the condition's records without an error, count of those with one).

        The frame is one float block filled a chunk at a time (a column a chunk lacks is NaN, as
        concatenating the chunks gives it): the condition's columns are held once, never as
        the chunks' copies and their concatenation at the same time.
        """
        parts = self.condition_parts(condition)
        total = sum(p.rows - p.failed for p in parts)
        block = np.empty((len(columns), total))
        at = 0
        for part in parts:
            frame = part.read([*columns, "error"])
            if part.failed:
                frame = frame[frame["error"].fillna("") == ""]
            for i, name in enumerate(columns):
                block[i, at:at + len(frame)] = frame[name].to_numpy(dtype=float) if name in frame else np.nan
            at += len(frame)
        return pd.DataFrame(block.T, columns=list(columns), copy=False), sum(p.failed for p in parts)

    def array_pieces(self, condition: int, column: str) -> Iterator[np.ndarray]:
        """The condition's array cells of ``column`` (records without an error), as 2-D arrays a chunk at a time."""
        for part in self.condition_parts(condition):
            frame = part.read([column, "error"])
            if part.failed:
                frame = frame[frame["error"].fillna("") == ""]
            if len(frame):
                yield np.stack(frame[column].to_numpy())

    def first(self, condition: int, columns: Sequence[str]) -> pd.Series:
        """The first record of a condition, ``columns`` only."""
        return self.condition_parts(condition)[0].read(columns).iloc[0]

    def write(self, path: Path) -> Path:
        """Write the records as :func:`simstudy.engine.records.write_records` writes :meth:`frame`, byte
        for byte, a row group at a time (see :func:`simstudy.engine.records.write_parts`)."""
        from simstudy.engine.records import write_parts, write_records

        if not self.parts or not write_parts(self.labelled_parts(), Path(path)):
            write_records(self.frame(), Path(path))
        return Path(path)
