"""The command lines: ``simstudy`` (:mod:`.run`), ``simstudy-report`` (:mod:`.report`),
``simstudy-collect`` (:mod:`.collect`), ``simstudy audit`` (:mod:`.audit`) and ``--help``
(:mod:`.help`); the console (:mod:`.console`), Hydra (:mod:`.hydra`) and run-directory
(:mod:`.run_dir`) glue they share. The library never imports this package.

Entry points are imported on first use, so that each command loads only what it needs.
"""
from __future__ import annotations

import importlib
from typing import Any

from simstudy._deprecated import moved_attribute

_EXPORTS = {"main": "simstudy.cli.run", "console_main": "simstudy.cli.run", "report_main": "simstudy.cli.report",
            "collect_main": "simstudy.cli.collect"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    return moved_attribute(__name__, name)
