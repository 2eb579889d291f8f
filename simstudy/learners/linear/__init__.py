"""Linear learners: batched ridge and LDA classifiers (:mod:`.batched`), exact least-squares and
ridge regression fits (:mod:`.exact`), and Fisher's discriminant with an empirical-risk threshold
(:mod:`.fisher`; a plain reference in :mod:`.fisher_reference`)."""
from __future__ import annotations

from typing import Any

from simstudy._deprecated import moved_attribute


def __getattr__(name: str) -> Any:
    return moved_attribute(__name__, name)
