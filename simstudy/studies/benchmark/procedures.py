"""Resolving the procedures a benchmark runs: registry names and a user's import paths.

A user's procedure ``package.module:attribute`` is either a
:class:`~simstudy.inference.procedures.Procedure` or a function with the call signature of a
registered procedure's method, ``f(procedure, losses, alpha, mu0, alternative) -> outcome``
(an :class:`~simstudy.inference.procedures.IntervalOutcome`, a
:class:`~simstudy.inference.procedures.TestOutcome` or a
:class:`~simstudy.inference.procedures.PosteriorOutcome`). A function may declare its design,
estimand and kind as attributes (``f.design = KFoldDesign(10)``, ``f.estimand = "Err_n"``,
``f.kind = "interval"``); those are the defaults.
"""
from __future__ import annotations

from typing import Any

from simstudy.errors import ConfigError

__all__ = ["applicability", "as_procedure", "in_process", "register_user_procedure", "resolve_procedure"]

#: Procedures given as Python objects in this process, by the name the benchmark runs them under.
_IN_PROCESS: dict[str, Any] = {}


def register_user_procedure(procedure: Any, kind: str) -> str:
    """The benchmark name of a procedure given as an object (a Procedure or a method-like function)."""
    from simstudy.inference.procedures import PROCEDURES, Procedure

    if isinstance(procedure, str):
        return procedure
    if isinstance(procedure, Procedure) and procedure.name in PROCEDURES \
            and PROCEDURES[procedure.name].load() is procedure:
        return procedure.name                       # a registered procedure: run under its registry name
    name = procedure.name if isinstance(procedure, Procedure) else \
        f"{getattr(procedure, '__module__', 'user')}:{getattr(procedure, '__qualname__', type(procedure).__name__)}"
    _IN_PROCESS[name] = as_procedure(procedure, name, kind)
    return name


def in_process(name: str) -> Any | None:
    return _IN_PROCESS.get(name)


def as_procedure(obj: Any, name: str, kind: str | None = None) -> Any:
    """A :class:`Procedure` from a Procedure or a method-like function (see the module docstring)."""
    from dataclasses import replace

    from simstudy.inference.procedures import KFoldDesign, Procedure

    if isinstance(obj, Procedure):
        proc = replace(obj, name=name) if name != obj.name else obj
    elif callable(obj):
        doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
        try:
            proc = Procedure(name, getattr(obj, "kind", kind or "interval"), getattr(obj, "design", KFoldDesign(10)),
                             getattr(obj, "estimand", "Err_n"), obj, "user procedure", doc[0] if doc else name)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"procedure {name!r} is invalid: {exc}") from None
    else:
        raise ConfigError(f"procedure {name!r} is a {type(obj).__name__}: give a Procedure or a function "
                          "f(procedure, losses, alpha, mu0, alternative) -> outcome.")
    if kind is not None and proc.kind != kind:
        allowed = {"interval": ("interval", "both"), "test": ("test", "both")}[kind]
        if proc.kind not in allowed:
            raise ConfigError(f"procedure {name!r} is of kind {proc.kind!r}, not usable as --kind {kind}.")
        proc = replace(proc, kind=kind)
    return proc


def resolve_procedure(name: str, kind: str | None = None) -> Any:
    """The Procedure named ``name``: a registry name or an import path ``package.module:attribute``."""
    from simstudy.inference.procedures import PROCEDURES
    from simstudy.registry import import_path

    if in_process(name) is not None:
        return as_procedure(in_process(name), name, kind)
    if name in PROCEDURES:
        return as_procedure(PROCEDURES[name].load(), name, kind)
    try:
        obj = import_path(name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"procedure {name!r} cannot be imported ({type(exc).__name__}: {exc}); give "
                          "package.module:function with the package importable.") from None
    return as_procedure(obj, name, kind)


def applicability(proc: Any, comparison: bool, residual: bool, loss: str, n: int) -> str:
    """Why ``proc`` does not apply to a data cell ("" when it does)."""
    from simstudy.errors import ConfigError as _Bad
    from simstudy.inference.procedures import KFoldDesign

    if comparison and proc.kind == "interval":
        return "an interval procedure: no test of two learners"
    if not comparison and proc.kind == "test":
        return "a test only: no interval for one learner"
    if residual and not isinstance(proc.design, KFoldDesign):
        return "a residual mechanism gives K-fold CV losses only"
    if getattr(proc.method, "__name__", "") == "holdout_wilson" and loss != "zero_one":
        return "needs 0-1 losses"
    try:
        proc.design.check_n(n)
    except (_Bad, ValueError) as exc:
        return f"design not defined at n={n}: {exc}"
    return ""
