"""The histogram pool: class counts per (class, rank, feature) of the nodes being grown.

With at most 64 distinct values per feature, a node's histogram lives in a pool slot; a split
builds the smaller child's histogram from its samples and turns the parent's into the larger
child's by subtraction.
"""
from __future__ import annotations

import numba
import numpy as np

_POOL_MAX_VALUES = 64
_POOL_SLOTS = 128
#: Nodes with at most this many samples are split from their samples, not from pool histograms.
_POOL_MIN_SAMPLES = 4


@numba.njit(cache=True)
def _new_pool(n_values, n_classes, p):
    """Scratch histograms for :func:`_grow`: (slots, classes, ranks, features), or one dummy
    slot when a feature has too many distinct values for histogram subtraction to pay."""
    max_values = 0
    for f in range(p):
        max_values = max(max_values, n_values[f])
    if max_values <= _POOL_MAX_VALUES:
        return np.empty((_POOL_SLOTS, n_classes, max_values, p))
    return np.empty((1, 1, 1, 1))
