"""Load the report's libraries while the workers compute, so that writing the report starts warm.

A run's files end with its aggregation and figures: the aggregation's p-values and intervals
need ``scipy.stats`` (a study whose aggregation needs only
:mod:`simstudy.inference.distributions` names scipy.special instead,
:attr:`simstudy.studies.base.Study.aggregation_imports`), the figures matplotlib (its import and
the Agg renderer), all slow imports paid after the last chunk, on the critical path. While the
worker processes compute the chunks, the main process mostly waits for them, so :func:`start_prewarm` (called just before the chunks are dispatched) does that work in
a background thread, after writing one Parquet file to memory (the first shard is written as
soon as the first chunk ends). :func:`wait_for_prewarm` joins it: called before the main thread draws any
figure, so that matplotlib is never used from two threads at once. Nothing here changes a
figure or a number; a failure is logged at debug level and the report then loads the libraries
itself.
"""
from __future__ import annotations

import logging
import sys
import threading

log = logging.getLogger("simstudy")

__all__ = ["start_prewarm", "wait_for_prewarm"]

_thread: threading.Thread | None = None


def start_prewarm(modules: tuple[str, ...] = ("scipy.stats",)) -> bool:
    """Start loading the aggregation's ``modules`` and the report's libraries in a background
    thread; returns whether it started.

    Does nothing when a prewarm is already running or matplotlib is already loaded.
    """
    global _thread
    if _thread is not None or "matplotlib.pyplot" in sys.modules:
        return False
    _thread = threading.Thread(target=_prewarm, args=(tuple(modules),), name="simstudy-report-prewarm", daemon=True)
    _thread.start()
    return True


def wait_for_prewarm() -> None:
    """Wait for a prewarm started by :func:`start_prewarm` (no-op otherwise)."""
    global _thread
    if _thread is not None:
        _thread.join()
        _thread = None


def _prewarm(modules: tuple[str, ...]) -> None:
    """One Parquet file written to memory (the first shard is written when the first chunk ends;
    pandas loads its Arrow conversion at the first write), the aggregation's ``modules``, one
    t-distribution tail (the aggregation's p-values) and the imports of
    :meth:`simstudy.results.StudyResult.write` (matplotlib with the Agg renderer).

    No figure is drawn here: where the process may fork, the figures are drawn by forked
    children (:func:`simstudy.engine.backends.figures.start_saving_figures`), which load the fonts in
    parallel; a figure drawn here would take this process's time before the first chunk to save
    the children little. A process that may not fork (a notebook) loads the fonts with its first
    figure."""
    try:
        import importlib
        import io

        import pandas as pd

        from simstudy.inference.distributions import t_sf

        pd.DataFrame({"warm": [0.0]}).to_parquet(io.BytesIO(), index=False)  # pandas' first Parquet write: 0.013 s
        for module in modules:
            importlib.import_module(module)
        t_sf(1.0, 3.0)

        from simstudy.report import html, latex  # noqa: F401
        from simstudy.report.figures import finish, plt, save_figure  # noqa: F401
    except Exception as exc:  # pragma: no cover - the report then loads everything itself
        log.debug("report prewarm failed: %s", exc)
