"""Every process the engine starts: worker pools (:mod:`.joblib_pool`: loky, threading,
sequential; :mod:`.fork_pool`; :mod:`.dask_cluster`), the task each worker runs (:mod:`.tasks`),
stopping them (:mod:`.workers`), loading the report's libraries while they compute
(:mod:`.prewarm`), the forked children that save figures (:mod:`.figures`) and the signals that
stop a run (:mod:`.signals`). :func:`.streams.open_stream`
picks a backend's stream of chunk outputs. Nothing outside this package starts a process or a
thread.
"""

import os

__all__ = ["BACKENDS", "worker_count"]

#: The values of ``runner.backend``: ``auto`` is ``fork`` where safe, else ``loky``
#: (:func:`simstudy.engine.backends.fork_pool.resolve_backend`).
BACKENDS = ("auto", "loky", "fork", "threading", "sequential", "dask", "submitit")


def worker_count(n_jobs: int, chunks: int) -> int:
    """Workers to start: ``n_jobs`` (-1: one per core), but never more than there are chunks."""
    cores = os.cpu_count() or 1
    wanted = cores if n_jobs == -1 else int(n_jobs)
    return max(1, min(wanted, chunks))
