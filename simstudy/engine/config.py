"""The runner settings (``runner.*``): their one schema with its defaults (:class:`RunnerConfig`)
and their checks (:func:`validate_runner`), the same from Python and from the command line."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Optional

from simstudy.engine.backends import BACKENDS
from simstudy.errors import ConfigError

__all__ = ["BACKENDS", "ON_ERROR", "RunnerConfig", "SubmititConfig", "validate_runner"]

ON_ERROR = ("record", "raise")


@dataclass
class SubmititConfig:
    """``runner.submitit.*``: how ``runner.backend=submitit`` submits a phase's chunks as one SLURM job array."""

    #: "slurm" (sbatch on this machine) or "local" (one process per task on this machine: a trial run).
    cluster: str = "slurm"
    #: SLURM partition (null: the cluster's default).
    partition: Optional[str] = None
    #: SLURM account to charge (null: the user's default).
    account: Optional[str] = None
    #: Time limit of one array task, in minutes (its chunks must fit in it).
    timeout_min: int = 60
    #: Memory of one array task, in GB.
    mem_gb: float = 4.0
    #: CPUs of one array task (its chunks run one after the other in one process).
    cpus_per_task: int = 1
    #: Chunks (of runner.chunk_size replicates each) computed by one array task.
    chunks_per_task: int = 10
    #: Array tasks running at once (SLURM's %N array throttle).
    max_tasks_in_flight: int = 100
    #: Where submitit keeps the tasks' pickles and logs (shared by every node); null: RUN_DIR/submitit.
    folder: Optional[str] = None
    #: Seconds between two looks at the shards and the tasks' states.
    poll_interval_s: float = 10.0


@dataclass
class RunnerConfig:
    """How replicates are dealt out: joblib (or dask) over chunks of replicates."""

    #: Worker processes/threads (-1: all cores); never more than there are chunks.
    n_jobs: int = -1
    #: Replicates per chunk (one task, one shard).
    chunk_size: int = 250
    #: "auto" (fork where safe, else loky), "loky" or "fork" (processes), "threading", "sequential"
    #: "dask" (dask.distributed) or "submitit" (one SLURM job array per phase: runner.submitit).
    backend: str = "auto"
    #: Show a progress bar on a terminal (log lines every 10% otherwise).
    progress: bool = True
    #: "record" a failing replicate and go on, or "raise" at the first failure.
    on_error: str = "record"
    #: Abort when more than this share of the replicates done so far failed, checked after each
    #: chunk once at least 10 replicates are done (:data:`simstudy.engine.runner.MIN_REPLICATES_FOR_ABORT`).
    max_failure_rate: float = 0.2
    #: dask: address of a running scheduler (e.g. tcp://10.0.0.5:8786); null starts a LocalCluster.
    scheduler_address: Optional[str] = None
    #: Run only this replicate index of each condition (debugging a failure); no shards.
    only_replicate: Optional[int] = None
    #: Discard an existing run of a different configuration in the same run directory.
    overwrite: bool = False
    #: Refuse a run estimated not to fit in memory or not to finish (simstudy.engine.budget).
    check_budget: bool = True
    #: runner.backend=submitit: the SLURM job array's settings.
    submitit: SubmititConfig = field(default_factory=SubmititConfig)

    def __post_init__(self):
        if isinstance(self.submitit, SubmititConfig):
            return
        if self.submitit is None:
            self.submitit = SubmititConfig()
            return
        if not hasattr(self.submitit, "items"):
            raise ConfigError(f"runner.submitit={self.submitit!r} is invalid: give a mapping of settings, e.g. "
                              "{'partition': 'cpu', 'timeout_min': 60}.")
        values = dict(self.submitit.items())
        known = [f.name for f in fields(SubmititConfig)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ConfigError(f"runner.submitit.{unknown[0]} is not a submitit setting: use {', '.join(known)}.")
        self.submitit = SubmititConfig(**values)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_runner(runner: RunnerConfig) -> None:
    """Check the runner settings; raise :class:`ConfigError` naming field, value and fix."""
    import os

    r = runner
    if r.backend not in BACKENDS:
        raise ConfigError(f"runner.backend={r.backend!r} is invalid: choose one of {list(BACKENDS)}.")
    if not _is_int(r.n_jobs) or r.n_jobs == 0 or r.n_jobs < -1:
        raise ConfigError(f"runner.n_jobs={r.n_jobs!r} is invalid: use a positive number of workers or -1 for all "
                          "cores.")
    cores = os.cpu_count() or 1
    if r.n_jobs > 4 * cores:
        raise ConfigError(f"runner.n_jobs={r.n_jobs} is invalid: this machine has {cores} cores; more than "
                          f"{4 * cores} workers only cost memory and start-up time. Use runner.n_jobs=-1 (one per core).")
    if not _is_int(r.chunk_size) or r.chunk_size < 1:
        raise ConfigError(f"runner.chunk_size={r.chunk_size!r} is invalid: use a positive number of replicates per "
                          "chunk, e.g. 250.")
    if r.on_error not in ON_ERROR:
        raise ConfigError(f"runner.on_error={r.on_error!r} is invalid: choose one of {list(ON_ERROR)}.")
    if isinstance(r.max_failure_rate, bool) or not isinstance(r.max_failure_rate, (int, float)) \
            or not 0 <= r.max_failure_rate <= 1:
        raise ConfigError(f"runner.max_failure_rate={r.max_failure_rate!r} is invalid: use a share in [0, 1], "
                          "e.g. 0.2.")
    if r.only_replicate is not None and (not _is_int(r.only_replicate) or r.only_replicate < 0):
        raise ConfigError(f"runner.only_replicate={r.only_replicate!r} is invalid: use a replicate index >= 0.")
    if r.backend == "fork":
        from simstudy.engine.backends.fork_pool import fork_available

        if not fork_available():
            raise ConfigError(f"runner.backend={r.backend!r} is invalid here: forking worker processes is supported on "
                              "Linux only. Use runner.backend=auto or loky.")
    if r.backend == "submitit":
        _validate_submitit(r.submitit)
    if r.backend == "dask":
        from simstudy.engine.backends.dask_cluster import dask_available

        if not dask_available():
            raise ConfigError(f"runner.backend={r.backend!r} is invalid here: install dask.distributed first: "
                              "pip install 'simstudy[dask]'.")




SUBMITIT_CLUSTERS = ("slurm", "local")


def _validate_submitit(s: SubmititConfig) -> None:
    """Check ``runner.submitit.*`` (see :class:`SubmititConfig`) before anything is submitted."""
    from simstudy.engine.backends.submitit_array import sbatch_available, submitit_available

    if not submitit_available():
        raise ConfigError("runner.backend='submitit' is invalid here: install submitit first: "
                          "pip install 'simstudy[slurm]'.")
    if s.cluster not in SUBMITIT_CLUSTERS:
        raise ConfigError(f"runner.submitit.cluster={s.cluster!r} is invalid: choose one of {list(SUBMITIT_CLUSTERS)}.")
    if s.cluster == "slurm" and not sbatch_available():
        raise ConfigError("runner.submitit.cluster='slurm' is invalid here: this machine has no sbatch command. Submit "
                          "from a SLURM login node, or use runner.submitit.cluster=local to try the run on this machine.")
    for name, example in (("timeout_min", 60), ("cpus_per_task", 1), ("chunks_per_task", 10),
                          ("max_tasks_in_flight", 100)):
        value = getattr(s, name)
        if not _is_int(value) or value < 1:
            raise ConfigError(f"runner.submitit.{name}={value!r} is invalid: use a positive whole number, e.g. "
                              f"{example}.")
    for name, example in (("mem_gb", 4), ("poll_interval_s", 10)):
        value = getattr(s, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ConfigError(f"runner.submitit.{name}={value!r} is invalid: use a positive number, e.g. {example}.")
    for name in ("partition", "account", "folder"):
        value = getattr(s, name)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ConfigError(f"runner.submitit.{name}={value!r} is invalid: use a non-empty name, or null for the "
                              "default.")
