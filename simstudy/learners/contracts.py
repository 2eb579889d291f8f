"""The input contracts of the compiled kernels, asserted at their Python entries.

A numba kernel does not check bounds: X one row short of y, a fold label K or a row index past
the sample would make it read or write outside its arrays (a wrong number, or a corrupted heap).
Every Python function that hands arrays to a compiled kernel first calls these checks, each one
vectorised pass over small index arrays or a comparison of shapes; they raise
:class:`KernelInputError` naming the kernel, the argument and what it holds.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["KernelInputError", "require_features", "require_fold_labels", "require_rows", "require_sample"]


class KernelInputError(ValueError):
    """An array handed to a compiled kernel breaks its contract (shape, dtype or bounds)."""


def require_sample(kernel: str, X: Any, y: Any) -> None:
    """``X`` is 2-D (n, p) with n >= 1, and ``y`` is 1-D with one value per row of ``X``."""
    X_shape, y_shape = np.shape(X), np.shape(y)
    if len(X_shape) != 2 or len(y_shape) != 1 or X_shape[0] != y_shape[0] or X_shape[0] < 1:
        raise KernelInputError(f"{kernel}: X of shape {X_shape} and y of shape {y_shape}; the kernel needs X (n, p) "
                               "and y (n,) with the same n >= 1.")


def require_fold_labels(kernel: str, labels: Any, n: int, K: int) -> None:
    """``labels`` holds one integer fold 0..K-1 per row of an n-row sample (the last axis)."""
    labels = np.asarray(labels)
    if labels.shape[-1:] != (n,) or labels.dtype.kind not in "iu":
        raise KernelInputError(f"{kernel}: fold labels of shape {labels.shape} and dtype {labels.dtype} for n={n} "
                               "rows; the kernel needs one integer fold label per row.")
    if labels.size and (labels.min() < 0 or labels.max() >= K):
        raise KernelInputError(f"{kernel}: fold labels span {labels.min()}..{labels.max()}; with K={K} they must "
                               f"lie in 0..{K - 1}.")


def require_rows(kernel: str, rows: Any, n: int, name: str = "rows") -> None:
    """``rows`` are integer row positions 0..n-1 of an n-row array."""
    rows = np.asarray(rows)
    if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise KernelInputError(f"{kernel}: {name} of shape {rows.shape} and dtype {rows.dtype}; the kernel needs a "
                               "1-D array of integer row positions.")
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise KernelInputError(f"{kernel}: {name} span {rows.min()}..{rows.max()}; positions must lie in 0..{n - 1} "
                               f"(n={n} rows).")


def require_features(kernel: str, X: Any, p: int) -> None:
    """``X`` is 2-D with at least ``p`` columns (the features a model reads)."""
    shape = np.shape(X)
    if len(shape) != 2 or shape[1] < p:
        raise KernelInputError(f"{kernel}: features of shape {shape}; the model reads {p} feature column(s) of a "
                               "2-D array (rows, features).")
