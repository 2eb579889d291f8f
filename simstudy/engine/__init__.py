"""The engine: every run, from Python or from the command line, goes through :func:`run_study`.

It validates the request, builds the parts, deals the replicates out in chunks to the backends
(:mod:`simstudy.engine.backends`), keeps every finished chunk on disk, aggregates, and writes the
run directory. It knows no particular study: a study supplies its parts
(:mod:`simstudy.studies.base`). Names are imported on first use, so that a worker importing one
engine module does not import them all.
"""
from __future__ import annotations

import importlib
from typing import Any

from simstudy._deprecated import moved_attribute

_EXPORTS = {"run_study": "simstudy.engine.run", "execute": "simstudy.engine.execution",
            "run_identity": "simstudy.engine.identity", "StudyResult": "simstudy.engine.result"}
_EXPORTS.update({name: "simstudy.engine.plan" for name in ("RunPlan", "RunnerOptions", "build", "make_runner",
                                                           "prepare")})

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    return moved_attribute(__name__, name)
