"""What every study module provides to the run engine (:mod:`simstudy.run`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["RunnerOptions", "StudyOutput"]


@dataclass(frozen=True)
class RunnerOptions:
    """The ``runner`` config node as plain values."""

    n_jobs: int = -1
    chunk_size: int = 250
    backend: str = "loky"
    progress: bool = True
    on_error: str = "record"


@dataclass
class StudyOutput:
    """What a study's ``execute`` returns: its tables, figures and manifest entries."""

    summary: pd.DataFrame
    tests: pd.DataFrame | None
    records: pd.DataFrame
    figures: list[Path] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
