"""A run's estimated memory and time, announced before it starts; a run that cannot fit in memory,
or would clearly not finish, is refused (:func:`check_budget`) unless ``runner.check_budget=false``.

The estimate is deliberately simple, an order of magnitude (it refuses only what is far beyond
the limits: more memory than is available, more than :data:`MAX_SECONDS`):

- memory: every process of the run costs :data:`PROCESS_BYTES` (the main process, and each
  worker when there are several), each worker holds the largest training set with its fold
  copies (4 arrays of ``n_max x (p + 1)`` float64 values) and the main process holds every
  record (about :data:`RECORD_BYTES` per replicate and condition);
- time: ``replicates x conditions x (K + 1)`` fits (or the study's own count,
  :meth:`simstudy.studies.base.Study.fits_per_replicate`), each costing :data:`FIT_SECONDS`
  plus :data:`CELL_SECONDS` per training value, shared by the workers.

The constants come from ``benchmarks/budget_calibration.py`` (records in
``results/benchmarks/budget_calibration.jsonl``, with the ratio measured / estimated per study):
small representative studies on one process, whose wall time and peak resident memory the
estimate should match within a factor of about 3 either way. Learners much slower than those
(large ensembles, kernels on big data) make it low.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

from simstudy.errors import ConfigError

__all__ = ["Budget", "check_budget", "estimate_budget", "memory_available"]

log = logging.getLogger("simstudy")
#: Estimates from which a run announces itself on the terminal (below: in the debug log only).
ANNOUNCE_SECONDS, ANNOUNCE_BYTES = 60.0, 2**30

#: Memory of one record (a replicate of one condition) in the records table, bytes.
RECORD_BYTES = 300
#: Memory of one process of the run before it holds any data (the interpreter, numpy, pandas,
#: scikit-learn and the compiled kernels), bytes.
PROCESS_BYTES = 200 * 2**20
#: Cost of one fit and prediction on small data (calibrated: benchmarks/budget_calibration.py), seconds.
FIT_SECONDS = 3e-4
#: Cost per training value (row x feature) of one fit, seconds.
CELL_SECONDS = 1e-9
#: A run estimated to take longer than this is refused as one that would clearly not finish.
MAX_SECONDS = 30 * 24 * 3600.0


@dataclass(frozen=True)
class Budget:
    """Estimated peak memory (bytes) and wall time (seconds) of a run."""

    memory: float
    seconds: float

    def describe(self) -> str:
        return f"about {_bytes(self.memory)} of memory and {_duration(self.seconds)}"


def estimate_budget(config: Any, n_jobs: int, n_features: int = 1,
                    fits_per_replicate: float | None = None) -> Budget | None:
    """The estimate for a study config with ``sizes``, ``replicates`` (and ``K``); None otherwise.
    ``fits_per_replicate``: the study's own count (:meth:`simstudy.studies.base.Study.fits_per_replicate`);
    None: K + 1."""
    sizes, replicates = getattr(config, "sizes", None), getattr(config, "replicates", None)
    if not sizes or not isinstance(replicates, int):
        return None
    K = getattr(config, "K", 10) if isinstance(getattr(config, "K", 10), int) else 10
    workers = max(1, (os.cpu_count() or 1) if n_jobs == -1 else n_jobs)
    n_max = max(sizes)
    processes = workers + 1 if workers > 1 else 1  # one worker runs in the main process
    memory = (processes * PROCESS_BYTES + workers * 4.0 * n_max * (n_features + 1) * 8
              + float(replicates) * len(sizes) * RECORD_BYTES)
    fits = float(replicates) * (K + 1 if fits_per_replicate is None else fits_per_replicate)
    seconds = sum(fits * (FIT_SECONDS + CELL_SECONDS * n * n_features) for n in sizes) / workers
    return Budget(memory, seconds)


def memory_available() -> float:
    """Bytes this process may still allocate: free memory, capped by an address-space limit."""
    available = float("inf")
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024.0
    except OSError:
        pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            available = min(available, float(soft))
    except (ImportError, ValueError, OSError):
        pass
    return available


def check_budget(config: Any, runner: Any, n_features: int = 1, announce: bool = False,
                 fits_per_replicate: float | None = None) -> Budget | None:
    """Refuse a run that cannot fit in memory or would clearly not finish; log the estimate.

    Raises
    ------
    ConfigError
        Naming the estimate, the limit and the override (``runner.check_budget=false``).
    """
    budget = estimate_budget(config, runner.n_jobs, n_features, fits_per_replicate)
    if budget is None:
        return None
    if getattr(runner, "check_budget", True):
        override = "Reduce study.sizes / study.replicates, or set runner.check_budget=false to run anyway."
        available = memory_available()
        if budget.memory > available:
            raise ConfigError(f"study.sizes={list(config.sizes)} with study.replicates={config.replicates} cannot fit "
                              f"in memory: the run needs at least {_bytes(budget.memory)} and "
                              f"{_bytes(available)} is available. {override}")
        if budget.seconds > MAX_SECONDS:
            raise ConfigError(f"study.sizes={list(config.sizes)} with study.replicates={config.replicates} would "
                              f"clearly not finish: it needs at least {_duration(budget.seconds)}. {override}")
    if announce:
        # a run that is short and small either way is not worth a line on the terminal
        level = logging.INFO if budget.seconds >= ANNOUNCE_SECONDS or budget.memory >= ANNOUNCE_BYTES else logging.DEBUG
        log.log(level, "estimate: %s (a rough order of magnitude)", budget.describe())
    return budget


def _bytes(value: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value / 2**10:.0f} KiB"


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"
