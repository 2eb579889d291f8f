"""A benchmark's result as the results page reads it: :class:`BenchmarkResult` and :func:`load_benchmark`
(``cells.parquet`` and ``config.json`` of a run directory; :func:`simstudy.benchmark.run_benchmark` writes them)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from simstudy.errors import ConfigError

__all__ = ["BenchmarkResult", "load_benchmark"]


@dataclass
class BenchmarkResult:
    """A benchmark's cell table and its resolved grid.

    Attributes
    ----------
    cells : DataFrame
        One row per (procedure, mechanism, learner, loss, n, estimand); columns of ``BENCH_CONTRACT.md``.
    config : dict
        The grid (scale, procedures, mechanisms, learners, losses, sizes, replicates, seed, alpha)
        and ``mcse_target``.
    run : StudyResult or None
        The engine's result (records, manifest) when the benchmark ran in this process.
    """

    cells: pd.DataFrame
    config: dict[str, Any]
    run: Any = field(default=None, repr=False)


def load_benchmark(out: str | Path) -> BenchmarkResult:
    """The cell table and grid of a benchmark run directory (``cells.parquet``, ``config.json``)."""
    out = Path(out)
    try:
        cells = pd.read_parquet(out / "cells.parquet")
        config = json.loads((out / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"out={str(out)!r} is not a finished benchmark run ({type(exc).__name__}: {exc}); run "
                          "simstudy benchmark --out there first.") from None
    return BenchmarkResult(cells, config)
