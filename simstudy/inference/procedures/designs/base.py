"""The base of the split designs: :class:`Design`, the :class:`SplitPlan` it draws, the test
size of a test fraction, and the checks that a plan follows a design's layout (shared by the
designs of the sibling modules ``kfold``, ``random_splits`` and ``halves``)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from simstudy.cv.splits import KFold as Folds
from simstudy.errors import ConfigError

__all__ = ["Design", "SplitPlan", "check_complement", "check_fraction", "check_int", "check_partition",
           "complement_plan", "fail", "random_tests", "test_size"]


def test_size(n: int, test_fraction: float) -> int:
    """n_test = floor(f n + 1/2), at least 1: the test points of a split with test fraction f."""
    return max(1, int(math.floor(test_fraction * n + 0.5)))


test_size.__test__ = False  # a helper, not a pytest test


@dataclass(frozen=True, eq=False)
class SplitPlan:
    """One drawn instance of a design for a sample of n points.

    Attributes
    ----------
    design : Design
    n : int
    train : ndarray of int, shape (S, n)
        ``train[s, i]``: how many times point i is in the training set of split s (0 or 1;
        the bootstrap count for :class:`BootstrapDesign`).
    test : ndarray of bool, shape (S, n)
        The points split s tests (never in its training set).
    evaluate : ndarray of bool, shape (S, n)
        Where the loss of split s's model is needed: its test points, and for
        :class:`BootstrapDesign` every point (the in-sample losses give the apparent errors).
    """

    design: "Design"
    n: int
    train: np.ndarray
    test: np.ndarray
    evaluate: np.ndarray = field(default=None)

    def __post_init__(self):
        train = np.asarray(self.train)
        test = np.asarray(self.test, dtype=bool)
        evaluate = test if self.evaluate is None else np.asarray(self.evaluate, dtype=bool)
        if train.ndim != 2 or train.shape != test.shape or evaluate.shape != test.shape or train.shape[1] != self.n:
            raise ValueError(f"a split plan needs train, test and evaluate arrays of shape (splits, n={self.n}); got "
                             f"{train.shape}, {test.shape} and {evaluate.shape}.")
        if not np.issubdtype(train.dtype, np.integer) and not np.all(train == np.round(train)):
            raise ValueError("plan.train must hold whole multiplicities (0, 1, or bootstrap counts).")
        if np.any(train < 0) or np.any(test & (train > 0)) or np.any(test & ~evaluate):
            raise ValueError("a split plan must have train counts >= 0, test points outside the training set, and "
                             "a loss evaluated at every test point.")
        object.__setattr__(self, "train", train.astype(np.int64))
        object.__setattr__(self, "test", test)
        object.__setattr__(self, "evaluate", evaluate)
        self.design.validate(self)

    @property
    def splits(self) -> int:
        return int(self.train.shape[0])

    def test_sizes(self) -> np.ndarray:
        return self.test.sum(axis=1)

    def train_sizes(self) -> np.ndarray:
        return self.train.sum(axis=1)


def check_int(name: str, value, low: int) -> int:
    """``value`` as an int when it is an integer >= ``low``; else a ConfigError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ConfigError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


def check_fraction(value) -> float:
    """A test fraction as a float when it lies in (0, 1); else a ConfigError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ConfigError(f"test_fraction must lie in (0, 1), e.g. 0.1; got {value!r}.")
    return float(value)


def random_tests(n: int, n_test: int, splits: int, rng: np.random.Generator) -> np.ndarray:
    """``splits`` random test sets of ``n_test`` of n points, as in :class:`simstudy.cv.splits.RepeatedSplits`
    (one permutation per split, its first n_test points), for any number of splits."""
    test = np.zeros((splits, n), dtype=bool)
    for j in range(splits):
        test[j, rng.permutation(n)[:n_test]] = True
    return test


def complement_plan(design, n: int, test: np.ndarray) -> SplitPlan:
    """Splits that train on every point they do not test."""
    test = np.asarray(test, dtype=bool)
    return SplitPlan(design, n, (~test).astype(np.int64), test)


def fail(design, what: str) -> None:
    """Raise the ValueError of a plan that does not follow ``design``'s layout, saying ``what``."""
    raise ValueError(f"the split plan does not follow the layout of {design!r}: {what}. Build plans with "
                     f"design.plan(n, rng) or follow the layout in the design's docstring.")


def check_complement(design, plan: SplitPlan, rows=slice(None), universe=None) -> None:
    """Rows train on exactly the points of ``universe`` (default: all) they do not test."""
    test, train = plan.test[rows], plan.train[rows]
    inside = np.ones(plan.n, dtype=bool) if universe is None else universe
    if np.any(train != (inside & ~test)) or np.any(test & ~inside):
        fail(design, "a split does not train on exactly the points it does not test")


def check_partition(design, plan: SplitPlan, rows, K: int, universe=None) -> None:
    """Rows are K-fold CV of ``universe``: each point tested once, fold sizes floor/ceil(m/K)."""
    test = plan.test[rows]
    inside = np.ones(plan.n, dtype=bool) if universe is None else universe
    if test.shape[0] != K or np.any(test.sum(axis=0) != inside):
        fail(design, f"a block of {K} folds does not test each point once")
    sizes = np.sort(test.sum(axis=1))[::-1]
    if np.any(sizes != Folds(K).sizes(int(inside.sum()))):
        fail(design, f"fold sizes {sizes.tolist()} are not floor/ceil of n/K")
    check_complement(design, plan, rows, inside)


class Design:
    """A split design (abstract): ``fits(n)``, ``plan(n, rng)``, ``validate(plan)``, ``check_n(n)``."""

    def fits(self, n: int) -> int:
        """Number of model fits (= splits) the design needs at sample size n."""
        raise NotImplementedError

    def check_n(self, n: int) -> None:
        """Raise ConfigError (a ValueError) when the design cannot run on n points."""

    def plan(self, n: int, rng: np.random.Generator) -> SplitPlan:
        """Draw the splits for a sample of n points."""
        raise NotImplementedError

    def validate(self, plan: SplitPlan) -> None:
        """Raise ValueError when ``plan`` does not follow this design's layout."""
        if plan.splits != self.fits(plan.n):
            fail(self, f"{plan.splits} splits, expected {self.fits(plan.n)}")
