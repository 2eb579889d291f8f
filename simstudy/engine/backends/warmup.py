"""Start the worker processes while the main process is still setting up.

A run's fixed cost is dominated by imports: the main process imports Hydra, pandas and simstudy,
then each worker imports its share and loads the compiled numba kernels from the cache.
:func:`prestart_workers` starts the workers right after the configuration is checked, with a task
that imports the study's module and calls its ``warm_up()`` (tiny inputs through the study's
kernels), so that the workers warm up while the main process loads the data. With the ``fork``
backend (:mod:`simstudy.engine.backends.fork_pool`; ``auto`` on Linux) the workers are forked at that moment and
inherit the main process's imports; with ``loky`` they are fresh interpreters started from a
background thread. The runner's own call then reuses the same workers (the kept fork pool, or
loky's reusable executor with the same ``n_jobs``); :func:`wait_for_workers` is called before it
so that the warm-up and the chunks never overlap.
"""
from __future__ import annotations

import importlib
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any, NamedTuple

from simstudy.engine.backends import worker_count
from simstudy.engine.backends.tasks import ignore_interrupts_in_worker

log = logging.getLogger("simstudy")

__all__ = ["cancel_workers", "kill_workers", "prestart_workers", "start_workers_early", "wait_for_workers",
           "warm_worker"]


class _ForkWarmUp(NamedTuple):
    """A warm-up running in forked workers: one future per worker, and its barrier folder."""

    futures: list[Future]
    barrier: str


_pending: threading.Thread | None = None
_fork_warm_up: _ForkWarmUp | None = None
_worker_pids: list[int] = []

def warm_worker(target: str, barrier: str | None = None, parties: int = 1, timeout: float = 30.0) -> int:
    """Import a study (``"package.module:StudyClass"``, or a module) in this process and run its
    ``warm_up()``; returns the pid.

    With ``barrier`` (a directory) the call then waits until ``parties`` distinct processes
    have checked in there (or ``timeout`` seconds), so that each of the ``parties`` warm-up
    tasks runs in a different worker.
    """
    ignore_interrupts_in_worker()
    module_name, _, attr = target.partition(":")
    obj = importlib.import_module(module_name)
    if attr:
        obj = getattr(obj, attr)
    warm_up = getattr(obj, "warm_up", None)
    if warm_up is not None:
        warm_up()
    pid = os.getpid()
    if barrier is not None:
        Path(barrier, str(pid)).touch()
        deadline = time.monotonic() + timeout
        while len(os.listdir(barrier)) < parties and time.monotonic() < deadline:
            time.sleep(0.01)
    return pid


def prestart_workers(n_jobs: int, backend: str, target: str) -> bool:
    """Start ``n_jobs`` workers warming the study ``target``; returns whether workers are being started.

    ``backend="fork"``: the workers are forked now (:mod:`simstudy.engine.backends.fork_pool`) and warm up in
    parallel, one worker too (a run of one chunk: the main process loads the report meanwhile);
    ``"loky"``: loky starts them from a background thread, from two workers on (one loky worker
    costs more to start than it saves). Nothing happens for other backends.
    """
    global _pending, _fork_warm_up
    from joblib import effective_n_jobs

    n_workers = effective_n_jobs(n_jobs)
    busy = _pending is not None or _fork_warm_up is not None
    if backend not in ("loky", "fork") or n_workers < (1 if backend == "fork" else 2) or busy:
        return False
    if backend == "fork":
        from simstudy.engine.backends.fork_pool import get_pool

        barrier = tempfile.mkdtemp(prefix="simstudy-warm-")
        pool = get_pool(n_workers)
        _fork_warm_up = _ForkWarmUp([pool.submit(warm_worker, target, barrier, n_workers) for _ in range(n_workers)],
                                    barrier)
        return True

    def start() -> None:
        from joblib import Parallel, delayed

        try:
            with tempfile.TemporaryDirectory(prefix="simstudy-warm-") as barrier:
                pids = Parallel(n_jobs=n_jobs, backend="loky")(
                    delayed(warm_worker)(target, barrier, n_workers) for _ in range(n_workers))
            _worker_pids[:] = pids
        except Exception as exc:  # the run itself will report real problems
            log.debug("worker warm-up failed: %s", exc)

    _pending = threading.Thread(target=start, name="simstudy-warm-up", daemon=True)
    _pending.start()
    return True


def start_workers_early(target: str, runner: Any, chunk_bound: int | None = None) -> bool:
    """Start (and warm) the workers of a run of the study ``target`` (``"module:Class"``) while this
    process loads the data; returns whether workers are being started.

    ``chunk_bound``: at most this many chunks (no more workers than chunks). Nothing starts for a
    run in this process (``runner.n_jobs=1``, a one-replicate debugging run) or on a backend
    without a process pool of its own (threading, dask).
    """
    from simstudy.engine.backends.fork_pool import resolve_backend
    from simstudy.engine.backends.joblib_pool import quiet_loky_tracker

    n_jobs = worker_count(runner.n_jobs, chunk_bound) if chunk_bound else runner.n_jobs
    backend = resolve_backend(runner.backend, n_jobs)  # auto: fork here (one thread so far) on Linux
    if runner.only_replicate is not None or runner.n_jobs == 1 or backend not in ("loky", "fork"):
        return False
    if backend == "loky":
        quiet_loky_tracker()
    return prestart_workers(n_jobs, backend, target)


def wait_for_workers() -> list[int]:
    """Wait for a warm-up started by :func:`prestart_workers`; returns the warmed workers' pids."""
    global _pending, _fork_warm_up
    if _pending is not None:
        _pending.join()
        _pending = None
    if _fork_warm_up is not None:
        warm_up, _fork_warm_up = _fork_warm_up, None
        pids = []
        for future in warm_up.futures:
            try:
                pids.append(future.result())
            except Exception as exc:  # the run itself will report real problems
                log.debug("worker warm-up failed: %s", exc)
        _worker_pids[:] = pids
        shutil.rmtree(warm_up.barrier, ignore_errors=True)
    return list(_worker_pids)


def cancel_workers(timeout: float = 10.0) -> None:
    """Stop a warm-up started by :func:`prestart_workers` without waiting for it to finish.

    Used when the run is refused after the workers were started (bad data, say): the workers
    are killed, so the refusal is not delayed by their imports and warm-up.
    """
    global _pending, _fork_warm_up
    if _fork_warm_up is not None:
        from simstudy.engine.backends.fork_pool import kill_pool

        kill_pool()
        shutil.rmtree(_fork_warm_up.barrier, ignore_errors=True)
        _fork_warm_up = None
    if _pending is None:
        return
    deadline = time.monotonic() + timeout
    killed = None
    while _pending.is_alive() and time.monotonic() < deadline:
        executor = _reusable_executor()   # the one the warm-up's Parallel call uses
        if executor is not None and executor is not killed:
            kill_workers(wait=False)
            killed = executor
        _pending.join(0.05)
    _pending = None


def kill_workers(wait: bool = True) -> None:
    """Kill the run's workers: loky's reusable executor's and the kept fork pool's, if any."""
    forkpool = sys.modules.get("simstudy.engine.backends.fork_pool")
    if forkpool is not None:
        forkpool.kill_pool()
    executor = _reusable_executor()
    if executor is None:
        return
    try:
        executor.shutdown(wait=wait, kill_workers=True)
    except Exception as exc:  # pragma: no cover - depends on loky's internals
        log.debug("could not stop the loky workers: %s", exc)


def _reusable_executor():
    """loky's reusable executor if this process created one (never imports loky itself)."""
    module = sys.modules.get("joblib.externals.loky.reusable_executor")
    return getattr(module, "_executor", None)
