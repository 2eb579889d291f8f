"""The dask.distributed backend: a LocalCluster (or a running scheduler) computing the chunks."""
from __future__ import annotations

import logging
import os
from typing import Any, Callable, Iterator, Sequence

from simstudy.engine.backends.tasks import run_task, worker_lost
from simstudy.engine.chunks import ChunkOutput
from simstudy.studies.base import Chunk

__all__ = ["dask_available", "dask_outputs"]


def dask_available() -> bool:
    """Whether dask.distributed can be imported (``pip install 'simstudy[dask]'``)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


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


def _connection_lost(address: str, exc: BaseException) -> Exception:
    """The error of a run whose scheduler went away: a lost worker is rescheduled by the scheduler
    itself, but a lost scheduler takes every queued and running chunk with it."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    return worker_lost(f"the connection to the dask scheduler {address} was lost ({text})")


def dask_outputs(fn: Callable[[Chunk], Any], chunks: Sequence[Chunk], n_jobs: int, on_error: str,
                 scheduler_address: str | None) -> Iterator[ChunkOutput]:
    """The chunks' outputs as they finish, from ``scheduler_address`` or a LocalCluster of
    ``n_jobs`` one-thread worker processes started (and closed) here."""
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
        futures = [client.submit(run_task, remote_fn, c, on_error, pure=False) for c in chunks]
        for future in as_completed(futures):
            try:
                out = future.result()
            except Exception as exc:
                if future.status == "error":  # the task itself raised (runner.on_error=raise)
                    raise
                raise _connection_lost(scheduler_address or "of the LocalCluster", exc) from None
            yield out
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
