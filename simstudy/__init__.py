"""simstudy: Monte Carlo simulation studies of cross-validation.

The public API:

- :func:`run_study` runs any study (a registered name or your own Study class) on any
  population, learner and loss, in memory or into a run directory, and returns a
  :class:`StudyResult` (records, summary and tests as DataFrames, figures, headline);
- :func:`load_run` reads a run directory back into the same object;
- :data:`STUDIES`, :data:`POPULATIONS`, :data:`LEARNERS`, :data:`LOSSES`: the registries of
  named parts (``STUDIES.register(...)`` adds your own);
- :class:`Study`, :class:`StudyConfig`, :class:`Phase`: the parts of a study;
- :mod:`simstudy.inference`: pure functions for CV inference (variance estimators, tests,
  intervals).

Attributes are imported on first use, so ``import simstudy`` is cheap.
"""
from __future__ import annotations

import importlib
from typing import Any

from simstudy import _deprecated

__version__ = "0.2.0"

_EXPORTS = {
    "run_study": "simstudy.engine.run", "load_run": "simstudy.results", "StudyResult": "simstudy.engine.result",
    "STUDIES": "simstudy.registry", "POPULATIONS": "simstudy.registry", "LEARNERS": "simstudy.registry",
    "LOSSES": "simstudy.registry", "Study": "simstudy.studies.base", "StudyConfig": "simstudy.studies.base",
    "Phase": "simstudy.studies.base", "StudyTables": "simstudy.studies.base", "Loss": "simstudy.cv.losses",
    "Sample": "simstudy.populations.base", "Population": "simstudy.populations.base",
    "ConfigError": "simstudy.errors", "UserError": "simstudy.errors",
}

__all__ = ["__version__", *_EXPORTS]

_deprecated.install()  # old module paths (simstudy.runner, ...) keep working for one release


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'simstudy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
