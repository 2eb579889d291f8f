"""Deal replicates out in chunks with joblib, with a progress bar.

A chunk is a contiguous range of replicate indices of one condition. Each replicate draws
its random numbers from its own stream (:mod:`simstudy.rng`), so results do not depend on
how replicates are grouped into chunks, on ``n_jobs`` or on the backend; results are put
back in (condition, replicate) order before anything is aggregated.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from joblib import Parallel, delayed
from tqdm.auto import tqdm

__all__ = ["Chunk", "ChunkOutput", "plan_chunks", "run_chunks"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Chunk:
    """Replicates ``start <= r < stop`` of condition number ``condition``."""

    condition: int
    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start


@dataclass
class ChunkOutput:
    """What a worker returns for one chunk: its records and its timings."""

    chunk: Chunk
    records: Any
    wall_time: float
    cpu_time: float


def plan_chunks(replicates_per_condition: Sequence[int], chunk_size: int) -> list[Chunk]:
    """Split every condition's replicates into chunks of at most ``chunk_size``."""
    if chunk_size < 1:
        raise ValueError(f"runner.chunk_size must be >= 1; got {chunk_size}.")
    return [Chunk(c, s, min(s + chunk_size, R))
            for c, R in enumerate(replicates_per_condition)
            for s in range(0, R, chunk_size)]


def _timed(fn: Callable[[Chunk], Any], chunk: Chunk) -> ChunkOutput:
    wall, cpu = time.perf_counter(), time.process_time()
    records = fn(chunk)
    return ChunkOutput(chunk, records, time.perf_counter() - wall, time.process_time() - cpu)


class _LogProgress:
    """Progress lines in the log for runs not attached to a terminal (every 10% or 60 s)."""

    def __init__(self, total: int, desc: str, enabled: bool):
        self.total, self.desc, self.enabled = total, desc, enabled
        self.done = 0
        self.start = self.last = time.perf_counter()
        self.next_fraction = 0.1

    def update(self, k: int) -> None:
        self.done += k
        now = time.perf_counter()
        if not self.enabled or self.total == 0:
            return
        if self.done / self.total >= self.next_fraction or now - self.last >= 60 or self.done == self.total:
            rate = self.done / max(now - self.start, 1e-9)
            eta = (self.total - self.done) / rate if rate > 0 else float("inf")
            log.info("%s: %d/%d (%.0f%%), %.1f rep/s, ETA %.0f s", self.desc, self.done, self.total,
                     100 * self.done / self.total, rate, eta)
            self.last = now
            while self.next_fraction <= self.done / self.total:
                self.next_fraction += 0.1


def run_chunks(fn: Callable[[Chunk], Any], chunks: Sequence[Chunk], *, n_jobs: int = -1,
               backend: str = "loky", progress: bool = True, desc: str = "replicates") -> list[ChunkOutput]:
    """Run ``fn`` on every chunk and return the outputs in chunk order.

    Parameters
    ----------
    fn : callable
        ``fn(chunk) -> records``; must be picklable for process backends.
    chunks : sequence of Chunk
    n_jobs : int
        Workers (-1: all cores).
    backend : {"loky", "threading", "sequential"}
    progress : bool
        Show a tqdm bar (replicates done / total, rate, ETA) when stderr is a terminal, and
        log a progress line every 10% (or 60 s) otherwise.
    """
    total = sum(c.size for c in chunks)
    if backend == "sequential":
        n_jobs, backend = 1, "loky"
    parallel = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")
    outputs: list[ChunkOutput] = []
    with tqdm(total=total, desc=desc, unit="rep", disable=None if progress else True,
              smoothing=0.05, dynamic_ncols=True) as bar:
        logged = _LogProgress(total, desc, enabled=progress and bar.disable)
        for out in parallel(delayed(_timed)(fn, c) for c in chunks):
            outputs.append(out)
            bar.update(out.chunk.size)
            logged.update(out.chunk.size)
    order = {c: i for i, c in enumerate(chunks)}
    outputs.sort(key=lambda o: order[o.chunk])
    return outputs
