"""One chunk in a worker: timed, its warnings counted, its failure recorded (:func:`run_task`).

Every backend runs :func:`run_task` (or :func:`run_chunk`, the same with the chunk first) in its
workers, and turns a dead worker into :func:`worker_lost`'s message.
"""
from __future__ import annotations

import os
import signal
import threading
import time
import warnings
from typing import Any, Callable

from simstudy.engine.backends.signals import watch_parent
from simstudy.engine.chunks import ChunkOutput
from simstudy.errors import WorkerLost
from simstudy.studies.base import Chunk

__all__ = ["claim_main_process", "describe_chunk", "ignore_interrupts_in_worker", "run_chunk", "run_task",
           "worker_lost"]

#: Set by the first process that imports this module (the run's main process, before it starts any
#: worker); worker processes inherit it and so know that they are workers.
_MAIN_PID_VARIABLE = "SIMSTUDY_MAIN_PID"
os.environ.setdefault(_MAIN_PID_VARIABLE, str(os.getpid()))


def claim_main_process() -> None:
    """Mark this process as a run's main process (called as a run dispatches its chunks).

    The variable inherited at import is not enough: a ``simstudy`` command started by another
    process that imported simstudy (a notebook's ``!simstudy ...``, a script's subprocess, a
    test suite) inherits that process's pid and would take itself for a worker, ignore Ctrl-C
    and SIGHUP in its in-process tasks and watch the wrong parent. The process that dispatches
    chunks is the main process by definition; its workers then inherit its pid.
    """
    os.environ[_MAIN_PID_VARIABLE] = str(os.getpid())


def ignore_interrupts_in_worker(parent: int | None = None) -> None:
    """In a worker process, ignore SIGINT: Ctrl-C is the main process's business.

    A Ctrl-C at the terminal reaches every process of the group; the main process stops the run
    and says how to resume, and the workers it started are stopped with it. Left to themselves,
    the workers would each print a KeyboardInterrupt traceback (or worse, from inside a compiled
    kernel). The same for SIGHUP; and the worker ends once the main process has died
    (:func:`~simstudy.engine.backends.signals.watch_parent`). Called as a loky worker starts and at
    the start of every task; does nothing in the main process or off a main thread (dask runs tasks
    in threads). ``parent``: the main process's pid when known (a loky worker as it starts).
    """
    if os.environ.get(_MAIN_PID_VARIABLE) == str(os.getpid()) or threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a closed terminal: the main process stops the run
    watch_parent(parent=parent)  # a main process killed outright (SIGKILL) leaves no worker behind


def _warning_key(w: warnings.WarningMessage) -> str:
    text = str(w.message).strip().splitlines()
    return f"{w.category.__name__}: {text[0][:200] if text else ''}"


def run_task(fn: Callable[[Chunk], Any], chunk: Chunk, on_error: str = "record") -> ChunkOutput:
    """``fn(chunk)`` with its wall and CPU time and its warnings counted by (category, first line);
    an exception becomes the output's ``error`` (``on_error="raise"``: it propagates)."""
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


def run_chunk(chunk: Chunk, fn: Callable[[Chunk], Any], on_error: str) -> ChunkOutput:
    """:func:`run_task` with the chunk first (a pool maps it over the chunks)."""
    return run_task(fn, chunk, on_error)


def worker_lost(message: str) -> WorkerLost:
    """The error of a run whose worker process died, with how to go on."""
    return WorkerLost(f"{message}. The chunks finished before are kept; run the same command again to resume. If "
                      "the system killed the worker for lack of memory, use fewer workers (runner.n_jobs) or smaller "
                      "chunks (runner.chunk_size).")


def describe_chunk(chunk: Chunk) -> str:
    return f"replicates {chunk.start}-{chunk.stop - 1} of condition {chunk.condition}"
