"""Deal replicates out in chunks, keep every finished chunk on disk, resume what is missing.

A chunk is a contiguous range of replicate indices of one condition. Each replicate draws
its random numbers from its own stream (:mod:`simstudy.rng`), so results do not depend on
how replicates are grouped into chunks, on ``n_jobs`` or on the backend; outputs are put
back in (condition, replicate) order before anything is aggregated.

Shards: with a :class:`ShardStore`, each finished chunk is written at once as
``<phase>/c<condition>_r<start>-<stop>.parquet`` (to a temporary name, then renamed) with a
sidecar ``.json`` holding its SHA-256, row count, timings and warning counts. A later run
into the same directory loads the shards whose checksum matches, reports and deletes the
others (truncated or corrupted), and computes only the replicates not covered, whatever its
chunk size.

Failures: a chunk whose worker raises is recorded (not stored, so a resume retries it) and
counts all its replicates as failed; workers may also report per-replicate failures in an
``error`` column. When the share of failed replicates exceeds ``max_failure_rate`` the run
stops with :class:`FailureRateExceeded`. Warnings raised inside workers are counted per
(category, message), not printed.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import pandas as pd
from joblib import Parallel, delayed
from tqdm.auto import tqdm as _tqdm

from simstudy.engine.backends import fork_pool as forkpool
from simstudy.errors import FailureRateExceeded, WorkerLost
from simstudy.engine.backends.warmup import ignore_interrupts_in_worker, wait_for_workers

__all__ = ["Chunk", "ChunkOutput", "FailureRateExceeded", "ShardStore", "plan_chunks", "run_chunks",
           "BACKENDS", "worker_count"]

log = logging.getLogger(__name__)

BACKENDS = ("auto", "loky", "fork", "threading", "sequential", "dask")  # as simstudy.engine.config.BACKENDS


@dataclass(frozen=True, order=True)
class Chunk:
    """Replicates ``start <= r < stop`` of condition number ``condition``; with ``subjects``,
    only those parts of each replicate's records (see :class:`simstudy.studies.base.Phase`)."""

    condition: int
    start: int
    stop: int
    subjects: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return self.stop - self.start

    @property
    def name(self) -> str:
        return f"c{self.condition:04d}_r{self.start:07d}-{self.stop:07d}"


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

    @property
    def failed_replicates(self) -> int:
        if self.error:
            return self.chunk.size
        if isinstance(self.records, pd.DataFrame) and "error" in self.records:
            return int((self.records["error"].fillna("") != "").sum())
        return 0


# ----------------------------------------------------------------------------- planning
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


# ----------------------------------------------------------------------------- shards
def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class ShardStore:
    """Finished chunks on disk, one Parquet file and one JSON sidecar per chunk.

    A shard is named by its condition's key (not its position in the design, so a run
    extended by more conditions keeps its shards), its replicate range and its subjects. The
    sidecar holds the SHA-256 of the Parquet file, the row count, the timings, the warnings and
    the identity hash of the run that wrote it: a shard of another run is never loaded.

    Parameters
    ----------
    directory : path-like
        Usually ``<run_dir>/shards``; one sub-directory per phase.
    run_hash : str
        Identity of the run writing and reading the shards (see :mod:`simstudy.engine.rundir`).
    """

    def __init__(self, directory: str | os.PathLike, run_hash: str = ""):
        self.directory = Path(directory)
        self.run_hash = run_hash

    def _paths(self, phase: str, key: str, chunk: Chunk) -> tuple[Path, Path]:
        stem = f"{key[:16]}_r{chunk.start:07d}-{chunk.stop:07d}"
        if chunk.subjects:
            stem += "_s" + hashlib.sha256("\n".join(chunk.subjects).encode()).hexdigest()[:8]
        base = self.directory / phase / stem
        return base.with_suffix(".parquet"), base.with_suffix(".json")

    def save(self, phase: str, key: str, out: ChunkOutput) -> dict[str, Any]:
        """Write one chunk atomically (temporary name, then rename); returns its index entry."""
        data, meta = self._paths(phase, key, out.chunk)
        data.parent.mkdir(parents=True, exist_ok=True)
        tmp = data.with_name(data.name + f".tmp{os.getpid()}")
        out.records.to_parquet(tmp, index=False)
        os.replace(tmp, data)
        entry = {"file": str(data.relative_to(self.directory)), "sha256": _sha256(data), "rows": int(len(out.records)),
                 "condition_key": key, "start": out.chunk.start, "stop": out.chunk.stop,
                 "subjects": list(out.chunk.subjects), "run_hash": self.run_hash,
                 "wall_time": out.wall_time, "cpu_time": out.cpu_time, "warnings": out.warnings}
        tmp_meta = meta.with_name(meta.name + f".tmp{os.getpid()}")
        tmp_meta.write_text(json.dumps(entry))
        os.replace(tmp_meta, meta)  # the sidecar is written last: a shard without it is incomplete
        return entry

    def _check(self, data: Path) -> tuple[dict[str, Any] | None, pd.DataFrame | None, str]:
        """(entry, records, problem) of one shard file; problem is "" for a valid shard."""
        try:
            entry = json.loads(data.with_suffix(".json").read_text())
            if entry.get("run_hash") != self.run_hash:
                return entry, None, (f"written by another run configuration (run hash {entry.get('run_hash')}, "
                                     f"this run {self.run_hash})")
            if _sha256(data) != entry["sha256"]:
                return entry, None, "checksum mismatch (truncated or corrupted)"
            records = pd.read_parquet(data)
            if len(records) != entry["rows"]:
                return entry, None, f"{len(records)} rows, expected {entry['rows']}"
            return entry, records, ""
        except FileNotFoundError:
            return None, None, "no sidecar (interrupted while writing)"
        except Exception as exc:  # unreadable JSON or Parquet
            return None, None, f"unreadable ({type(exc).__name__}: {exc})"

    def load(self, phase: str, keys: Sequence[str], replicates: Sequence[int]) -> tuple[list[ChunkOutput],
                                                                                      list[dict[str, Any]]]:
        """Valid shards of a phase for the conditions with these ``keys``.

        Shards of other conditions are left alone (a run can be narrowed and widened again);
        invalid ones are reported, deleted and left to recompute. Replicates at or beyond a
        condition's ``replicates`` are dropped from the loaded records (a run can be shortened).

        Returns
        -------
        outputs : list of ChunkOutput (``chunk.condition`` indexes ``keys``)
        entries : list of dict
            The index entries (file, sha256, rows, ...) of the shards used.
        """
        folder = self.directory / phase
        outputs, entries = [], []
        if not folder.is_dir():
            return outputs, entries
        index = {key: i for i, key in enumerate(keys)}
        for tmp in folder.glob("*.tmp*"):
            tmp.unlink()
        for data in sorted(folder.glob("*.parquet")):
            entry, records, problem = self._check(data)
            if entry is not None and entry.get("condition_key") not in index and not problem:
                continue
            if problem:
                log.warning("shard %s is invalid: %s; it will be recomputed", data, problem)
                data.unlink(missing_ok=True)
                data.with_suffix(".json").unlink(missing_ok=True)
                continue
            c = index[entry["condition_key"]]
            start, stop = entry["start"], min(entry["stop"], replicates[c])
            if start >= stop:
                continue
            if stop < entry["stop"]:
                if "replicate" not in records:
                    continue  # cannot be cut: recompute the part still wanted
                records = records[records["replicate"] < stop].reset_index(drop=True)
            chunk = Chunk(c, start, stop, tuple(entry.get("subjects", ())))
            outputs.append(ChunkOutput(chunk, records, entry["wall_time"], entry["cpu_time"], "",
                                       entry.get("warnings", {})))
            entries.append(entry)
        return outputs, entries


# ----------------------------------------------------------------------------- execution
def worker_count(n_jobs: int, chunks: int) -> int:
    """Workers to start: ``n_jobs`` (-1: one per core), but never more than there are chunks."""
    cores = os.cpu_count() or 1
    wanted = cores if n_jobs == -1 else int(n_jobs)
    return max(1, min(wanted, chunks))


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


def _warning_key(w: warnings.WarningMessage) -> str:
    text = str(w.message).strip().splitlines()
    return f"{w.category.__name__}: {text[0][:200] if text else ''}"


def _timed(fn: Callable[[Chunk], Any], chunk: Chunk, on_error: str = "record") -> ChunkOutput:
    ignore_interrupts_in_worker()
    wall, cpu = time.perf_counter(), time.process_time()
    counts: dict[str, int] = {}
    records, error = None, ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            records = fn(chunk)
        except Exception as exc:
            if on_error == "raise":
                raise
            error = f"{type(exc).__name__}: {exc}"
    for w in caught:
        key = _warning_key(w)
        counts[key] = counts.get(key, 0) + 1
    return ChunkOutput(chunk, records, time.perf_counter() - wall, time.process_time() - cpu, error, counts)


def _timed_chunk(chunk: Chunk, fn: Callable[[Chunk], Any], on_error: str) -> ChunkOutput:
    return _timed(fn, chunk, on_error)


def _lost(message: str) -> WorkerLost:
    return WorkerLost(f"{message}. The chunks finished before are kept; run the same command again to resume. If "
                      "the system killed the worker for lack of memory, use fewer workers (runner.n_jobs) or smaller "
                      "chunks (runner.chunk_size).")


def _describe_chunk(chunk: Chunk) -> str:
    return f"replicates {chunk.start}-{chunk.stop - 1} of condition {chunk.condition}"


def _joblib_outputs(fn, chunks, n_jobs, backend, on_error,
                    on_ready: Callable[[], None] | None = None) -> Iterator[ChunkOutput]:
    """The chunks' outputs as they finish; ``on_ready`` is called once the workers are free to
    compute (after a warm-up started by the CLI)."""
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    if backend == "sequential":
        n_jobs, backend = 1, "loky"
    wait_for_workers()  # a warm-up started by the CLI uses the same executor: never both at once
    if on_ready is not None:
        on_ready()
    parallel = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")
    try:
        yield from parallel(delayed(_timed)(fn, c, on_error) for c in chunks)
    except TerminatedWorkerError as exc:
        raise _lost(f"a worker process died while computing one of the chunks ({' '.join(str(exc).split())[:300]})"
                    ) from None


def _fork_outputs(pool, fn, chunks, on_error, on_ready: Callable[[], None] | None = None) -> Iterator[ChunkOutput]:
    """The chunks' outputs as they finish, from a :class:`simstudy.engine.backends.fork_pool.ForkPool` (``None``:
    one worker, in this process, as joblib runs ``n_jobs=1``)."""
    wait_for_workers()  # a warm-up started by the CLI runs in the same pool: its workers are ready
    if on_ready is not None:
        on_ready()
    if pool is None:
        for chunk in chunks:
            yield _timed(fn, chunk, on_error)
        return
    try:
        yield from pool.results(_timed_chunk, chunks, fn, on_error, describe=_describe_chunk)
    except WorkerLost as exc:
        raise _lost(str(exc)) from None


def _log_file() -> str | None:
    """The file the run logs to (``RUN_DIR/cli.log``, attached by the engine), if any."""
    return next((h.baseFilename for h in logging.getLogger().handlers if isinstance(h, logging.FileHandler)), None)


def _quiet_cluster(factory: Callable[..., Any], **kwargs: Any) -> Any:
    """Start a dask LocalCluster whose worker processes stay off the terminal.

    The worker processes inherit two things from this process while they start: SIGINT ignored
    (on Ctrl-C only this process stops the run; the workers print no KeyboardInterrupt
    tracebacks) and, when the run logs to a file, that file as their stderr (their own log lines,
    INFO included, go to ``cli.log``, not to the terminal).
    """
    import signal
    import sys
    import threading

    if threading.current_thread() is not threading.main_thread():
        return factory(**kwargs)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    log_file, saved = _log_file(), None
    if log_file is not None:
        sys.stderr.flush()
        saved, target = os.dup(2), os.open(log_file, os.O_WRONLY | os.O_APPEND)
        os.dup2(target, 2)
        os.close(target)
    try:
        return factory(**kwargs)
    finally:
        if saved is not None:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        signal.signal(signal.SIGINT, previous)


def _dask_outputs(fn, chunks, n_jobs, on_error, scheduler_address) -> Iterator[ChunkOutput]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("runner.backend=dask needs dask.distributed: pip install 'simstudy[dask]'") from exc
    cluster = None
    if scheduler_address:
        client = Client(scheduler_address)
    else:
        workers = n_jobs if n_jobs and n_jobs > 0 else (os.cpu_count() or 1)
        cluster = _quiet_cluster(LocalCluster, n_workers=workers, threads_per_worker=1, processes=True,
                                 dashboard_address=None, host="127.0.0.1")
        client = Client(cluster)
    finished = False
    try:
        remote_fn = client.scatter(fn, broadcast=True)
        futures = [client.submit(_timed, remote_fn, c, on_error, pure=False) for c in chunks]
        for future in as_completed(futures):
            yield future.result()
        finished = True
    finally:
        # after an abort (Ctrl-C, too many failures) the teardown's warnings ("worker process still
        # alive after 4 s, killing", cancelled tasks) are expected and not shown
        quiet = logging.getLogger("distributed")
        level = quiet.level
        if not finished:
            quiet.setLevel(logging.ERROR)
        try:
            client.close()
            if cluster is not None:
                cluster.close()
        finally:
            quiet.setLevel(level)


def _eta(elapsed: float, work_done: float, total_work: float) -> float:
    """Seconds left if the rest of the work goes at the pace so far (work: the chunks' costs, so
    that a run dispatching its costliest chunks first is not judged by their pace alone)."""
    return elapsed * (total_work - work_done) / work_done if work_done > 0 else float("inf")


#: The terminal bar: replicates done, and the ETA from the chunks' costs (:func:`_eta`).
class tqdm(_tqdm):
    """tqdm without its monitor thread (a chunk updates the bar anyway): a process that runs one
    thread may fork its next workers (:func:`simstudy.engine.backends.fork_pool.safe_to_fork`)."""

    monitor_interval = 0


_BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}{postfix}]"


class _LogProgress:
    """The pace of a run, for the ETA, and progress lines in the log for runs not attached to a
    terminal (every 10% or 60 s).

    The pace is measured from :meth:`restart_clock` (the workers ready) when it is called: a
    warm-up of the workers before the first chunk would otherwise count as computing time, and
    the first ETA of a short run would come out several times too long."""

    def __init__(self, total: int, desc: str, enabled: bool, total_work: float | None = None):
        self.total, self.desc, self.enabled = total, desc, enabled
        self.total_work = float(total if total_work is None else total_work)
        self.done, self.work_done = 0, 0.0
        self.start = self.last = time.perf_counter()
        self.next_fraction = 0.1

    def restart_clock(self) -> None:
        """Measure the pace from now on (the workers are ready; nothing is done yet)."""
        self.start = self.last = time.perf_counter()

    def eta(self) -> float:
        """Seconds left at the pace so far (:func:`_eta`)."""
        return _eta(time.perf_counter() - self.start, self.work_done, self.total_work)

    def update(self, k: int, work: float | None = None) -> None:
        self.done += k
        self.work_done += k if work is None else work
        now = time.perf_counter()
        if not self.enabled or self.total == 0:
            return
        if self.done / self.total >= self.next_fraction or now - self.last >= 60 or self.done == self.total:
            rate = self.done / max(now - self.start, 1e-9)
            eta = self.eta()
            log.info("%s: %d/%d (%.0f%%), %.1f rep/s, ETA %.0f s", self.desc, self.done, self.total,
                     100 * self.done / self.total, rate, eta)
            self.last = now
            while self.next_fraction <= self.done / self.total:
                self.next_fraction += 0.1


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

    @property
    def warnings(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for o in self.outputs:
            for k, v in o.warnings.items():
                total[k] = total.get(k, 0) + v
        return total

    @property
    def records(self) -> pd.DataFrame:
        frames = [o.records for o in self.outputs if o.records is not None]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def run_chunks(fn: Callable[[Chunk], Any], replicates_per_condition: Sequence[int], *, chunk_size: int = 250,
               n_jobs: int = -1, backend: str = "auto", progress: bool = True, desc: str = "replicates",
               store: ShardStore | None = None, phase: str = "replicates", on_error: str = "record",
               max_failure_rate: float = 1.0, min_replicates_for_abort: int = 50,
               replicate_range: tuple[int, int] | None = None, scheduler_address: str | None = None,
               describe_failure: Callable[[ChunkOutput], str] | None = None,
               keys: Sequence[str] | None = None, subjects: tuple[str, ...] = (),
               while_computing: Callable[[], Any] | None = None,
               chunk_cost: Callable[[Chunk], float] | None = None) -> RunReport:
    """Run ``fn`` on every chunk not already stored, store each result, return all of them.

    Parameters
    ----------
    fn : callable
        ``fn(chunk) -> DataFrame`` of records (an ``error`` column marks failed replicates);
        must be picklable for process backends.
    replicates_per_condition : sequence of int
    chunk_size, n_jobs : int
    backend : {"auto", "loky", "fork", "threading", "sequential", "dask"}
        ``auto``: ``fork`` where :func:`simstudy.engine.backends.fork_pool.safe_to_fork` (Linux, one thread), else
        ``loky`` (see :mod:`simstudy.engine.backends.fork_pool`).
    progress : bool
        A tqdm bar (done / total, rate, ETA) on a terminal, else a log line every 10%.
    store : ShardStore, optional
        Where finished chunks are kept; without it nothing is written and nothing resumes.
    phase : str
        Shard sub-directory (a study may run several phases).
    on_error : {"record", "raise"}
    max_failure_rate : float
        Abort (:class:`FailureRateExceeded`) once at least ``min_replicates_for_abort``
        replicates are done and more than this share of them failed.
    replicate_range : (start, stop), optional
        Restrict every condition to these replicates (debugging one replicate).
    scheduler_address : str, optional
        dask backend: connect to this scheduler; a LocalCluster is started otherwise.
    describe_failure : callable, optional
        Turns a failing chunk output into the "how to reproduce" text of the abort message.
    keys : sequence of str, optional
        The conditions' keys (they name the shards); default: their positions.
    subjects : tuple of str
        The phase's subjects (see :func:`plan_chunks`).
    while_computing : callable, optional
        Called once, in this process, just before the chunks are dispatched to worker processes:
        room for work the caller would otherwise do after the run, such as loading the report's
        libraries, while this process waits for the workers anyway (their warm-up, then their
        chunks). Not called for in-process runs (it would compete with the computation in the
        same interpreter), nor when every chunk is already stored.
    chunk_cost : callable, optional
        A chunk's relative cost (e.g. replicates x sample size). The costliest chunks are then
        dispatched first (longest processing time first), so that the run ends on short chunks
        and the workers finish together instead of one waiting for the other's long last chunk.
        The order changes no number: every replicate's seed derives from its condition and index,
        and the records are put back in (condition, replicate) order. Default: the planned order.

    Workers: at most one per chunk to compute (``n_jobs=-1``: one per core).
    """
    if backend not in BACKENDS:
        raise ValueError(f"runner.backend={backend!r}: choose one of {BACKENDS}.")
    requested_jobs = n_jobs
    keys = [str(c) for c in range(len(replicates_per_condition))] if keys is None else list(keys)
    loaded, entries = store.load(phase, keys, replicates_per_condition) if store is not None else ([], [])
    if replicate_range is not None:
        loaded, entries = [], []  # a one-replicate debugging run neither reads nor writes shards
        store = None
    chunks = plan_chunks(replicates_per_condition, chunk_size, [o.chunk for o in loaded], replicate_range, subjects)
    if chunk_cost is not None:
        chunks.sort(key=chunk_cost, reverse=True)  # stable: equal costs keep the planned order
    if loaded:
        log.info("%s: resuming, %d chunk(s) loaded from %s, %d to compute", desc, len(loaded),
                 store.directory / phase, len(chunks))
    total = sum(c.size for c in chunks)
    outputs: list[ChunkOutput] = list(loaded)
    chunk_errors: list[dict[str, Any]] = []
    done = failed = 0
    for o in loaded:
        done += o.chunk.size
        failed += o.failed_replicates
    backend = forkpool.resolve_backend(backend, worker_count(n_jobs, max(len(chunks), 1)))
    if chunks:
        workers = worker_count(n_jobs, len(chunks))
        _note_workers(n_jobs, workers, len(chunks), desc, remote=backend == "dask" and bool(scheduler_address))
        n_jobs = workers
        work = chunk_cost if chunk_cost is not None else (lambda c: c.size)
        logged = _LogProgress(total, desc, enabled=False, total_work=float(sum(work(c) for c in chunks)))
        if backend == "dask":
            stream = _dask_outputs(fn, chunks, n_jobs, on_error, scheduler_address)
        elif backend == "fork":
            # the pool is forked here, before this process starts any thread of its own (report, progress bar);
            # a single chunk runs in the pool too when the command has forked a worker for it (unless
            # runner.n_jobs=1 asks for this process), so that the report's libraries load meanwhile
            kept = forkpool.current_pool()
            if n_jobs > 1:
                pool = forkpool.get_pool(n_jobs)
            elif requested_jobs != 1 and kept is not None and kept.usable:
                pool = kept
            else:
                pool = None
            stream = _fork_outputs(pool, fn, chunks, on_error, on_ready=logged.restart_clock)
        else:
            stream = _joblib_outputs(fn, chunks, n_jobs, backend, on_error, on_ready=logged.restart_clock)
        if while_computing is not None and (backend == "dask" or (backend == "loky" and n_jobs > 1)
                                            or (backend == "fork" and pool is not None)):
            while_computing()  # before the first chunk: runs while the workers finish warming up and compute
        with tqdm(total=total, desc=desc, unit="rep", disable=None if progress else True,
                  smoothing=0.05, dynamic_ncols=True, bar_format=_BAR_FORMAT) as bar:
            logged.enabled = progress and bar.disable
            try:
                for out in stream:
                    if out.error:
                        chunk_errors.append({"condition": out.chunk.condition, "start": out.chunk.start,
                                             "stop": out.chunk.stop, "error": out.error})
                    else:
                        outputs.append(out)
                        if store is not None:
                            entries.append(store.save(phase, keys[out.chunk.condition], out))
                    done += out.chunk.size
                    failed += out.failed_replicates
                    logged.update(out.chunk.size, work(out.chunk))
                    eta = logged.eta()
                    if math.isfinite(eta):
                        bar.set_postfix_str(f"ETA {tqdm.format_interval(eta)}", refresh=False)
                    bar.update(out.chunk.size)
                    if done >= min_replicates_for_abort and failed > max_failure_rate * done and out.failed_replicates:
                        hint = describe_failure(out) if describe_failure else out.error
                        raise FailureRateExceeded(
                            f"{failed} of {done} replicates failed ({100 * failed / done:.1f}% > "
                            f"runner.max_failure_rate={max_failure_rate}). {hint}")
            finally:
                if hasattr(stream, "close"):
                    with warnings.catch_warnings():  # joblib's "tasks executed but not used" after an abort
                        warnings.simplefilter("ignore")
                        stream.close()
    outputs.sort(key=lambda o: o.chunk)
    order = {key: i for i, key in enumerate(keys)}
    entries.sort(key=lambda e: (order[e["condition_key"]], e["start"], e["subjects"]))
    return RunReport(outputs, entries, len(loaded), len(chunks), chunk_errors, backend)
