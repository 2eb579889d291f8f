"""The public call: :func:`run_study` validates a request, builds its parts and runs it."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from simstudy.engine.execution import execute
from simstudy.engine.plan import check_storable, make_runner, prepare
from simstudy.engine.result import StudyResult

__all__ = ["run_study"]


def run_study(study: Any, *, population: Any = None, learner: Any = None, runner: Any = None,
              out: str | Path | None = None, n_jobs: int | None = None, chunk_size: int | None = None,
              progress: bool | None = None, backend: str | None = None, overwrite: bool | None = None,
              **params: Any) -> StudyResult:
    """Run a study and return its results (in memory, and in ``out`` when given).

    Parameters
    ----------
    study : str, Study subclass, Study instance or import path
        ``"cv_variance"``, ``"cv_clt"``, ``"nedelko_fisher"``, ``"nedelko_histogram"``, a
        registered name of your own, or your Study class.
    population : str, mapping or population object, optional
        A preset name (``"letter"``, ``"logistic"``, ...), a config mapping (``{"kind":
        "tabular", "path": ..., "positive": [...]}``), or an object with ``name``,
        ``sample(n, rng)`` and ``seed_params()``. Studies that define their own population
        (Nedelko's) take none.
    learner : str, scikit-learn estimator, mapping or learner object, optional
        A preset name (``"tree"``, ``"knn"``, ...), an estimator instance
        (``DecisionTreeClassifier(max_depth=3)``), a config mapping, or an object implementing
        :class:`simstudy.learners.base.Learner`.
    runner : mapping or RunnerConfig, optional
        Runner settings (``n_jobs``, ``chunk_size``, ``backend``, ``progress``, ``on_error``,
        ``max_failure_rate``, ``scheduler_address``, ``only_replicate``, ``overwrite``); the
        keyword arguments ``n_jobs``, ``chunk_size``, ``progress``, ``backend`` and
        ``overwrite`` override them.
    out : path-like, optional
        Write the run directory there (records, tables, figures, manifest; resumable). By
        default nothing is written.
    **params
        The study's settings (its config fields), e.g. ``sizes=[20, 80]``, ``replicates=2000``,
        ``K=10``, ``seed=7``, ``loss="squared"``.

    Returns
    -------
    StudyResult
        ``.records``, ``.summary``, ``.tests`` (DataFrames), ``.tables``, ``.figures()``,
        ``.headline()``, ``.manifest``, ``.run_dir``.

    Raises
    ------
    simstudy.errors.UserError
        (ConfigError, DataUnavailableError, RunDirectoryError, ...) before any work, with the
        field, the value and the fix.

    Examples
    --------
    >>> import simstudy
    >>> res = simstudy.run_study("cv_variance", population="logistic", learner="tree", sizes=[20],
    ...                          replicates=50, n_jobs=1, progress=False)
    >>> list(res.summary["n"])
    [20]
    """
    options = make_runner(runner, n_jobs=n_jobs, chunk_size=chunk_size, progress=progress, backend=backend,
                          overwrite=overwrite)
    plan = prepare(study, population, learner, options, **params)
    if out is not None:
        check_storable(plan)
    return execute(plan, out, study=None)
