"""The folder of simstudy's caches across runs: ``$SIMSTUDY_CACHE``, else ``$XDG_CACHE_HOME/simstudy``
(``~/.cache/simstudy``).

It holds the exact k-NN's neighbour lists (``knn/``, :mod:`simstudy.learners.knn.population`) and the
estimator specs scikit-learn accepted (``estimators/``, :mod:`simstudy.learners.accepted`).
Nothing in it changes a number; deleting it is always safe (the next run rebuilds what it needs).
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_root"]


def cache_root() -> Path:
    """The folder of simstudy's caches (see the module docstring)."""
    root = os.environ.get("SIMSTUDY_CACHE")
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "simstudy")
    return Path(root)
