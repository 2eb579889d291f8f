"""Running the benchmark through the engine: :func:`run_benchmark` (its result: :class:`BenchmarkResult`)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from simstudy.errors import ConfigError
from simstudy.schema import coerce
from simstudy.studies.benchmark.result import BenchmarkResult

__all__ = ["benchmark_params", "run_benchmark"]


def _names(field_name: str, value: Any) -> list | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [v for v in value.split(",") if v]
    if not isinstance(value, (list, tuple)) or not value:
        raise ConfigError(f"{field_name}={value!r} is invalid: give a non-empty list of names.")
    return list(value)


def benchmark_params(scale: str = "quick", *, procedures=None, mechanisms=None, learners=None, losses=None,
                     sizes=None, replicates=None, seed: int = 0, alpha: float = 0.05,
                     streams: str = "cells", data: dict | None = None) -> dict[str, Any]:
    """The study settings of a scale with the given parts replaced (names checked by the config)."""
    from simstudy.studies.benchmark.cells import nearest
    from simstudy.studies.benchmark.scales import SCALES

    if scale not in SCALES:
        raise nearest("scale", scale, SCALES)
    grid = SCALES[scale]
    given = {"procedures": _names("procedures", procedures), "mechanisms": _names("mechanisms", mechanisms),
             "learners": _names("learners", learners), "losses": _names("losses", losses)}
    params = {"scale": scale, "procedures": given["procedures"] or list(grid.procedures),
              "mechanisms": given["mechanisms"] or list(grid.mechanisms),
              "learners": given["learners"] or list(grid.learners + grid.comparisons),
              "losses": given["losses"] or list(grid.losses),
              "sizes": coerce(sizes, list[int], "sizes") if sizes is not None else list(grid.sizes),
              "replicates": coerce(replicates, int, "replicates") if replicates is not None else grid.replicates,
              "truth_replicates": grid.truth_replicates, "seed": seed, "alpha": alpha,
              "streams": streams}
    if data:  # paths as text; anything else is left for the config's check to name
        params["data"] = ({k: str(v) if isinstance(v, os.PathLike) else v for k, v in data.items()}
                          if hasattr(data, "items") else data)
    return params


def run_benchmark(scale: str = "quick", *, procedures: Sequence[str] | None = None,
                  mechanisms: Sequence[str] | None = None, learners: Sequence[str] | None = None,
                  losses: Sequence[str] | None = None, sizes: Sequence[int] | None = None,
                  replicates: int | None = None, seed: int = 0, out: str | Path | None = None, n_jobs: int = 1,
                  alpha: float = 0.05, progress: bool = False, on_error: str = "record",
                  streams: str = "cells", data: dict | None = None, overwrite: bool = False) -> BenchmarkResult:
    """Run the benchmark at a scale (``"ci"``, ``"quick"``, ``"full"``), any part of its grid replaced.

    Every run goes through the engine (:func:`simstudy.run_study`): with ``out`` it is resumable,
    checksummed and extendable (a larger grid computes only the new cells); its numbers do not
    depend on ``n_jobs``. ``learners`` takes single learners and comparisons "A-vs-B" (the
    tests); ``procedures`` registry names or ``package.module:attribute`` import paths.
    ``streams="cv_clt"`` draws the samples and K-fold plans as the cv_clt study does
    (:mod:`~simstudy.studies.benchmark.cv_clt_streams`). ``data`` maps a data-backed mechanism to a
    local file read instead of its download (``{"letter": "letter-recognition.data"}``).
    ``overwrite=True`` discards a run of another configuration (or on other data) in ``out``
    instead of refusing it. ``out`` may also be a :class:`~simstudy.engine.rundir.RunDirectory`
    (``simstudy benchmark`` passes one whose refusals name ``--out``).

    Returns
    -------
    BenchmarkResult
        ``.cells`` (one row per cell and estimand) and ``.config``.
    """
    from simstudy.engine import run_study
    from simstudy.studies.benchmark.study import BenchmarkStudy, run_config

    params = benchmark_params(scale, procedures=procedures, mechanisms=mechanisms, learners=learners, losses=losses,
                              sizes=sizes, replicates=replicates, seed=seed, alpha=alpha, streams=streams,
                              data=data)
    result = run_study(BenchmarkStudy, out=out, n_jobs=n_jobs, progress=progress, overwrite=overwrite,
                       runner={"on_error": on_error}, **params)
    config = {**run_config(result.study.config), "left_out": result.study.left_out}
    return BenchmarkResult(result.summary, config, result)
