"""Worker processes forked from the running process (``runner.backend=fork``; ``auto`` on Linux).

joblib's loky backend starts every worker as a fresh interpreter: it imports NumPy, joblib,
pandas, numba and the study again, then loads the compiled kernels. A worker forked from the
command's main process starts with everything that process has imported (pandas, Hydra, the
study's modules, the data) and only loads its kernels, which shortens every run's start-up. The
records are the same: every replicate's seed derives from its condition and index, whatever
process computes it.

Forking is safe only from a process with one thread: a lock another thread holds at the moment
of the fork (the import lock, a logging handler's) stays held in the child for ever. So
:func:`resolve_backend` turns ``auto`` into ``fork`` only where fork exists (Linux) and the
calling process runs one thread (the ``simstudy`` command before its progress bar and report
threads; a plain script), else into ``loky`` (a notebook kernel runs several threads). A pool is
kept and reused by later runs in the same process, like loky's reusable executor.

The pool is :class:`concurrent.futures.ProcessPoolExecutor` with the fork context. Tasks travel
as cloudpickle bytes (loky's pickler, so functions and classes defined in ``__main__`` or a
notebook work as with loky); :meth:`ForkPool.results` pickles a run's function once and keeps at
most twice the workers' tasks in flight (as joblib's ``pre_dispatch``). A forked worker ignores
SIGINT (Ctrl-C is the main process's business) and drops the logging handlers it inherited
(its warnings reach stderr as a fresh loky worker's do); it also ignores SIGHUP and dies with
the main process, even one killed outright (:mod:`simstudy.engine.backends.signals`). A worker that dies (killed for
memory, a crash in compiled code) breaks the pool: :meth:`ForkPool.results` raises
:class:`WorkerLost` and the pool is replaced next time.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterable, Iterator

from simstudy.engine.backends.signals import die_with_parent, forking, raise_if_stopped, unblock_stop_signals
from simstudy.engine.backends.tasks import describe_chunk, run_chunk, run_task, worker_lost
from simstudy.engine.chunks import ChunkOutput
from simstudy.errors import WorkerLost
from simstudy.studies.base import Chunk

log = logging.getLogger("simstudy")

__all__ = ["ForkPool", "current_pool", "fork_available", "fork_outputs", "get_pool", "kill_pool", "resolve_backend",
           "safe_to_fork"]

_pool: "ForkPool | None" = None
#: How often the wait for a finished task looks for a stop signal whose exception was dropped.
_POLL_SECONDS = 0.5


def fork_available() -> bool:
    """Whether this platform can fork worker processes safely enough for us: Linux only (macOS's
    system libraries are not fork-safe; Windows has no fork)."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def other_threads() -> list[str]:
    """Names of the live threads other than the calling one."""
    me = threading.current_thread()
    return [t.name for t in threading.enumerate() if t is not me and t.is_alive()]


def safe_to_fork() -> bool:
    """Fork is available and this process runs a single thread."""
    return fork_available() and not other_threads()


def resolve_backend(backend: str, size: int = 1) -> str:
    """The backend a run uses. ``auto`` is ``fork`` when the kept pool has at least ``size``
    workers or a new one may be forked (:func:`safe_to_fork`), else ``loky``; any other name is
    itself."""
    if backend != "auto":
        return backend
    return "fork" if (_pool is not None and _pool.usable and _pool.size >= size) or safe_to_fork() else "loky"


def _start_worker(parent: int, from_main_thread: bool) -> None:
    """In a freshly forked worker: ignore Ctrl-C and SIGHUP (the parent stops the run and its
    workers), take SIGTERM's default action (the pool's own way to stop a worker), die with the
    parent (:func:`~simstudy.engine.backends.signals.die_with_parent`, when forked from its main
    thread), forget the parent's logging handlers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    unblock_stop_signals()  # forked inside a forking() block: a SIGTERM sent meanwhile ends the worker now
    if from_main_thread:
        die_with_parent(parent)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)  # not closed: the files are the parent's
    root.setLevel(logging.WARNING)


#: In a worker: the (fn, args) of the latest :meth:`ForkPool.results` call, by that call's key.
_shared: dict[str, Any] = {}


def _call_shared(path: str, key: str, item: Any) -> Any:
    """``fn(item, *args)``, with (fn, args) read from ``path`` once per worker and call (``key``)."""
    if key not in _shared:
        import cloudpickle

        _shared.clear()
        with open(path, "rb") as fh:
            _shared[key] = cloudpickle.load(fh)
    fn, args = _shared[key]
    return fn(item, *args)


def _call_pickled(payload: bytes) -> Any:
    import cloudpickle

    fn, args = cloudpickle.loads(payload)
    return fn(*args)


class ForkPool:
    """``size`` worker processes forked now from this process.

    Parameters
    ----------
    size : int
        Number of workers (all forked at once, before the pool's own threads start).
    """

    def __init__(self, size: int):
        if not fork_available():
            raise RuntimeError("runner.backend=fork needs Linux (fork); use runner.backend=loky here.")
        threads = other_threads()
        if threads:
            log.warning("forking worker processes while this process runs other threads (%s): a lock one of them "
                        "holds would stay held in the workers. runner.backend=auto forks only from a single thread "
                        "and uses loky otherwise.", ", ".join(threads))
        sys.stdout.flush()  # a buffer copied into the children would be written twice
        sys.stderr.flush()
        self.size = size
        main = threading.current_thread() is threading.main_thread()
        self._executor = ProcessPoolExecutor(max_workers=size, mp_context=multiprocessing.get_context("fork"),
                                             initializer=_start_worker, initargs=(os.getpid(), main))
        # the first task forks every worker at once (Python >= 3.11), before the pool starts its own
        # thread; the workers are born with the stop signals and Ctrl-C blocked (forking()) until
        # _start_worker has set their own handlers
        before = set(multiprocessing.active_children())
        try:
            with forking():
                self._executor.submit(int)
        except BaseException:
            # stopped (Ctrl-C, SIGTERM, SIGHUP) while forking: the pool is never kept, so kill the workers
            # forked so far here, or the interpreter's exit would wait for them for ever
            self._kill_forked(set(multiprocessing.active_children()) - before)
            raise
        # the executor forgets its processes once it breaks; their exit codes are the message
        self._processes = list((getattr(self._executor, "_processes", None) or {}).values())
        self.broken = False

    @property
    def usable(self) -> bool:
        return not self.broken and getattr(self._executor, "_broken", False) is False

    def pids(self) -> list[int]:
        """The workers' process ids."""
        return sorted(p.pid for p in self._processes)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """Run ``fn(*args)`` in a worker; the call travels pickled by cloudpickle."""
        import cloudpickle

        return self._executor.submit(_call_pickled, cloudpickle.dumps((fn, args)))

    def results(self, fn: Callable[..., Any], items: Iterable[Any], *args: Any,
                describe: Callable[[Any], str] = repr, in_flight: int | None = None) -> Iterator[Any]:
        """``fn(item, *args)`` for every item, yielded as they finish (submitted in order).

        ``fn`` and ``args`` (a study's worker holds its population: megabytes) are pickled once,
        into a temporary file that each worker reads once (deleted when the call ends, also on
        an error or Ctrl-C; a process killed outright leaves it in the temporary folder); a task
        carries only its item. At most
        ``in_flight`` tasks (default: twice the workers) wait in the pool at any time, as joblib's
        ``pre_dispatch``, so that the items are not all held pickled at once.

        Raises
        ------
        WorkerLost
            A worker died; the message gives its exit code or signal and names one unfinished
            item (``describe(item)``). The other unfinished tasks are cancelled.
        """
        import cloudpickle

        limit = in_flight or 2 * self.size
        queue = iter(items)
        key = uuid.uuid4().hex  # a file name may come again once deleted; this key does not
        with tempfile.NamedTemporaryFile(prefix="simstudy-task-", suffix=".pkl", delete=False) as shared:
            cloudpickle.dump((fn, args), shared)
        futures: dict[Future, Any] = {}
        try:
            for item in queue:
                futures[self._executor.submit(_call_shared, shared.name, key, item)] = item
                if len(futures) >= limit:
                    break
            while futures:
                # a time-out, not an endless wait: a stop signal dropped while forking is raised again here
                done, _ = wait(futures, timeout=_POLL_SECONDS, return_when=FIRST_COMPLETED)
                raise_if_stopped()
                for future in done:
                    item = futures.pop(future)
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        message = self._lost_message(describe(item))
                        self.kill()  # the other workers and the pool's threads too: a new pool may be forked
                        raise WorkerLost(message) from None
                    for following in queue:
                        futures[self._executor.submit(_call_shared, shared.name, key, following)] = following
                        break
                    yield result
        finally:
            for future in futures:
                future.cancel()
            os.unlink(shared.name)

    def _lost_message(self, what: str) -> str:
        manager = getattr(self._executor, "_executor_manager_thread", None)
        if manager is not None:  # it terminates the survivors and reaps every worker: their exit codes are then set
            manager.join(timeout=5)
        # the pool terminates the surviving workers (SIGTERM) once one has died: name the first death
        codes = sorted((p.exitcode for p in self._processes if p.exitcode not in (None, 0)),
                       key=lambda code: code == -signal.SIGTERM)
        how = ""
        if codes:
            code = codes[0]
            how = f" (killed by signal {-code}{', SIGKILL: often the system out of memory' if code == -9 else ''})" \
                if code < 0 else f" (exit code {code})"
        return f"a worker process died{how} before {what} and the other unfinished tasks were done"

    def _kill_forked(self, processes) -> None:
        for process in processes:
            process.kill()
            process.join(timeout=5)
        self._executor.shutdown(wait=False, cancel_futures=True)

    def kill(self) -> None:
        """Kill the workers at once and let the pool's threads end (never waits for a task)."""
        processes = self._processes
        for process in processes:
            try:
                process.kill()
            except Exception:  # pragma: no cover - already gone
                pass
        for process in processes:
            process.join(timeout=5)
        self.broken = True
        manager = getattr(self._executor, "_executor_manager_thread", None)  # shutdown() forgets it
        self._executor.shutdown(wait=False, cancel_futures=True)
        if manager is not None:
            manager.join(timeout=5)  # it sees the dead workers and ends; then this process may fork again


def current_pool() -> ForkPool | None:
    """The pool this process keeps, if any."""
    return _pool


def get_pool(size: int) -> ForkPool:
    """A usable pool of at least ``size`` workers: the kept one, or a new one forked now."""
    global _pool
    if _pool is not None and _pool.usable and _pool.size >= size:
        return _pool
    kill_pool()
    _pool = ForkPool(size)
    return _pool


def kill_pool() -> None:
    """Kill the kept pool's workers, if any."""
    global _pool
    if _pool is not None:
        _pool.kill()
        _pool = None


def fork_outputs(pool: ForkPool | None, fn: Callable[[Chunk], Any], chunks: Iterable[Chunk],
                 on_error: str) -> Iterator[ChunkOutput]:
    """The chunks' outputs as they finish, from ``pool`` (``None``: one worker, in this process, as
    joblib runs ``n_jobs=1``)."""
    if pool is None:
        for chunk in chunks:
            yield run_task(fn, chunk, on_error)
        return
    try:
        yield from pool.results(run_chunk, chunks, fn, on_error, describe=describe_chunk)
    except WorkerLost as exc:
        raise worker_lost(str(exc)) from None
