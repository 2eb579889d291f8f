"""Resampling schemes: K-fold, Dietterich's 5x2, repeated train/validation splits, and the
nested cross-validation of Bates, Hastie & Tibshirani (2023). Any n: folds of n not a multiple
of K have sizes floor(n/K) and ceil(n/K), halves of odd n differ by one point."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

__all__ = ["KFold", "NestedCVLosses", "five_by_two_splits", "nested_cv_losses", "train_validation_splits"]


@dataclass(frozen=True)
class KFold:
    """K-fold cross-validation; folds of sizes floor(n/K) or ceil(n/K).

    The fold sizes follow scikit-learn's ``KFold``: the first n mod K folds hold one point
    more. The examples are assigned to folds by a random permutation drawn from the
    replicate's generator (for i.i.d. samples any fixed assignment has the same distribution;
    the permutation keeps this true for samples that are not exchangeable): the labels are
    ``np.repeat(arange(K), sizes)[rng.permutation(n)]``, which for n a multiple of K is the
    earlier ``np.repeat(arange(K), n // K)[rng.permutation(n)]`` (same labels, same draws).

    Parameters
    ----------
    n_splits : int
        K >= 2.
    """

    n_splits: int = 10

    def __post_init__(self):
        if self.n_splits < 2:
            raise ValueError(f"KFold needs n_splits >= 2; got {self.n_splits}.")

    def sizes(self, n: int) -> np.ndarray:
        """Fold sizes: n // K, plus one for the first n % K folds."""
        K = self.n_splits
        if n < K:
            raise ValueError(f"KFold needs n >= K={K} (at least one point per fold); got n={n}.")
        return n // K + (np.arange(K) < n % K)

    def labels(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Fold label in 0..K-1 of each of the ``n`` examples (any n >= K)."""
        return np.repeat(np.arange(self.n_splits), self.sizes(n))[rng.permutation(n)]

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

    Folds of unequal sizes are stored NaN-padded to the largest size m = ceil(n/K); fold k's
    losses are in the order of its points' positions.

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


def nested_cv_losses(losses: Callable[[np.ndarray, np.ndarray], np.ndarray] | None, n: int, K: int, repetitions: int,
                     rng: np.random.Generator, first_labels: np.ndarray | None = None,
                     first_outer_losses: np.ndarray | None = None,
                     many_losses: Callable[[list, list], list] | None = None) -> NestedCVLosses:
    """Run nested K-fold CV ``repetitions`` times with random fold assignments.

    The inner CV of outer fold k trains, for each j != k, on the data without folds k and j
    and tests on fold j. That model is also the one the inner CV of outer fold j uses for
    fold k, so each repetition needs K (K - 1) / 2 pair fits plus the K outer fits, not
    K (K - 1) + K.

    Parameters
    ----------
    losses : callable ``(train_positions, test_positions) -> losses``
        Fits the learner on the training positions (indices 0..n-1 into the sample) and
        returns the loss of each test position, in the order given (finite numbers).
    n, K, repetitions : int
        n >= 2K (every fold at least 2 points: the within-fold variance), K >= 3 (the inner
        CV needs two training folds). n need not be a multiple of K: folds then have sizes
        floor(n/K) and ceil(n/K) (:class:`KFold`), stored NaN-padded.
    rng : Generator
        Draws the fold assignments of repetitions not given.
    first_labels, first_outer_losses : ndarray (n,), optional
        The fold labels (0..K-1) of an ordinary K-fold CV already run on the same sample, and
        its per-point losses in sample order: repetition 0 reuses them (no outer refits).
    many_losses : callable ``(trains, tests) -> list of losses``, optional
        The fits of a repetition at once, instead of ``losses`` (pass None for it): called
        once per repetition, after its fold labels are drawn, with its splits in the order
        ``losses`` would be called (the pair fits, then the outer fits), so a learner drawing
        random numbers per fit (even from ``rng``) draws the same ones.

    Raises
    ------
    ValueError
        If n < 2K (the message names the smallest valid n), K < 3, repetitions < 1, a fold of
        ``first_labels`` has fewer than 2 points, or a loss is not finite.

    Notes
    -----
    Unequal folds are generalised, not refused: see :mod:`simstudy.inference.nested` for what
    Algorithm 1 and the corrections do with them (the authors' package assumes equal folds).
    """
    if K < 3:
        raise ValueError(f"nested CV needs K >= 3 folds; got K={K}.")
    if repetitions < 1:
        raise ValueError(f"nested CV needs at least 1 repetition; got {repetitions}.")
    if n < 2 * K:
        raise ValueError(f"nested CV needs at least 2 points per fold (n >= 2K); got n={n}, K={K}. "
                         f"The smallest valid n is {2 * K}, or use a smaller K (at most {n // 2}).")
    if first_labels is not None:
        sizes = np.bincount(np.asarray(first_labels), minlength=K)
        if sizes.size != K or np.any(sizes < 2) or len(first_labels) != n:
            raise ValueError(f"first_labels must give each of n={n} points a fold 0..{K - 1}, with at least 2 points "
                             f"per fold; got fold sizes {sizes.tolist()}.")
    if (losses is None) == (many_losses is None):
        raise ValueError("nested CV needs exactly one of losses (one fit per call) and many_losses (all fits in one "
                         "call).")
    m = -(-n // K)
    pair = np.full((repetitions, K, K, m), np.nan)
    outer = np.full((repetitions, K, m), np.nan)
    all_labels = np.empty((repetitions, n), dtype=np.int64)
    for r in range(repetitions):
        labels = np.asarray(first_labels) if (r == 0 and first_labels is not None) else KFold(K).labels(n, rng)
        all_labels[r] = labels
        members = [np.flatnonzero(labels == k) for k in range(K)]
        trains, tests, places = [], [], []   # the repetition's fits, in order, and where their losses go
        for a in range(K):
            for b in range(a + 1, K):
                tests.append(np.concatenate([members[a], members[b]]))
                trains.append(np.flatnonzero((labels != a) & (labels != b)))
                places.append((a, b, members[a].size))
        for k in range(K):
            if r == 0 and first_outer_losses is not None:
                outer[r, k, :members[k].size] = _finite(np.asarray(first_outer_losses)[members[k]], members[k].size)
            else:
                tests.append(members[k])
                trains.append(np.flatnonzero(labels != k))
                places.append((k, -1, members[k].size))
        for (a, b, ma), test, loss in zip(places, tests, _fit_splits(losses, many_losses, trains, tests)):
            loss = _finite(loss, test.size)
            if b < 0:                                        # outer fold a
                outer[r, a, :ma] = loss
            else:                                            # fold a without {a, b}: outer fold b, and vice versa
                pair[r, b, a, :ma], pair[r, a, b, :test.size - ma] = loss[:ma], loss[ma:]
    return NestedCVLosses(pair, outer, all_labels)


def _fit_splits(losses, many_losses, trains: list, tests: list):
    """The losses of each split: one ``many_losses`` call, or ``losses`` split by split (lazily, in order)."""
    if many_losses is None:
        return map(losses, trains, tests)
    fitted = list(many_losses(trains, tests))
    if len(fitted) != len(trains):
        raise ValueError(f"many_losses returned {len(fitted)} loss arrays for {len(trains)} splits; return one per "
                         "split, in order.")
    return fitted


def _finite(values, size: int) -> np.ndarray:
    """Losses of one fit as floats, checked: one finite value per test point."""
    out = np.asarray(values, dtype=float)
    if out.shape != (size,):
        raise ValueError(f"the losses callable returned shape {out.shape} for {size} test points; return one loss "
                         "per test point.")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"the losses callable returned {int(np.sum(~np.isfinite(out)))} non-finite loss(es) (NaN or "
                         "inf); nested CV needs finite losses (NaN marks padding).")
    return out
