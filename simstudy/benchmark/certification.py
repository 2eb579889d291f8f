"""``simstudy certify``: run one procedure on the benchmark's cells and write its calibration certificate."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from simstudy.errors import ConfigError
from simstudy.studies.benchmark.certificate import Certificate, certificate_table, overall

__all__ = ["certify"]


def certify(procedure: Any, *, kind: str = "interval", scale: str = "ci", mechanisms: Sequence[str] | None = None,
            learners: Sequence[str] | None = None, losses: Sequence[str] | None = None,
            sizes: Sequence[int] | None = None, replicates: int | None = None, seed: int = 0, alpha: float = 0.05,
            family_error: float = 0.05, tolerance: float | None = None, out: str | Path | None = None,
            n_jobs: int = 1) -> Certificate:
    """Run ``procedure`` on the benchmark's cells and judge its calibration (the rule: :mod:`simstudy.studies.benchmark.certificate`).

    Parameters
    ----------
    procedure : str, Procedure or function
        A registry name, an import path ``package.module:attribute``, a
        :class:`~simstudy.inference.procedures.Procedure`, or a function with the call signature of
        a registered procedure's method, ``f(procedure, losses, alpha, mu0, alternative) -> outcome``
        (attributes ``design``, ``estimand``, ``kind`` optional: see
        :mod:`simstudy.studies.benchmark.procedures`).
    kind : {"interval", "test"}
        Judge its coverage (of its own estimand) or the size of its test (cells with a true null).
    scale, mechanisms, learners, losses, sizes, replicates, seed, alpha
        The benchmark grid (:func:`~simstudy.benchmark.run.run_benchmark`); for tests the default learners are the
        scale's comparisons.
    family_error : float
        The family-wise error rate of the verdicts.
    tolerance : float, optional
        Half-width of the band a calibrated cell's interval must lie in (default 0.025 for
        coverage, alpha / 2 for size).
    out : path, optional
        Write ``certificate.md`` and ``certificate.csv`` there.
    """
    from simstudy.benchmark.run import run_benchmark
    from simstudy.studies.benchmark.procedures import register_user_procedure, resolve_procedure
    from simstudy.studies.benchmark.scales import SCALES

    if kind not in ("interval", "test"):
        raise ConfigError(f"kind={kind!r} is invalid: use 'interval' or 'test'.")
    if not 0 < family_error < 1:
        raise ConfigError(f"family_error={family_error!r} is invalid: use a rate in (0, 1), e.g. 0.05.")
    name = register_user_procedure(procedure, kind)
    proc = resolve_procedure(name, kind)
    if learners is None and kind == "test" and scale in SCALES:
        learners = list(SCALES[scale].comparisons)
    result = run_benchmark(scale, procedures=[name], mechanisms=mechanisms, learners=learners, losses=losses,
                           sizes=sizes, replicates=replicates, seed=seed, alpha=alpha, n_jobs=n_jobs)
    tolerance = tolerance if tolerance is not None else (0.025 if kind == "interval" else alpha / 2)
    table, rule = certificate_table(result.cells, name, kind, proc.estimand, alpha, family_error, tolerance)
    certificate = Certificate(name, kind, proc.estimand, overall(table["verdict"]), table, rule)
    if out is not None:
        certificate.write(out)
    return certificate
