"""Stopping the run's workers (:func:`kill_workers`): loky's reusable executor and the kept fork
pool, whichever this process started. Imports neither: a process that started no pool pays
nothing to call it."""
from __future__ import annotations

import logging
import sys

__all__ = ["kill_workers"]

log = logging.getLogger("simstudy")


def kill_workers(wait: bool = True) -> None:
    """Kill the run's workers: loky's reusable executor's and the kept fork pool's, if any."""
    fork_pool = sys.modules.get("simstudy.engine.backends.fork_pool")
    if fork_pool is not None:
        fork_pool.kill_pool()
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
