"""Chunks of replicates: what a worker is given (:class:`~simstudy.studies.base.Chunk`) and returns
(:class:`ChunkOutput`), the plan of the chunks still to compute (:func:`plan_chunks`), and what a
phase's run learnt (:class:`RunReport`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import pandas as pd

from simstudy.engine.stored import ShardPart
from simstudy.errors import PartOutputError
from simstudy.studies.base import Chunk

__all__ = ["Chunk", "ChunkOutput", "RunReport", "check_chunk_records", "plan_chunks"]


@dataclass
class ChunkOutput:
    """What a worker returns for one chunk: its records (None if the chunk failed), timings,
    the chunk-level error if any, and the warnings raised while computing it."""

    chunk: Chunk
    records: Any
    wall_time: float
    cpu_time: float
    error: str = ""
    warnings: dict[str, int] = field(default_factory=dict)
    #: The shard's index entry when the worker stored the chunk itself (a SLURM array task writes
    #: its shards into the shared run directory); None when the main process stores it.
    shard: dict[str, Any] | None = None

    @property
    def failed_replicates(self) -> int:
        if self.error:
            return self.chunk.size
        if isinstance(self.records, ShardPart):
            return self.records.failed
        if isinstance(self.records, pd.DataFrame) and "error" in self.records:
            return int((self.records["error"].fillna("") != "").sum())
        return 0


def _missing_ranges(total: int, covered: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    gaps, pos = [], 0
    for start, stop in sorted(covered):
        if start > pos:
            gaps.append((pos, start))
        pos = max(pos, stop)
    if pos < total:
        gaps.append((pos, total))
    return gaps


def _segments(total: int, subjects: tuple[str, ...], done: Sequence[Chunk]) -> list[tuple[int, int, tuple]]:
    """Maximal replicate ranges [start, stop) of one condition with the same missing subjects."""
    if not subjects:
        return [(a, b, ()) for a, b in _missing_ranges(total, [(d.start, d.stop) for d in done])]
    missing_of = {s: _missing_ranges(total, [(d.start, d.stop) for d in done if s in d.subjects])
                  for s in subjects}
    cuts = sorted({0, total} | {x for gaps in missing_of.values() for gap in gaps for x in gap})
    out: list[tuple[int, int, tuple]] = []
    for a, b in zip(cuts, cuts[1:]):
        need = tuple(s for s in subjects if any(lo <= a < hi for lo, hi in missing_of[s]))
        if not need:
            continue
        if out and out[-1][1] == a and out[-1][2] == need:
            out[-1] = (out[-1][0], b, need)
        else:
            out.append((a, b, need))
    return out


def plan_chunks(replicates_per_condition: Sequence[int], chunk_size: int,
                done: Sequence[Chunk] = (), replicate_range: tuple[int, int] | None = None,
                subjects: tuple[str, ...] = ()) -> list[Chunk]:
    """Chunks of at most ``chunk_size`` covering every replicate (and subject) not in ``done``.

    Parameters
    ----------
    replicates_per_condition : sequence of int
    chunk_size : int
    done : sequence of Chunk
        Chunks already computed (loaded from shards).
    replicate_range : (start, stop), optional
        Only plan these replicate indices (``runner.only_replicate``).
    subjects : tuple of str
        The phase's subjects: a replicate is missing the subjects that no done chunk covers, and
        the replicates missing the same subjects are computed together.
    """
    if chunk_size < 1:
        raise ValueError(f"runner.chunk_size must be >= 1; got {chunk_size}.")
    chunks = []
    for c, R in enumerate(replicates_per_condition):
        lo, hi = replicate_range if replicate_range is not None else (0, R)
        for start, stop, need in _segments(R, subjects, [d for d in done if d.condition == c]):
            start, stop = max(start, lo), min(stop, hi)
            chunks += [Chunk(c, s, min(s + chunk_size, stop), need) for s in range(start, stop, chunk_size)]
    return chunks


@dataclass
class RunReport:
    """Everything :func:`run_chunks` learnt: outputs in chunk order, shard index, failures."""

    outputs: list[ChunkOutput]
    shards: list[dict[str, Any]]
    resumed_chunks: int
    computed_chunks: int
    chunk_errors: list[dict[str, Any]]
    #: The backend the chunks ran on (``auto`` resolved: ``fork`` or ``loky``).
    backend: str = ""
    #: Failed records of earlier runs left out of the loaded shards (retried or superseded).
    failure_history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def warnings(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for o in self.outputs:
            for k, v in o.warnings.items():
                total[k] = total.get(k, 0) + v
        return total

    @property
    def records(self) -> pd.DataFrame:
        frames = [o.records.read() if isinstance(o.records, ShardPart) else o.records
                  for o in self.outputs if o.records is not None]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def check_chunk_records(records: Any, chunk: Chunk, phase: str) -> None:
    """Refuse what a study's worker returned for ``chunk`` of ``phase`` unless it is records.

    A worker returns a DataFrame. When it has a ``replicate`` column (every built-in study's
    replicate-level phases), it holds every replicate of the chunk (``chunk.start`` to
    ``chunk.stop - 1``) once each, or once per subject when the records have a ``subject``
    column; a failed replicate is a record with an ``error``, never a missing row. Anything else
    would lose, double or invent replicates, so the run stops. (A phase whose records summarise
    the chunk as a whole, such as the Nedelko histogram's, has no replicate column.)

    Raises
    ------
    PartOutputError
        Names the worker, the replicates and what it returned.
    """
    problem = _records_problem(records, chunk)
    if problem:
        raise PartOutputError(
            f"the study's worker of phase {phase!r} returned {problem} for replicates {chunk.start}-{chunk.stop - 1} of condition "
            f"{chunk.condition}: a worker returns a DataFrame with one record per replicate (a 'replicate' column; "
            "a failed replicate is a record with an 'error' text, not a missing row).")


def _records_problem(records: Any, chunk: Chunk) -> str:
    if not isinstance(records, pd.DataFrame):
        return f"a {type(records).__name__}, not a DataFrame"
    if "replicate" not in records:
        return ""
    replicates = pd.to_numeric(records["replicate"], errors="coerce")
    keys = ["replicate", "subject"] if "subject" in records else ["replicate"]
    expected = set(range(chunk.start, chunk.stop))
    found = set(replicates.dropna().astype(int).tolist()) if replicates.notna().all() else None
    if found != expected:
        missing = sorted(expected - (found or set()))
        return (f"{len(records)} record(s) whose replicates are not {chunk.start}-{chunk.stop - 1}"
                + (f" (missing {missing[:5]})" if missing else ""))
    if records.duplicated(subset=keys).any():
        return f"{len(records)} record(s) with a replicate given twice (by {' and '.join(keys)})"
    return ""
