"""Resampling schemes: K-fold, Dietterich's 5x2, repeated train/validation splits, and the
nested cross-validation of Bates, Hastie & Tibshirani (2023)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

__all__ = ["KFold", "NestedCVLosses", "five_by_two_splits", "nested_cv_losses", "train_validation_splits"]


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


def five_by_two_splits(n: int, rng: np.random.Generator) -> np.ndarray:
    """Dietterich's (1998) 5x2 design: five random halvings of the ``n`` examples.

    Returns
    -------
    ndarray of bool, shape (5, n)
        ``True`` marks the first half of replication i (fold 1 trains on it and tests on the
        second half; fold 2 the other way round). For odd n the first half has n // 2 examples.
    """
    if n < 4:
        raise ValueError(f"the 5x2 design needs n >= 4; got n={n}.")
    halves = np.zeros((5, n), dtype=bool)
    for i in range(5):
        halves[i, rng.permutation(n)[: n // 2]] = True
    return halves


def train_validation_splits(n: int, n_test: int, repetitions: int, rng: np.random.Generator) -> np.ndarray:
    """Repeated random train/validation splits (Nadeau & Bengio 2003).

    Returns
    -------
    ndarray of bool, shape (repetitions, n)
        ``True`` marks the ``n_test`` validation examples of split j.
    """
    if not 1 <= n_test < n:
        raise ValueError(f"need 1 <= n_test < n; got n_test={n_test}, n={n}.")
    if repetitions < 2:
        raise ValueError(f"need at least 2 train/validation splits; got {repetitions}.")
    test = np.zeros((repetitions, n), dtype=bool)
    for j in range(repetitions):
        test[j, rng.permutation(n)[:n_test]] = True
    return test


@dataclass(frozen=True)
class NestedCVLosses:
    """Losses of nested cross-validation (Algorithm 1 of Bates, Hastie & Tibshirani 2023).

    Attributes
    ----------
    pair_losses : ndarray, shape (R, K, K, m)
        ``pair_losses[r, k, j]`` are the losses on fold j of the model trained without folds
        k and j (repetition r): the inner CV of outer fold k. The diagonal (j = k) is NaN.
    outer_losses : ndarray, shape (R, K, m)
        ``outer_losses[r, k]`` are the losses on fold k of the model trained without fold k
        (ordinary K-fold CV of repetition r).
    labels : ndarray of int, shape (R, n)
        Fold labels of each repetition.
    """

    pair_losses: np.ndarray
    outer_losses: np.ndarray
    labels: np.ndarray


def nested_cv_losses(losses: Callable[[np.ndarray, np.ndarray], np.ndarray], n: int, K: int, repetitions: int,
                     rng: np.random.Generator, first_labels: np.ndarray | None = None,
                     first_outer_losses: np.ndarray | None = None) -> NestedCVLosses:
    """Run nested K-fold CV ``repetitions`` times with random fold assignments.

    The inner CV of outer fold k trains, for each j != k, on the data without folds k and j
    and tests on fold j. That model is also the one the inner CV of outer fold j uses for
    fold k, so each repetition needs K (K - 1) / 2 pair fits plus the K outer fits, not
    K (K - 1) + K.

    Parameters
    ----------
    losses : callable ``(train_positions, test_positions) -> losses``
        Fits the learner on the training positions (indices 0..n-1 into the sample) and
        returns the loss of each test position, in the order given.
    n, K, repetitions : int
        n must be a multiple of K with n >= 2K, and K >= 3 (the inner CV needs two training
        folds, the within-fold variance two points per fold).
    rng : Generator
        Draws the fold assignments of repetitions not given.
    first_labels, first_outer_losses : ndarray, optional
        The fold labels of an ordinary K-fold CV already run on the same sample, and its
        losses in fold blocks (K, m): repetition 0 reuses them (no outer refits).

    Raises
    ------
    ValueError
        If n is not a multiple of K (the message names the nearest valid n), n < 2K, K < 3
        or repetitions < 1.

    Notes
    -----
    Unequal folds are refused rather than generalised. Bates, Hastie & Tibshirani's
    corrections use the training sizes of equal folds: the inner models see n(K-2)/K points,
    the outer ones n(K-1)/K, which gives the bias factor 1 + (K-2)/K (exact when the excess
    error decays like 1/size) and the rescaling (K-1)/K of the MSE of the inner (K-1)-fold
    CV to K-fold CV on n points. With fold sizes m_k the inner training sizes n - m_k - m_j
    vary by pair and the inner CV of fold k has n - m_k points; the same 1/size model then
    gives a factor (n - m_k)/n on each fold's a_k - b_k and the bias factor
    (mean_pairs 1/(n - m_k - m_j) - 1/n) / (mean_pairs 1/(n - m_k - m_j) - mean_k 1/(n - m_k))
    with point-weighted means. That generalisation would be ours, not the authors', and with
    sizes differing by at most one point it differs from dropping the n mod K surplus points
    by O(1/n). The authors' package assumes equal folds too: ``nested_cv_helper`` never tests
    the last n mod K rows (in data order) but trains on them in every fit. So: use n a
    multiple of K, or a K that divides n.
    """
    if K < 3:
        raise ValueError(f"nested CV needs K >= 3 folds; got K={K}.")
    if repetitions < 1:
        raise ValueError(f"nested CV needs at least 1 repetition; got {repetitions}.")
    if n % K or n < 2 * K:
        raise ValueError(f"nested CV needs equal folds of at least 2 points (n a multiple of K, n >= 2K); got n={n}, "
                         f"K={K}. {_nearest_valid_n(n, K)}")
    if first_labels is not None:
        sizes = np.bincount(np.asarray(first_labels), minlength=K)
        if sizes.size != K or np.any(sizes != n // K):
            raise ValueError(f"first_labels must put n/K = {n // K} points in each of the K={K} folds; got fold "
                             f"sizes {sizes.tolist()}.")
    m = n // K
    pair = np.full((repetitions, K, K, m), np.nan)
    outer = np.empty((repetitions, K, m))
    all_labels = np.empty((repetitions, n), dtype=np.int64)
    for r in range(repetitions):
        labels = first_labels if (r == 0 and first_labels is not None) else KFold(K).labels(n, rng)
        all_labels[r] = labels
        members = [np.flatnonzero(labels == k) for k in range(K)]
        for a in range(K):
            for b in range(a + 1, K):
                test = np.concatenate([members[a], members[b]])
                train = np.flatnonzero((labels != a) & (labels != b))
                loss = np.asarray(losses(train, test), dtype=float)
                pair[r, b, a], pair[r, a, b] = loss[:m], loss[m:]   # fold a tested without {a, b}: outer fold b
        if r == 0 and first_outer_losses is not None:
            outer[r] = first_outer_losses
        else:
            for k in range(K):
                outer[r, k] = losses(np.flatnonzero(labels != k), members[k])
    return NestedCVLosses(pair, outer, all_labels)


def _nearest_valid_n(n: int, K: int) -> str:
    """Advice for an error message: the multiples of K (at least 2K) nearest to n."""
    below, above = (n // K) * K, -(-n // K) * K
    if below >= 2 * K:
        drop = n - below
        return f"Use n={below} (drop {drop} point{'s' if drop > 1 else ''}) or n={above}, or a K that divides n={n}."
    return f"The smallest valid n is {2 * K}."
