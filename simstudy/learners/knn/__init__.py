"""k-nearest neighbours: exact classification on a finite population by precomputed neighbour
lists (:mod:`.population`, kernels in :mod:`.walks`) and regression on a sample (:mod:`.regression`)."""
from __future__ import annotations

from typing import Any

from simstudy._deprecated import moved_attribute


def __getattr__(name: str) -> Any:
    return moved_attribute(__name__, name)
