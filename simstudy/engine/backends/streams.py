"""A backend's stream of chunk outputs (:func:`open_stream`): the one place that chooses how the
chunks of a phase are computed."""
from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from simstudy.engine.backends import fork_pool
from simstudy.engine.backends.dask_cluster import dask_outputs
from simstudy.engine.backends.joblib_pool import joblib_outputs
from simstudy.engine.backends.submitit_array import submitit_outputs
from simstudy.engine.chunks import ChunkOutput
from simstudy.studies.base import Chunk

__all__ = ["open_stream"]


def _started(stream: Iterator[ChunkOutput], on_ready: Callable[[], None]) -> Iterator[ChunkOutput]:
    """``stream``, with ``on_ready`` called when its first output is asked for (the workers are up)."""
    on_ready()
    yield from stream


def _fork_pool(workers: int, requested_jobs: int) -> fork_pool.ForkPool | None:
    """The pool for ``workers`` forked workers, or None for this process. The pool is forked now,
    before this process starts any thread of its own (report, progress bar). A single chunk runs in
    the pool too when a pool is kept from an earlier run of this process (a sweep's next job;
    unless ``runner.n_jobs=1`` asks for this process), so that the report's libraries load
    meanwhile."""
    if workers > 1:
        return fork_pool.get_pool(workers)
    kept = fork_pool.current_pool()
    return kept if requested_jobs != 1 and kept is not None and kept.usable else None


def open_stream(backend: str, fn: Callable[[Chunk], Any], chunks: Sequence[Chunk], workers: int, runner: Any,
                on_ready: Callable[[], None], shards: tuple[Any, str, Sequence[str]] | None = None
                ) -> tuple[Iterator[ChunkOutput], bool]:
    """The outputs of ``chunks`` as they finish on ``backend`` (resolved: not ``auto``), and
    whether they are computed in other processes (this process is then free meanwhile).

    Parameters
    ----------
    workers : int
        Workers to use (``runner.n_jobs`` capped by the number of chunks).
    runner : RunnerConfig
        ``n_jobs`` (as asked), ``on_error``, ``scheduler_address``.
    on_ready : callable
        Called once the workers are started, before the first chunk.
    shards : (ShardStore or None, phase, condition keys), optional
        Where the chunks' shards go: ``submitit`` array tasks write them there themselves.
    """
    if backend == "submitit":
        store, phase, keys = shards if shards is not None else (None, "", [])
        return submitit_outputs(fn, chunks, runner.submitit, runner.on_error, store, phase, keys), True
    if backend == "dask":
        return dask_outputs(fn, chunks, workers, runner.on_error, runner.scheduler_address), True
    if backend == "fork":
        pool = _fork_pool(workers, runner.n_jobs)
        return _started(fork_pool.fork_outputs(pool, fn, chunks, runner.on_error), on_ready), pool is not None
    stream = joblib_outputs(fn, chunks, workers, backend, runner.on_error)
    return _started(stream, on_ready), backend == "loky" and workers > 1
