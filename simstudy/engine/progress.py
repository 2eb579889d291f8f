"""Progress of a run: a bar on a terminal (:class:`ProgressBar`), log lines otherwise
(:class:`LogProgress`), and the ETA from the chunks' costs (:func:`eta`)."""
from __future__ import annotations

import logging
import time

from tqdm.auto import tqdm

__all__ = ["BAR_FORMAT", "LogProgress", "ProgressBar", "eta"]

log = logging.getLogger("simstudy")

#: The terminal bar: replicates done, and the ETA from the chunks' costs (set as its postfix).
BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}{postfix}]"


def eta(elapsed: float, work_done: float, total_work: float) -> float:
    """Seconds left if the rest of the work goes at the pace so far (work: the chunks' costs, so
    that a run dispatching its costliest chunks first is not judged by their pace alone)."""
    return elapsed * (total_work - work_done) / work_done if work_done > 0 else float("inf")


class ProgressBar(tqdm):
    """A tqdm bar without its monitor thread (a chunk updates the bar anyway), so that a process
    that runs one thread may fork its next workers (:func:`simstudy.engine.backends.fork_pool.safe_to_fork`)."""

    monitor_interval = 0


class LogProgress:
    """The pace of a run, for the ETA, and progress lines in the log for runs not attached to a
    terminal (every 10% or 60 s).

    The pace is measured from :meth:`restart_clock` (the workers ready) when it is called:
    starting the workers would otherwise count as computing time, and the first ETA of a short
    run would come out several times too long."""

    def __init__(self, total: int, desc: str, enabled: bool, total_work: float | None = None):
        self.total, self.desc, self.enabled = total, desc, enabled
        self.total_work = float(total if total_work is None else total_work)
        self.done, self.work_done = 0, 0.0
        self.start = self.last = time.perf_counter()
        self.next_fraction = 0.1

    def restart_clock(self) -> None:
        """Measure the pace from now on (the workers are ready; nothing is done yet)."""
        self.start = self.last = time.perf_counter()

    def eta(self) -> float:
        """Seconds left at the pace so far (:func:`eta`)."""
        return eta(time.perf_counter() - self.start, self.work_done, self.total_work)

    def update(self, k: int, work: float | None = None) -> None:
        self.done += k
        self.work_done += k if work is None else work
        now = time.perf_counter()
        if not self.enabled or self.total == 0:
            return
        if self.done / self.total >= self.next_fraction or now - self.last >= 60 or self.done == self.total:
            rate = self.done / max(now - self.start, 1e-9)
            log.info("%s: %d/%d (%.0f%%), %.1f rep/s, ETA %.0f s", self.desc, self.done, self.total,
                     100 * self.done / self.total, rate, self.eta())
            self.last = now
            while self.next_fraction <= self.done / self.total:
                self.next_fraction += 0.1
