"""Studies: what a replicate records and how records aggregate, one module per study.

Each module provides ``execute(cfg, run_dir, options) -> StudyOutput`` and
``write_reports(run_dir, study_cfg, records=None)``, and may provide ``warm_up()`` (runs its
compiled kernels once on tiny inputs, see :mod:`simstudy.warmup`); :data:`STUDIES` maps
``study.name`` to it. Modules are imported on first
use, so a run (and each of its workers) imports only its own study.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType

#: ``study.name`` -> module name under ``simstudy.studies``
STUDY_MODULES = {"cv_variance": "cv_variance", "cv_clt": "cv_clt", "nedelko_fisher": "risk_estimates",
                 "nedelko_histogram": "histogram_exact"}


class _StudyRegistry(Mapping):
    """``STUDIES[name]`` imports the study's module when first asked for."""

    def __getitem__(self, name: str) -> ModuleType:
        return importlib.import_module(module_path(name))

    def __iter__(self):
        return iter(STUDY_MODULES)

    def __len__(self) -> int:
        return len(STUDY_MODULES)


def module_path(name: str) -> str:
    """Full module name of study ``name`` (KeyError naming the known studies otherwise)."""
    if name not in STUDY_MODULES:
        raise KeyError(f"unknown study {name!r}; known: {sorted(STUDY_MODULES)}")
    return f"simstudy.studies.{STUDY_MODULES[name]}"


STUDIES = _StudyRegistry()

__all__ = ["STUDIES", "STUDY_MODULES", "module_path"]
