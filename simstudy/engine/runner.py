"""Deal replicates out in chunks, keep every finished chunk on disk, resume what is missing.

A chunk is a contiguous range of replicate indices of one condition. Each replicate draws
its random numbers from its own stream (:mod:`simstudy.rng`), so results do not depend on
how replicates are grouped into chunks, on ``n_jobs`` or on the backend; outputs are put
back in (condition, replicate) order before anything is aggregated.

Shards: with a :class:`~simstudy.engine.shards.ShardStore`, each finished chunk is written at
once, and a later run into the same directory computes only the replicates its valid shards do
not cover, whatever its chunk size.

Failures: a chunk whose worker raises is recorded (not stored, so a resume retries it) and
counts all its replicates as failed; workers may also report per-replicate failures in an
``error`` column, which are stored with the chunk. A resume computes the failed replicates
again, from the same seeds (a success then equals what a clean run gives); the failed records
are kept in their shards and listed in the manifest's ``failure_history``. When at least
:data:`MIN_REPLICATES_FOR_ABORT` replicates are done and the share of them that failed exceeds
``runner.max_failure_rate``, the run stops with :class:`~simstudy.errors.FailureRateExceeded`.
Warnings raised inside workers are counted per (category, message), not printed.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from simstudy.engine.backends import BACKENDS, worker_count
from simstudy.engine.backends.fork_pool import resolve_backend
from simstudy.engine.backends.signals import raise_if_stopped
from simstudy.engine.backends.streams import open_stream
from simstudy.engine.backends.tasks import claim_main_process
from simstudy.engine.chunks import ChunkOutput, RunReport, check_chunk_records, plan_chunks
from simstudy.engine.config import RunnerConfig
from simstudy.engine.progress import BAR_FORMAT, LogProgress, ProgressBar
from simstudy.engine.records import compact_array_cells
from simstudy.engine.shards import ShardStore
from simstudy.engine.stored import part_of
from simstudy.errors import FailureRateExceeded
from simstudy.studies.base import Chunk

__all__ = ["MIN_REPLICATES_FOR_ABORT", "run_chunks"]

log = logging.getLogger("simstudy")

#: The failure rate stops a run once at least this many replicates are done: from the first
#: chunk on with the default chunk size, and for runs of any size above it. Ten is small enough
#: that a part failing on every replicate stops the run after its first chunk, and large enough
#: that one sporadic failure (1 of the first few) does not: at the default rate 0.2, a run stops
#: on 3 failures among its first 10 replicates, which a part failing 2% of the time does with
#: probability 0.1%.
MIN_REPLICATES_FOR_ABORT = 10


_WARNED_CORES: set[int] = set()


def _note_workers(n_jobs: int, workers: int, chunks: int, desc: str, remote: bool) -> None:
    """Warn (once per value) when more workers than cores are asked for; say when chunks cap them."""
    cores = os.cpu_count() or 1
    if not remote and workers > cores and n_jobs not in _WARNED_CORES:
        _WARNED_CORES.add(n_jobs)
        log.warning("runner.n_jobs=%d: %d workers on the %d cores of this machine share the cores, which is slower, "
                    "not faster. runner.n_jobs=-1 starts one worker per core.", n_jobs, workers, cores)
    if not remote and workers < (cores if n_jobs == -1 else n_jobs):
        log.info("%s: %d chunk(s) to compute, so %d worker(s) (runner.n_jobs=%d)", desc, chunks, workers, n_jobs)


@dataclass
class _Tally:
    """What a phase's run has gathered so far: outputs, shard entries, chunk errors, counts."""

    outputs: list[ChunkOutput]
    entries: list[dict[str, Any]]
    chunk_errors: list[dict[str, Any]] = field(default_factory=list)
    done: int = 0
    failed: int = 0
    #: Check each chunk's records (:func:`~simstudy.engine.chunks.check_chunk_records`): a study's phases.
    check_records: bool = False
    #: Keep a stored chunk's :class:`~simstudy.engine.stored.ShardPart`, not its records.
    lazy: bool = False

    def __post_init__(self):
        for out in self.outputs:
            self.done += out.chunk.size
            self.failed += out.failed_replicates

    def add(self, out: ChunkOutput, store: ShardStore | None, phase: str, key: str) -> None:
        """Keep a finished chunk (and store it), or record its chunk-level error."""
        if out.error:
            self.chunk_errors.append({"condition": out.chunk.condition, "start": out.chunk.start,
                                      "stop": out.chunk.stop, "error": out.error})
        else:
            if self.check_records:  # a broken study worker would lose or double replicates
                check_chunk_records(out.records, out.chunk, phase)
            compact_array_cells(out.records)  # held until the run aggregates: a third of the memory
            if out.shard is not None:
                self.entries.append(out.shard)
            elif store is not None:
                self.entries.append(store.save(phase, key, out))
            if self.lazy and store is not None:  # on disk now: keep where, not what
                part = part_of(store.directory / self.entries[-1]["file"], out.chunk.start, out.chunk.stop,
                               out.records, whole=True)
                self.outputs.append(dataclasses.replace(out, records=part))
            else:
                self.outputs.append(out)
        self.done += out.chunk.size
        self.failed += out.failed_replicates

    def check_rate(self, out: ChunkOutput, max_failure_rate: float,
                   describe_failure: Callable[[ChunkOutput], str] | None) -> None:
        """Stop the run when too many of the replicates done so far failed (see the module docstring)."""
        if self.done >= MIN_REPLICATES_FOR_ABORT and self.failed > max_failure_rate * self.done \
                and out.failed_replicates:
            hint = (describe_failure(out) if describe_failure else out.error).rstrip(". ")
            hint = f" {hint}." if hint else ""
            raise FailureRateExceeded(f"{self.failed} of {self.done} replicates failed "
                                      f"({100 * self.failed / self.done:.1f}% > runner.max_failure_rate="
                                      f"{max_failure_rate}, checked once {MIN_REPLICATES_FOR_ABORT} replicates "
                                      f"are done).{hint} Fix the failing part, or set runner.max_failure_rate "
                                      "higher (e.g. 1.0 records every failure and goes on).")


def run_chunks(fn: Callable[[Chunk], Any], replicates_per_condition: Sequence[int],
               runner: RunnerConfig | None = None, *, store: ShardStore | None = None, phase: str = "replicates",
               desc: str | None = None, keys: Sequence[str] | None = None, subjects: tuple[str, ...] = (),
               chunk_cost: Callable[[Chunk], float] | None = None,
               describe_failure: Callable[[ChunkOutput], str] | None = None,
               while_computing: Callable[[], Any] | None = None, check_records: bool = False,
               lazy: bool = False) -> RunReport:
    """Run ``fn`` on every chunk not already stored, store each result, return all of them.

    Parameters
    ----------
    fn : callable
        ``fn(chunk) -> DataFrame`` of records (an ``error`` column marks failed replicates);
        must be picklable for process backends.
    replicates_per_condition : sequence of int
    runner : RunnerConfig, optional
        ``chunk_size``, ``n_jobs`` (at most one worker per chunk to compute; -1: one per core),
        ``backend`` (``auto``: ``fork`` where
        :func:`~simstudy.engine.backends.fork_pool.safe_to_fork`, else ``loky``), ``progress`` (a
        bar on a terminal, else a log line every 10%), ``on_error``, ``max_failure_rate``,
        ``scheduler_address`` (dask) and ``only_replicate`` (that replicate of every condition
        alone, no shards read or written). Default: ``RunnerConfig()``.
    store : ShardStore, optional
        Where finished chunks are kept; without it nothing is written and nothing resumes.
    phase : str
        Shard sub-directory (a study may run several phases); ``desc``: the progress label
        (default: ``phase``).
    keys : sequence of str, optional
        The conditions' keys (they name the shards); default: their positions.
    subjects : tuple of str
        The phase's subjects (see :func:`~simstudy.engine.chunks.plan_chunks`).
    chunk_cost : callable, optional
        A chunk's relative cost (e.g. replicates x sample size). The costliest chunks are then
        dispatched first (longest processing time first), so that the run ends on short chunks
        and the workers finish together instead of one waiting for the other's long last chunk.
        The order changes no number: every replicate's seed derives from its condition and index,
        and the records are put back in (condition, replicate) order. Default: the planned order.
    describe_failure : callable, optional
        Turns a failing chunk output into the "how to reproduce" text of the abort message.
    while_computing : callable, optional
        Called once, in this process, just before the chunks are dispatched to worker processes:
        room for work the caller would otherwise do after the run, such as loading the report's
        libraries, while this process waits for the workers anyway (their start, then their
        chunks). Not called for in-process runs (it would compete with the computation in the
        same interpreter), nor when every chunk is already stored.
    check_records : bool
        Stop the run (:class:`~simstudy.errors.PartOutputError`) when a chunk's records are not
        one DataFrame row per replicate (:func:`~simstudy.engine.chunks.check_chunk_records`):
        on for a study's phases; ``fn`` of other callers may return anything.
    lazy : bool
        With a ``store``: every output's ``records`` is the
        :class:`~simstudy.engine.stored.ShardPart` that holds them on disk, so the memory the run
        needs does not grow with its replicates (:mod:`simstudy.engine.stored`). Without a
        store, the records are held as always.
    """
    runner = runner if runner is not None else RunnerConfig()
    claim_main_process()
    if runner.backend not in BACKENDS:
        raise ValueError(f"runner.backend={runner.backend!r}: choose one of {BACKENDS}.")
    desc = desc or phase
    keys = [str(c) for c in range(len(replicates_per_condition))] if keys is None else list(keys)
    replicate_range = None
    if runner.only_replicate is not None:  # a one-replicate debugging run neither reads nor writes shards
        replicate_range, store = (runner.only_replicate, runner.only_replicate + 1), None
    lazy = lazy and store is not None
    loaded, entries = ((store.load(phase, keys, replicates_per_condition, lazy=True) if lazy else
                        store.load(phase, keys, replicates_per_condition)) if store is not None else ([], []))
    chunks = plan_chunks(replicates_per_condition, runner.chunk_size, [o.chunk for o in loaded], replicate_range,
                         subjects)
    if chunk_cost is not None:
        chunks.sort(key=chunk_cost, reverse=True)  # stable: equal costs keep the planned order
    if loaded:
        log.info("%s: resuming, %d chunk(s) loaded from %s, %d to compute", desc, len(loaded),
                 store.directory / phase, len(chunks))
    tally = _Tally(list(loaded), entries, check_records=check_records, lazy=lazy)
    backend = resolve_backend(runner.backend, worker_count(runner.n_jobs, max(len(chunks), 1)))
    if chunks:
        _compute(fn, chunks, runner, backend, tally, _Where(store, phase, keys, desc), chunk_cost, describe_failure,
                 while_computing)
    tally.outputs.sort(key=lambda o: o.chunk)
    order = {key: i for i, key in enumerate(keys)}
    tally.entries.sort(key=lambda e: (order[e["condition_key"]], e["start"], e["subjects"]))
    history = store.failure_history if store is not None else []
    if history:
        log.info("%s: %d failed replicate record(s) of earlier runs computed again", desc, len(history))
    return RunReport(tally.outputs, tally.entries, len(loaded), len(chunks), tally.chunk_errors, backend, history)


@dataclass(frozen=True)
class _Where:
    """Where a phase's outputs go: its shard store, phase name, condition keys and progress label."""

    store: ShardStore | None
    phase: str
    keys: list[str]
    desc: str


def _compute(fn, chunks: list[Chunk], runner: RunnerConfig, backend: str, tally: _Tally, where: _Where,
             chunk_cost, describe_failure, while_computing) -> None:
    """Compute ``chunks`` on ``backend``, gathering each output into ``tally`` as it finishes."""
    workers = worker_count(runner.n_jobs, len(chunks))
    _note_workers(runner.n_jobs, workers, len(chunks), where.desc,
                  remote=backend == "dask" and bool(runner.scheduler_address))
    work = chunk_cost if chunk_cost is not None else (lambda c: c.size)
    logged = LogProgress(sum(c.size for c in chunks), where.desc, enabled=False,
                         total_work=float(sum(work(c) for c in chunks)))
    stream, in_workers = open_stream(backend, fn, chunks, workers, runner, on_ready=logged.restart_clock,
                                     shards=(where.store, where.phase, where.keys))
    if while_computing is not None and in_workers:
        while_computing()  # before the first chunk: runs while the workers start and compute
    with ProgressBar(total=logged.total, desc=where.desc, unit="rep", disable=None if runner.progress else True,
                     smoothing=0.05, dynamic_ncols=True, bar_format=BAR_FORMAT) as bar:
        logged.enabled = runner.progress and bar.disable
        try:
            for out in stream:
                raise_if_stopped()
                tally.add(out, where.store, where.phase, where.keys[out.chunk.condition])
                logged.update(out.chunk.size, work(out.chunk))
                eta = logged.eta()
                if math.isfinite(eta):
                    bar.set_postfix_str(f"ETA {ProgressBar.format_interval(eta)}", refresh=False)
                bar.update(out.chunk.size)
                tally.check_rate(out, runner.max_failure_rate, describe_failure)
        finally:
            _close(stream)


def _close(stream: Iterator[ChunkOutput]) -> None:
    """Stop a stream (after an abort too), without joblib's "tasks executed but not used" warning."""
    if hasattr(stream, "close"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stream.close()
