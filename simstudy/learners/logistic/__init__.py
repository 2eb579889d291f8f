"""L2-penalised logistic regression: the batched Newton kernel (:mod:`.newton`, with its
vectorised exp and log1p in :mod:`.simd_math`) behind the learner protocol (:mod:`.learner`)."""
from __future__ import annotations

from typing import Any

from simstudy._deprecated import moved_attribute


def __getattr__(name: str) -> Any:
    return moved_attribute(__name__, name)
