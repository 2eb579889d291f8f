"""Resampling schemes. Only K-fold so far; the splitter API mirrors scikit-learn's."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

__all__ = ["KFold"]


@dataclass(frozen=True)
class KFold:
    """K-fold cross-validation with blocks of equal size m = n / K.

    The examples are assigned to folds by a random permutation drawn from the replicate's
    generator (for i.i.d. samples any fixed assignment has the same distribution; the
    permutation keeps this true for samples that are not exchangeable).

    Parameters
    ----------
    n_splits : int
        K >= 2.
    """

    n_splits: int = 10

    def __post_init__(self):
        if self.n_splits < 2:
            raise ValueError(f"KFold needs n_splits >= 2; got {self.n_splits}.")

    def labels(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Fold label in 0..K-1 of each of the ``n`` examples (n must be a multiple of K)."""
        K = self.n_splits
        if n % K or n < 2 * K:
            raise ValueError(f"KFold needs n a multiple of K={K} with n >= 2K; got n={n}.")
        labels = np.repeat(np.arange(K), n // K)
        return labels[rng.permutation(n)]

    def split(self, n: int, rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield (train_index, test_index) for each fold, in fold order."""
        labels = self.labels(n, rng)
        for k in range(self.n_splits):
            test = labels == k
            yield np.flatnonzero(~test), np.flatnonzero(test)
