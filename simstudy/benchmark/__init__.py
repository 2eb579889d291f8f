"""The CV inference benchmark, run: :func:`run_benchmark` (every procedure on every cell of a grid, through
the engine) and :func:`certify` (one procedure's calibration certificate). The study's parts are in
:mod:`simstudy.studies.benchmark`.

Example::

    from simstudy.benchmark import run_benchmark, load_benchmark
    result = run_benchmark("ci", out="runs/benchmark_ci")
    result.cells[["procedure", "mechanism", "estimand", "coverage"]]
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"run_benchmark": "simstudy.benchmark.run", "benchmark_params": "simstudy.benchmark.run",
            "certify": "simstudy.benchmark.certification", "load_benchmark": "simstudy.studies.benchmark.result",
            "BenchmarkResult": "simstudy.studies.benchmark.result",
            "Certificate": "simstudy.studies.benchmark.certificate"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
