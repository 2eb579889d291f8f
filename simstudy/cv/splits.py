"""Split schemes: K-fold, Dietterich's 5x2 and repeated train/validation splits, on one base class.

As scikit-learn's ``BaseCrossValidator``, the base class :class:`Splitter` does the generic work
and a scheme says only how it draws its test sets from a random generator
(:meth:`Splitter.test_masks`). A study draws them from each replicate's own generator
(``KFold(K).labels(n, rng)``, ``FiveByTwo().halves(n, rng)``); the same objects are scikit-learn
splitters too (:meth:`Splitter.split` with scikit-learn's signature, drawing from
``random_state``), and :func:`check_splitter` accepts any scikit-learn splitter where simstudy
takes one. Any n: folds of n not a multiple of K have sizes floor(n/K) and ceil(n/K), halves of
odd n differ by one point.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

__all__ = ["FiveByTwo", "KFold", "RepeatedSplits", "Splitter", "check_splitter"]


class Splitter(ABC):
    """Base of the split schemes: a scheme draws the test sets of its splits (:meth:`test_masks`).

    Subclasses are frozen dataclasses with a ``random_state`` field (an int, a Generator or None),
    used only by the scikit-learn interface (:meth:`split`); a study passes its replicate's
    generator to :meth:`test_masks` or to the scheme's own method (:meth:`KFold.labels`).
    """

    random_state: Any

    @abstractmethod
    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """The number of splits (scikit-learn's signature; the arguments are not used)."""

    @abstractmethod
    def test_masks(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """The test sets of the splits of ``n`` examples, drawn from ``rng``.

        Returns
        -------
        ndarray of bool, shape (get_n_splits(), n)
            ``True`` marks the test examples of split j; the others train.
        """

    def train_test(self, n: int, rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(train_index, test_index) of each split of ``n`` examples, in order, drawn from ``rng``."""
        for test in self.test_masks(n, rng):
            yield np.flatnonzero(~test), np.flatnonzero(test)

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(train_index, test_index) of each split of the rows of ``X``, drawn from ``random_state``
        (scikit-learn's splitter interface: ``cross_val_score(est, X, y, cv=KFold(10, random_state=0))``)."""
        yield from self.train_test(len(X), np.random.default_rng(self.random_state))


@dataclass(frozen=True)
class KFold(Splitter):
    """K-fold cross-validation; folds of sizes floor(n/K) or ceil(n/K).

    The fold sizes follow scikit-learn's ``KFold``: the first n mod K folds hold one point
    more. The examples are assigned to folds by a random permutation drawn from the
    replicate's generator (for i.i.d. samples any fixed assignment has the same distribution;
    the permutation keeps this true for samples that are not exchangeable): the labels are
    ``np.repeat(arange(K), sizes)[rng.permutation(n)]``.

    Parameters
    ----------
    n_splits : int
        K >= 2.
    random_state : int, Generator or None
        For :meth:`split` only.
    """

    n_splits: int = 10
    random_state: Any = None

    def __post_init__(self):
        if self.n_splits < 2:
            raise ValueError(f"KFold needs n_splits >= 2; got {self.n_splits}.")

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        return self.n_splits

    def sizes(self, n: int) -> np.ndarray:
        """Fold sizes: n // K, plus one for the first n % K folds."""
        K = self.n_splits
        if n < K:
            raise ValueError(f"KFold needs n >= K={K} (at least one point per fold); got n={n}.")
        return n // K + (np.arange(K) < n % K)

    def labels(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Fold label in 0..K-1 of each of the ``n`` examples (any n >= K)."""
        return np.repeat(np.arange(self.n_splits), self.sizes(n))[rng.permutation(n)]

    def test_masks(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Fold k's examples test split k (the folds in order)."""
        return self.labels(n, rng)[None, :] == np.arange(self.n_splits)[:, None]


@dataclass(frozen=True)
class FiveByTwo(Splitter):
    """Dietterich's (1998) 5x2 design: five random halvings of the examples, each used both ways.

    Split 2i trains on the first half of halving i and tests on the second; split 2i + 1 the other
    way round. For odd n the first half has n // 2 examples.
    """

    random_state: Any = None

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        return 10

    def halves(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """The five halvings of ``n`` examples.

        Returns
        -------
        ndarray of bool, shape (5, n)
            ``True`` marks the first half of halving i.
        """
        if n < 4:
            raise ValueError(f"the 5x2 design needs n >= 4; got n={n}.")
        halves = np.zeros((5, n), dtype=bool)
        for i in range(5):
            halves[i, rng.permutation(n)[: n // 2]] = True
        return halves

    def test_masks(self, n: int, rng: np.random.Generator) -> np.ndarray:
        halves = self.halves(n, rng)
        return np.stack([~halves, halves], axis=1).reshape(10, n)


@dataclass(frozen=True)
class RepeatedSplits(Splitter):
    """Repeated random train/validation splits (Nadeau & Bengio 2003): ``repetitions`` random test
    sets of ``n_test`` examples each."""

    n_test: int
    repetitions: int
    random_state: Any = None

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        return self.repetitions

    def test_masks(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if not 1 <= self.n_test < n:
            raise ValueError(f"need 1 <= n_test < n; got n_test={self.n_test}, n={n}.")
        if self.repetitions < 2:
            raise ValueError(f"need at least 2 train/validation splits; got {self.repetitions}.")
        test = np.zeros((self.repetitions, n), dtype=bool)
        for j in range(self.repetitions):
            test[j, rng.permutation(n)[:self.n_test]] = True
        return test


def check_splitter(cv: Any, random_state: int | None = None) -> Any:
    """A splitter from what a user passes as ``cv``: a number of folds (scikit-learn's shuffled
    ``KFold`` with ``random_state``), a :class:`Splitter` or any scikit-learn splitter (an object
    with ``split(X, y, groups)`` and ``get_n_splits()``: ``StratifiedKFold``, ``GroupKFold``,
    ``RepeatedKFold``, ...).

    Raises
    ------
    ValueError
        Fewer than 2 folds, or an object that is no splitter.
    """
    if isinstance(cv, (int, np.integer)) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(f"cv={cv} is invalid: use at least 2 folds, or a scikit-learn splitter.")
        from sklearn.model_selection import KFold as ShuffledKFold

        return ShuffledKFold(int(cv), shuffle=True, random_state=random_state)
    if not (callable(getattr(cv, "split", None)) and callable(getattr(cv, "get_n_splits", None))):
        raise ValueError(f"cv={cv!r} is invalid: pass a number of folds or a scikit-learn splitter (KFold, "
                         "StratifiedKFold, GroupKFold, RepeatedKFold, ShuffleSplit, ...).")
    return cv
