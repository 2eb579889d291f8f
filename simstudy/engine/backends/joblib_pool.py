"""joblib's backends (``loky`` processes, ``threading``, ``sequential``): the chunks' outputs as
they finish, and loky's resource tracker started quietly.

A loky worker watches its parent from the moment it starts (the executor's initializer,
:func:`~simstudy.engine.backends.tasks.ignore_interrupts_in_worker`), not only once it runs a
task: a worker whose parent was killed outright before it received any task (or while it was
still reading one) ends within a second instead of waiting for loky to notice its queue closed.
"""
from __future__ import annotations

import logging
import os
import sys
from typing import Any, Callable, Iterator, Sequence

from joblib import Parallel, delayed, parallel_config

from simstudy.engine.backends.tasks import ignore_interrupts_in_worker, run_task, worker_lost
from simstudy.engine.chunks import ChunkOutput
from simstudy.studies.base import Chunk

__all__ = ["joblib_outputs", "quiet_loky_tracker"]

log = logging.getLogger("simstudy")


def joblib_outputs(fn: Callable[[Chunk], Any], chunks: Sequence[Chunk], n_jobs: int, backend: str,
                   on_error: str) -> Iterator[ChunkOutput]:
    """The chunks' outputs as they finish (``sequential``: loky with one worker, i.e. this process)."""
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    if backend == "sequential":
        n_jobs, backend = 1, "loky"
    if backend == "loky":
        with parallel_config(backend="loky", initializer=ignore_interrupts_in_worker, initargs=(os.getpid(),)):
            parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    else:
        parallel = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")
    try:
        yield from parallel(delayed(run_task)(fn, c, on_error) for c in chunks)
    except TerminatedWorkerError as exc:
        raise worker_lost(f"a worker process died while computing one of the chunks "
                          f"({' '.join(str(exc).split())[:300]})") from None


def quiet_loky_tracker() -> None:
    """Start loky's resource tracker with its stderr on /dev/null.

    The tracker is a helper process of joblib's process pool; on Ctrl-C it races with the pool's
    own clean-up and prints internal tracebacks (KeyError in resource_tracker.py, "leaked
    semlock objects") to the terminal, which say nothing the user can act on.
    """
    try:
        from joblib.externals.loky.backend.resource_tracker import _resource_tracker
    except ImportError:  # pragma: no cover - depends on joblib's layout
        return
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        _resource_tracker.ensure_running()
    except Exception as exc:  # pragma: no cover - the pool starts its own tracker then
        log.debug("could not start loky's resource tracker quietly: %s", exc)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)
