"""The command lines: ``simstudy`` (:mod:`.run`), ``simstudy-report``, ``simstudy-collect``,
``simstudy audit`` and ``--help``; the console and Hydra glue they share.

Anything a user can cause ends with a one-paragraph message on stderr and exit status 2
(Ctrl-C: one line on how to resume, status 130); only bugs show a traceback.
"""
from __future__ import annotations

from typing import Any

from simstudy._deprecated import moved_attribute
from simstudy.cli.run import collect_main, console_main, main, report_main

__all__ = ["collect_main", "console_main", "main", "report_main"]


def __getattr__(name: str) -> Any:
    return moved_attribute(__name__, name)
