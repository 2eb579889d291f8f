"""Per-fold summaries of cross-validation residuals, for equal or unequal fold sizes.

K-fold CV on n points that K does not divide has folds of sizes floor(n/K) and ceil(n/K)
(scikit-learn's ``KFold`` rule, and :class:`simstudy.cv.splits.KFold`). The estimators built on
fold means and within-fold variances (:mod:`.variance`, :func:`~simstudy.inference.cv_clt_sigma`)
take them from here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["FoldSummary", "fold_summary", "check_folds"]


@dataclass(frozen=True)
class FoldSummary:
    """Fold sizes, fold means and within-fold variances of residuals (leading axes: replicates).

    Attributes
    ----------
    labels : ndarray (K,)
        The distinct fold labels, sorted; fold k below is ``labels[k]``.
    sizes : ndarray of int (K,)
        m_k, the number of residuals in fold k.
    means : ndarray (..., K)
        Fold means mu_hat_k.
    variances : ndarray (..., K)
        Within-fold sample variances s_k^2 (ddof = 1; NaN for a fold of one point).
    """

    labels: np.ndarray
    sizes: np.ndarray
    means: np.ndarray
    variances: np.ndarray

    @property
    def n(self) -> int:
        return int(self.sizes.sum())

    @property
    def K(self) -> int:
        return int(self.sizes.size)

    @property
    def equal(self) -> bool:
        """All folds have the same size (n a multiple of K)."""
        return bool(np.all(self.sizes == self.sizes[0]))


def check_folds(residuals, folds, min_size: int = 1, why: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Residuals as floats and 1-D fold labels, checked: one label per residual, K >= 2 folds,
    every fold at least ``min_size`` points (``why`` says which estimator needs it)."""
    e = np.asarray(residuals, dtype=float)
    folds = np.asarray(folds)
    if e.ndim < 1 or folds.ndim != 1 or e.shape[-1] != folds.shape[0]:
        raise ValueError(
            f"folds must be a 1-D array with one label per residual; got residuals of shape "
            f"{e.shape} and folds of shape {folds.shape}."
        )
    labels, counts = np.unique(folds, return_counts=True)
    if labels.size < 2:
        raise ValueError(f"folds must contain at least 2 distinct labels (K >= 2); got {labels.size}.")
    if np.any(counts < min_size):
        raise ValueError(f"each fold must hold at least {min_size} residuals{why}; got fold sizes "
                         f"{dict(zip(labels.tolist(), counts.tolist()))}.")
    return e, folds


def fold_summary(residuals, folds) -> FoldSummary:
    """Fold sizes, means and within-fold variances (ddof = 1) of ``residuals`` (..., n).

    Folds may have any sizes; labels may be any sortable values in any order.
    """
    e, folds = check_folds(residuals, folds)
    labels, sizes = np.unique(folds, return_counts=True)
    means = np.empty(e.shape[:-1] + (labels.size,))
    variances = np.full(e.shape[:-1] + (labels.size,), np.nan)
    for k, label in enumerate(labels):
        block = e[..., folds == label]
        means[..., k] = block.mean(axis=-1)
        if sizes[k] > 1:
            variances[..., k] = block.var(axis=-1, ddof=1)
    return FoldSummary(labels, sizes, means, variances)
