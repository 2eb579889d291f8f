"""The CV inference benchmark: every interval and test procedure on many data-generating
mechanisms, learners, losses and sizes, scored against exact or tightly estimated truths.

- :mod:`.scales`: the grids (``ci``, ``quick``, ``full``);
- :mod:`.cells`: data cells (mechanism, learner, loss, n) and their seeds;
- :mod:`.config`: the study's settings;
- :mod:`.procedures`: registry names and a user's procedures, and where each applies;
- :mod:`.fitting`: one model per split of a plan, its losses and true errors;
- :mod:`.truth`: the R_n weights and the Err_n truth; :mod:`.truth_worker`: the truth phase;
- :mod:`.worker`: one replicate of a data cell, one record per procedure;
- :mod:`.aggregate`: records to the cell table;
- :mod:`.study`: the :class:`~.study.BenchmarkStudy` the engine runs;
- :mod:`.result`: :class:`BenchmarkResult` and :func:`load_benchmark` (a run directory's cell table);
- :mod:`.certificate`: the verdicts of a calibration certificate.

:mod:`simstudy.benchmark` runs it (:func:`~simstudy.benchmark.run_benchmark`,
:func:`~simstudy.benchmark.certify`).
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"load_benchmark": "result", "BenchmarkResult": "result", "Certificate": "certificate",
            "SCALES": "scales"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
