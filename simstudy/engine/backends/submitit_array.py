"""``runner.backend=submitit``: a phase's chunks as one SLURM job array (:func:`submitit_outputs`).

The chunks still to compute are dealt round-robin into array tasks of at most
``runner.submitit.chunks_per_task`` chunks (the planned order puts the costliest chunks first, so
round-robin gives every task a similar share of the work) and submitted at once with
``submitit``'s ``map_array``; SLURM runs at most ``max_tasks_in_flight`` of them together. Each
task computes its chunks one after the other with :func:`~simstudy.engine.backends.tasks.run_task`
and writes each finished chunk as the usual checksummed shard into the run directory, which every
node shares; only a chunk-level failure travels back through submitit's result file.

The submitting process holds the run directory's lock throughout: it polls the shard folder,
reads and checks each new shard (it then counts towards the progress, the failure rate and the
records exactly as a shard written here would), and watches the tasks' states. A task that ends
without having written all its chunks (time limit, memory, node failure) stops the run with
:class:`~simstudy.errors.WorkerLost`; its finished chunks are kept, and the same command then
submits only the chunks whose shards are missing. Each submission is recorded in
``<folder>/jobs.jsonl`` (job ids, tasks, chunks, settings) for ``sacct``.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import time
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from simstudy.engine.backends.tasks import run_task, worker_lost
from simstudy.engine.chunks import ChunkOutput
from simstudy.errors import ConfigError
from simstudy.studies.base import Chunk

__all__ = ["run_array_task", "sbatch_available", "submitit_available", "submitit_outputs"]

log = logging.getLogger("simstudy")

#: The file (in the executor folder) listing every job array submitted for the run directory.
JOBS_FILE = "jobs.jsonl"


def submitit_available() -> bool:
    """Whether submitit can be imported (``pip install 'simstudy[slurm]'``)."""
    try:
        import submitit  # noqa: F401
    except ImportError:
        return False
    return True


def sbatch_available() -> bool:
    """Whether this machine can submit SLURM jobs (``sbatch`` on the PATH)."""
    return shutil.which("sbatch") is not None


def run_array_task(chunks: Sequence[Chunk], fn: Callable[[Chunk], Any], on_error: str, store: Any, phase: str,
                   keys: Sequence[str]) -> list[ChunkOutput]:
    """One array task: compute ``chunks`` in turn, store each finished one as a shard; return the
    failed ones (their ``error`` set, no records), which are not stored so that a resume retries them."""
    failed = []
    for chunk in chunks:
        out = run_task(fn, chunk, on_error)
        if out.error:
            failed.append(ChunkOutput(chunk, None, out.wall_time, out.cpu_time, out.error, out.warnings))
        else:
            store.save(phase, keys[chunk.condition], out)
    return failed


def _executor(settings: Any, folder: Path, phase: str, tasks: int):
    import submitit

    executor = submitit.AutoExecutor(folder=folder, cluster=settings.cluster)
    params: dict[str, Any] = {"name": f"simstudy-{phase}", "timeout_min": settings.timeout_min,
                              "mem_gb": settings.mem_gb, "cpus_per_task": settings.cpus_per_task,
                              "slurm_array_parallelism": min(settings.max_tasks_in_flight, tasks)}
    if settings.partition:
        params["slurm_partition"] = settings.partition
    if settings.account:
        params["slurm_account"] = settings.account
    executor.update_parameters(**params)
    return executor


def _record_submission(folder: Path, phase: str, jobs: list, groups: list[list[Chunk]], settings: Any) -> None:
    ids = [str(job.job_id) for job in jobs]
    entry = {"phase": phase, "submitted_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
             "array_job_id": ids[0].split("_")[0] if ids else "", "task_job_ids": ids, "tasks": len(groups),
             "chunks": sum(len(g) for g in groups), "replicates": sum(c.size for g in groups for c in g),
             "settings": {k: getattr(settings, k) for k in ("cluster", "partition", "account", "timeout_min",
                                                             "mem_gb", "cpus_per_task", "chunks_per_task",
                                                             "max_tasks_in_flight")}}
    with open(folder / JOBS_FILE, "a") as fh:
        fh.write(json.dumps(entry) + "\n")


def submitit_outputs(fn: Callable[[Chunk], Any], chunks: Sequence[Chunk], settings: Any, on_error: str, store: Any,
                     phase: str, keys: Sequence[str]) -> Iterator[ChunkOutput]:
    """Submit ``chunks`` as one job array and yield their outputs as their shards appear.

    Parameters
    ----------
    settings : SubmititConfig
        ``runner.submitit``: cluster, partition, account, time, memory, CPUs, chunks per task,
        tasks in flight, executor folder, polling interval.
    store : ShardStore
        The run directory's shard store, which the tasks write to (required: nothing else brings
        their records back).
    """
    if store is None:
        raise ConfigError("runner.backend='submitit' needs a run directory: its array tasks write their records "
                          "there. Give out=... (run_study) or hydra.run.dir=... (command line); a one-replicate "
                          "debugging run (runner.only_replicate) runs with runner.backend=sequential.")
    folder = Path(settings.folder) if settings.folder else store.directory.parent / "submitit"
    folder.mkdir(parents=True, exist_ok=True)
    (store.directory / phase).mkdir(parents=True, exist_ok=True)
    n_tasks = -(-len(chunks) // settings.chunks_per_task)
    groups = [list(chunks[i::n_tasks]) for i in range(n_tasks)]
    executor = _executor(settings, folder, phase, n_tasks)
    jobs = executor.map_array(partial(run_array_task, fn=fn, on_error=on_error, store=store, phase=phase,
                                      keys=list(keys)), groups)
    _record_submission(folder, phase, jobs, groups, settings)
    log.info("%s: %d chunk(s) submitted as %d array task(s) (job %s; logs in %s)", phase, len(chunks), n_tasks,
             str(jobs[0].job_id).split("_")[0], folder)
    finished = False
    try:
        yield from _collect(jobs, groups, store, phase, keys, settings.poll_interval_s)
        finished = True
    finally:
        if not finished:
            _cancel(jobs)


def _collect(jobs: list, groups: list[list[Chunk]], store: Any, phase: str, keys: Sequence[str],
             poll_interval_s: float) -> Iterator[ChunkOutput]:
    """The tasks' outputs: each shard once it is complete, each task's failed chunks once it ends.

    One look per poll: the tasks' states first, then one listing of the shard folder (a task done
    before the listing wrote its shards before it), so a poll costs one pass over the shards
    whatever the number of tasks."""
    waiting = {i: list(group) for i, group in enumerate(groups)}
    shard_folder = store.directory / phase
    while waiting:
        ended = [i for i in waiting if jobs[i].done()]
        present = set(os.listdir(shard_folder))
        for i in list(waiting):
            for chunk in [c for c in waiting[i] if store.sidecar(phase, keys[c.condition], c).name in present]:
                out, problem = store.read(phase, keys[chunk.condition], chunk)
                if out is None:
                    raise worker_lost(f"array task {jobs[i].job_id} wrote an invalid shard for chunk "
                                      f"{chunk.start}-{chunk.stop - 1} of condition {keys[chunk.condition]} "
                                      f"({problem})")
                waiting[i].remove(chunk)
                yield out
        for i in ended:
            yield from _task_end(jobs[i], waiting.pop(i))
        if waiting:
            time.sleep(poll_interval_s)


def _task_end(job: Any, unwritten: list[Chunk]) -> Iterator[ChunkOutput]:
    """A finished task's failed chunks; a task that died leaves chunks neither stored nor failed."""
    try:
        failed = job.result()
    except Exception as exc:
        text = " ".join(str(exc).split())
        raise worker_lost(f"SLURM array task {job.job_id} ended without finishing its chunks ({text[-600:]}); its "
                          f"log: {getattr(job.paths, 'stderr', '')}") from None
    missing = {(c.condition, c.start, c.stop) for c in unwritten} - {(o.chunk.condition, o.chunk.start,
                                                                       o.chunk.stop) for o in failed}
    if missing:
        raise worker_lost(f"SLURM array task {job.job_id} ended without writing {len(missing)} of its chunks' shards "
                          f"(log: {getattr(job.paths, 'stderr', '')})")
    yield from failed


def _cancel(jobs: list) -> None:
    """Cancel the array's tasks still queued or running (the run stopped: Ctrl-C, too many failures, a lost task)."""
    for job in jobs:
        try:
            if not job.done():
                job.cancel(check=False)
        except Exception as exc:  # pragma: no cover - depends on the cluster
            log.debug("could not cancel array task %s: %s", job.job_id, exc)
