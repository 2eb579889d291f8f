"""Checks for a third party's test suite: :func:`assert_calibrated`.

Example (in a package's tests)::

    from simstudy.testing import assert_calibrated
    from mypackage.intervals import my_interval     # f(procedure, losses, alpha, mu0, alternative)

    def test_my_interval_is_not_liberal():
        assert_calibrated(my_interval, kind="interval", scale="ci", mechanisms=["gaussian_linear"])
"""
from __future__ import annotations

from typing import Any, Sequence

__all__ = ["assert_calibrated"]


def assert_calibrated(procedure: Any, *, kind: str = "interval", scale: str = "ci",
                      mechanisms: Sequence[str] | None = None, learners: Sequence[str] | None = None,
                      losses: Sequence[str] | None = None, sizes: Sequence[int] | None = None,
                      replicates: int | None = None, seed: int = 0, alpha: float = 0.05, family_error: float = 0.05,
                      tolerance: float | None = None, n_jobs: int = 1):
    """Certify ``procedure`` on the benchmark's cells; raise AssertionError when the verdict is liberal.

    Parameters are those of :func:`simstudy.studies.benchmark.certify` (the procedure as a
    registry name, an import path, a Procedure or a method-like function). The rule and its
    error rate: a procedure whose coverage is at least nominal (size at most alpha) in every
    cell fails with probability at most ``family_error / 2``.

    Returns
    -------
    Certificate
        When the verdict is calibrated, conservative or undecided.

    Raises
    ------
    AssertionError
        Listing the liberal cells (coverage or size, replicates, Clopper-Pearson bounds).
    """
    from simstudy.benchmark import certify

    certificate = certify(procedure, kind=kind, scale=scale, mechanisms=mechanisms, learners=learners, losses=losses,
                          sizes=sizes, replicates=replicates, seed=seed, alpha=alpha, family_error=family_error,
                          tolerance=tolerance, n_jobs=n_jobs)
    if certificate.verdict == "liberal":
        measure = "coverage" if kind == "interval" else "size"
        failing = certificate.failing().drop(columns=["verdict"]).to_string(index=False)
        raise AssertionError(f"{certificate.procedure} is liberal: its {measure} of {certificate.estimand} is off "
                             f"nominal in {len(certificate.failing())} of {len(certificate.table)} cells.\n"
                             f"{failing}\nRule: {certificate.rule}")
    return certificate
