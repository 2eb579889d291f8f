"""Running a study's main phase in rounds until every Monte Carlo error target is met.

With ``study.targets`` (see :mod:`simstudy.studies.targets`), the first round runs
``study.min_replicates`` replicates of every condition; after each round the records are
aggregated and, for each condition, the count each target needs is projected from its current
95% half-width w with the 1/sqrt(R) law of a Monte Carlo error,

    R_needed = ceil(R (w / target)^2),

rounded up to a multiple of ``study.min_replicates`` and capped at ``study.replicates``. The
conditions still short are extended (the extent mechanism: replicates 0..R-1 are kept, R.. are
added) and the workers share only their new chunks. The rounds end when no count changes: every
target met, or the cap reached.

Reproducibility: each replicate's random numbers derive from its condition and index, and the
decision after a round depends only on the records of that round, so the final counts and
records are those of a fixed-count run of the same length with the same seed, whatever
``n_jobs``, ``chunk_size``, backend or resume (the step is a study setting, not the runner's
chunk size, for this reason).
"""
from __future__ import annotations

import dataclasses
import logging
import math
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from simstudy.engine.backends import worker_count
from simstudy.engine.chunks import ChunkOutput, RunReport
from simstudy.engine.config import RunnerConfig
from simstudy.studies.base import Chunk, Phase, Study
from simstudy.studies.settings import targets_of
from simstudy.studies.targets import achieved_errors

__all__ = ["RoundStore", "next_counts", "run_to_targets"]

log = logging.getLogger("simstudy")


class RoundStore:
    """The store of the rounds of one run (the interface of
    :class:`~simstudy.engine.shards.ShardStore`: ``save``, ``load``, ``failure_history``).

    ``backing`` (the run directory's shard store; None without one) is read once, at the first
    round, up to the caps (``caps``, replicates per condition): a resume's valid shards, its
    failed replicates left out to be computed again, as any resume does. Every round then takes
    the chunks it needs from memory (those read, and those the rounds so far computed), cut at
    its counts, and computes only the missing ones: a later round re-reads no shard and
    recomputes no replicate an earlier round finished (a failed one is kept as recorded, as in
    a fixed-count run). New chunks are saved to ``backing`` (kept in memory without one).
    """

    def __init__(self, backing: Any = None, caps: Sequence[int] = ()):
        self.backing = backing
        self.caps = list(caps)
        self.directory = backing.directory if backing is not None else Path("<memory>")
        self._read = False
        #: Chunk (condition, start, subjects) -> its whole output; shard -> its index entry.
        self._outputs: dict[tuple, ChunkOutput] = {}
        self._entries: dict[tuple, dict[str, Any]] = {}
        #: The failed replicates the first read left out to compute again (a resume), with their records.
        self.failure_history: list[dict[str, Any]] = []

    def __reduce__(self):
        # a backend that ships the store to its tasks (submitit) gets the shard store they write to
        return _same, (self.backing,)

    def __getattr__(self, name: str):
        # the rest of the shard store's interface (sidecar, read: the submitit backend)
        if name == "backing":
            raise AttributeError(name)
        return getattr(self.backing, name)

    def _keep(self, out: ChunkOutput | None, entry: dict[str, Any] | None) -> None:
        if out is not None:
            self._outputs.setdefault((out.chunk.condition, out.chunk.start, tuple(out.chunk.subjects)), out)
        if entry is not None:
            self._entries.setdefault((entry["file"], entry["condition_key"], entry["start"], tuple(entry["subjects"])),
                                     entry)

    def keep(self, report: RunReport) -> None:
        """A round's chunks that its tasks stored themselves (``shard`` set: submitit)."""
        for out in report.outputs:
            self._keep(out, out.shard)

    def save(self, phase: str, key: str, out: ChunkOutput) -> dict[str, Any]:
        if self.backing is not None:
            entry = self.backing.save(phase, key, out)
        else:
            entry = {"file": "", "condition_key": key, "start": out.chunk.start, "stop": out.chunk.stop,
                     "subjects": list(out.chunk.subjects)}
        self._keep(out, entry)
        return entry

    def load(self, phase: str, keys: Sequence[str], replicates: Sequence[int],
             retry: bool = True) -> tuple[list[ChunkOutput], list]:
        """The chunks of the rounds so far (read from ``backing`` at the first call), cut at ``replicates``."""
        if not self._read:
            self._read = True
            if self.backing is not None:
                outputs, entries = self.backing.load(phase, keys, self.caps or replicates, retry=retry)
                self.failure_history = list(self.backing.failure_history)
                for out in outputs:
                    self._keep(out, None)
                for entry in entries:
                    self._keep(None, entry)
        index = {key: c for c, key in enumerate(keys)}
        entries = [e for e in self._entries.values() if e["start"] < replicates[index[e["condition_key"]]]]
        outputs = []
        for out in self._outputs.values():
            stop = min(out.chunk.stop, replicates[out.chunk.condition])
            if out.chunk.start >= stop:
                continue
            records = out.records
            if stop < out.chunk.stop:
                records = records[records["replicate"] < stop].reset_index(drop=True)
            outputs.append(dataclasses.replace(out, chunk=Chunk(out.chunk.condition, out.chunk.start, stop,
                                                                out.chunk.subjects), records=records))
        return outputs, entries


def _same(value: Any) -> Any:
    return value


def next_counts(counts: Sequence[int], caps: Sequence[int], widths: Sequence[Mapping[str, float]],
                targets: Mapping[str, float], step: int) -> list[int]:
    """The replicates each condition needs next (see the module docstring).

    A condition whose error is undefined (NaN: too few usable replicates) doubles its count.
    The result is never below the current count and never above the cap.
    """
    out = []
    for count, cap, width in zip(counts, caps, widths):
        need = count
        for name, target in targets.items():
            w = width[name]
            if not math.isfinite(w):
                need = max(need, 2 * count)
            elif w > target:
                need = max(need, math.ceil(count * (w / target) ** 2))
        out.append(max(count, min(cap, math.ceil(need / step) * step)))
    return out


def _round_runner(runner: RunnerConfig, new_replicates: int) -> RunnerConfig:
    """The runner of a round: chunks small enough that every worker gets some of the round's new
    replicates (the chunking changes no number)."""
    workers = worker_count(runner.n_jobs, 1 << 30)
    size = max(1, min(runner.chunk_size, math.ceil(new_replicates / workers)))
    return dataclasses.replace(runner, chunk_size=size)


def run_to_targets(study: Study, phase: Phase, runner: RunnerConfig,
                   run_round: Callable[[Phase, RunnerConfig], tuple[RunReport, pd.DataFrame]],
                   other_records: Mapping[str, pd.DataFrame]) -> tuple[Phase, RunReport, pd.DataFrame, list[dict]]:
    """Run ``phase`` in rounds until every target of ``study.config.targets`` is met or capped.

    Parameters
    ----------
    run_round : callable
        ``run_round(phase, runner) -> (report, records)``: one pass of the engine over the phase
        (finished chunks reloaded from the store it closes over, the missing ones computed).
    other_records : mapping
        The records of the phases already run (the aggregation may need them).

    Returns
    -------
    phase, report, records, rounds
        The phase with its final counts, the last round's report (chunk counts over all rounds),
        its records and, per round, the counts and achieved half-widths.
    """
    c = study.config
    caps, step = [int(r) for r in phase.replicates], int(c.min_replicates)
    counts, previous = [min(step, cap) for cap in caps], [0] * len(caps)
    rounds: list[dict] = []
    computed = 0
    while True:
        current = dataclasses.replace(phase, replicates=counts)
        report, records = run_round(current, _round_runner(runner, sum(counts) - sum(previous)))
        computed += report.computed_chunks
        resumed = report.resumed_chunks if not rounds else rounds[0]["resumed_chunks"]
        tables = study.aggregate({**other_records, phase.name: records})
        widths = [achieved_errors(study, tables, condition.columns()) for condition in phase.conditions]
        rounds.append({"round": len(rounds) + 1, "resumed_chunks": resumed, "computed_chunks": report.computed_chunks,
                       "conditions": [{"condition": cond.label(), "replicates": n, "half_width": w}
                                      for cond, n, w in zip(phase.conditions, counts, widths)]})
        new = next_counts(counts, caps, widths, targets_of(c), step)
        log.info("round %d: %d replicates over %d condition(s); %d condition(s) short of a target", len(rounds),
                 sum(counts), len(counts), sum(a != b for a, b in zip(new, counts)))
        if new == counts:
            break
        previous, counts = counts, new
    report.computed_chunks, report.resumed_chunks = computed, rounds[0]["resumed_chunks"]
    return current, report, records, rounds
