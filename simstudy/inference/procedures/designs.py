"""Split designs: what a procedure needs fitted, declared as small frozen dataclasses.

A design says which models are fitted on which points and where their losses are needed; its
:meth:`Design.plan` draws one instance of it for a sample of size n as a :class:`SplitPlan`:
S splits, each with the multiplicity of every point in its training set (0 or 1, or the
bootstrap count) and the points it tests. The fitting side fits one model per split, evaluates
it where ``plan.evaluate`` is True and passes the losses on (:class:`~.losses.SplitLosses`).

The order of the splits is part of each design (its docstring says it): procedures read the
blocks they need from it (the K folds of a repetition, the halves of a split into halves, the
pair fits of nested CV). A plan built elsewhere (another tool's splits) is accepted when
:meth:`Design.validate` finds it follows that layout.

Sizes. A test fraction f gives n_test = floor(f n + 1/2) points (at least 1); K folds of n
points have sizes floor(n/K) and ceil(n/K) (:class:`simstudy.cv.splits.KFold`); halves of n have
floor(n/2) points (one point is left out when n is odd).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from simstudy.cv.splits import FiveByTwo as _Halvings, KFold as _Folds
from simstudy.errors import ConfigError

__all__ = ["BootstrapDesign", "Design", "FiveByTwoDesign", "HoldOutDesign", "KFoldDesign", "KFoldHalvesDesign",
           "LeaveOneOutDesign", "NestedCVDesign", "PairedSubsamplingDesign", "RepeatedKFoldDesign",
           "RepeatedSplitsDesign", "SplitPlan", "test_size"]


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


def _int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ConfigError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


def _fraction(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ConfigError(f"test_fraction must lie in (0, 1), e.g. 0.1; got {value!r}.")
    return float(value)


def _random_tests(n: int, n_test: int, splits: int, rng: np.random.Generator) -> np.ndarray:
    """``splits`` random test sets of ``n_test`` of n points, as in :class:`simstudy.cv.splits.RepeatedSplits`
    (one permutation per split, its first n_test points), for any number of splits."""
    test = np.zeros((splits, n), dtype=bool)
    for j in range(splits):
        test[j, rng.permutation(n)[:n_test]] = True
    return test


def _complement_plan(design, n: int, test: np.ndarray) -> SplitPlan:
    """Splits that train on every point they do not test."""
    test = np.asarray(test, dtype=bool)
    return SplitPlan(design, n, (~test).astype(np.int64), test)


def _fail(design, what: str) -> None:
    raise ValueError(f"the split plan does not follow the layout of {design!r}: {what}. Build plans with "
                     f"design.plan(n, rng) or follow the layout in the design's docstring.")


def _check_complement(design, plan: SplitPlan, rows=slice(None), universe=None) -> None:
    """Rows train on exactly the points of ``universe`` (default: all) they do not test."""
    test, train = plan.test[rows], plan.train[rows]
    inside = np.ones(plan.n, dtype=bool) if universe is None else universe
    if np.any(train != (inside & ~test)) or np.any(test & ~inside):
        _fail(design, "a split does not train on exactly the points it does not test")


def _check_partition(design, plan: SplitPlan, rows, K: int, universe=None) -> None:
    """Rows are K-fold CV of ``universe``: each point tested once, fold sizes floor/ceil(m/K)."""
    test = plan.test[rows]
    inside = np.ones(plan.n, dtype=bool) if universe is None else universe
    if test.shape[0] != K or np.any(test.sum(axis=0) != inside):
        _fail(design, f"a block of {K} folds does not test each point once")
    sizes = np.sort(test.sum(axis=1))[::-1]
    if np.any(sizes != _Folds(K).sizes(int(inside.sum()))):
        _fail(design, f"fold sizes {sizes.tolist()} are not floor/ceil of n/K")
    _check_complement(design, plan, rows, inside)


class Design:
    """A split design (abstract): ``fits(n)``, ``plan(n, rng)``, ``validate(plan)``, ``check_n(n)``."""

    #: A short name for tables.

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
            _fail(self, f"{plan.splits} splits, expected {self.fits(plan.n)}")


@dataclass(frozen=True)
class HoldOutDesign(Design):
    """One split: train on n - n_test points, test on n_test = floor(f n + 1/2) (1 fit)."""

    test_fraction: float = 0.1

    def __post_init__(self):
        _fraction(self.test_fraction)

    def fits(self, n: int) -> int:
        return 1

    def check_n(self, n: int) -> None:
        m = test_size(n, self.test_fraction)
        if m < 2 or n - m < 1:
            raise ConfigError(f"hold-out with test_fraction={self.test_fraction} on n={n} tests {m} point(s) and "
                             f"trains on {n - m}; the interval needs >= 2 test points and >= 1 training point.")

    def plan(self, n, rng):
        self.check_n(n)
        return _complement_plan(self, n, _random_tests(n, test_size(n, self.test_fraction), 1, rng))

    def validate(self, plan):
        super().validate(plan)
        if plan.test_sizes()[0] != test_size(plan.n, self.test_fraction):
            _fail(self, f"{plan.test_sizes()[0]} test points, expected {test_size(plan.n, self.test_fraction)}")
        _check_complement(self, plan)


@dataclass(frozen=True)
class KFoldDesign(Design):
    """K-fold CV: split k trains without fold k and tests it (K fits; splits in fold order)."""

    K: int = 10

    def __post_init__(self):
        _int("K", self.K, 2)

    def fits(self, n: int) -> int:
        return self.K

    def check_n(self, n: int) -> None:
        _Folds(self.K).sizes(n)

    def plan(self, n, rng):
        labels = _Folds(self.K).labels(n, rng)
        return _complement_plan(self, n, labels[None, :] == np.arange(self.K)[:, None])

    def validate(self, plan):
        super().validate(plan)
        _check_partition(self, plan, slice(None), self.K)


@dataclass(frozen=True)
class LeaveOneOutDesign(Design):
    """Leave-one-out CV: split s tests one point and trains on the other n - 1 (n fits)."""


    def fits(self, n: int) -> int:
        return n

    def check_n(self, n: int) -> None:
        if n < 3:
            raise ConfigError(f"leave-one-out needs n >= 3; got n={n}.")

    def plan(self, n, rng):
        self.check_n(n)
        return _complement_plan(self, n, np.eye(n, dtype=bool))

    def validate(self, plan):
        super().validate(plan)
        if np.any(plan.test_sizes() != 1) or np.any(plan.test.sum(axis=0) != 1):
            _fail(self, "each split must test one point and each point be tested once")
        _check_complement(self, plan)


@dataclass(frozen=True)
class RepeatedKFoldDesign(Design):
    """``repeats`` K-fold CVs with independent fold assignments (K r fits; repetition-major order)."""

    K: int = 10
    repeats: int = 10

    def __post_init__(self):
        _int("K", self.K, 2)
        _int("repeats", self.repeats, 1)

    def fits(self, n: int) -> int:
        return self.K * self.repeats

    def check_n(self, n: int) -> None:
        _Folds(self.K).sizes(n)

    def plan(self, n, rng):
        folds = _Folds(self.K)
        test = np.concatenate([folds.labels(n, rng)[None, :] == np.arange(self.K)[:, None]
                               for _ in range(self.repeats)])
        return _complement_plan(self, n, test)

    def validate(self, plan):
        super().validate(plan)
        for r in range(self.repeats):
            _check_partition(self, plan, slice(r * self.K, (r + 1) * self.K), self.K)


@dataclass(frozen=True)
class RepeatedSplitsDesign(Design):
    """J random train/validation splits, each testing n_test = floor(f n + 1/2) points (J fits)."""

    J: int = 15
    test_fraction: float = 0.1

    def __post_init__(self):
        _int("J", self.J, 2)
        _fraction(self.test_fraction)

    def fits(self, n: int) -> int:
        return self.J

    def check_n(self, n: int) -> None:
        m = test_size(n, self.test_fraction)
        if n - m < 1:
            raise ConfigError(f"test_fraction={self.test_fraction} leaves no training point at n={n}.")

    def plan(self, n, rng):
        self.check_n(n)
        return _complement_plan(self, n, _random_tests(n, test_size(n, self.test_fraction), self.J, rng))

    def validate(self, plan):
        super().validate(plan)
        if np.any(plan.test_sizes() != test_size(plan.n, self.test_fraction)):
            _fail(self, f"every split must test {test_size(plan.n, self.test_fraction)} points")
        _check_complement(self, plan)


@dataclass(frozen=True)
class FiveByTwoDesign(Design):
    """Dietterich's 5x2: five random halvings; split 2i trains on the first half of halving i
    (floor(n/2) points) and tests the second, split 2i + 1 the other way round (10 fits)."""


    def fits(self, n: int) -> int:
        return 10

    def check_n(self, n: int) -> None:
        if n < 4:
            raise ConfigError(f"the 5x2 design needs n >= 4; got n={n}.")

    def plan(self, n, rng):
        halves = _Halvings().halves(n, rng)
        test = np.stack([t for h in halves for t in (~h, h)])
        return _complement_plan(self, n, test)

    def validate(self, plan):
        super().validate(plan)
        first, second = plan.test[0::2], plan.test[1::2]
        if np.any(first == second) or np.any(second.sum(axis=1) != plan.n // 2):
            _fail(self, "splits 2i and 2i+1 must test complementary halves, the second one of floor(n/2) points")
        _check_complement(self, plan)


@dataclass(frozen=True)
class BootstrapDesign(Design):
    """B bootstrap resamples and the apparent error (B + 1 fits).

    Split 0 trains on the whole sample (every count 1) and tests nothing: its in-sample losses
    give the apparent error. Split b = 1..B trains on a bootstrap resample (counts N_i^b,
    multinomial(n, 1/n)) and tests the points it left out (N_i^b = 0). Every split is evaluated
    on every point: the in-sample losses of split b give its apparent error (the location-shifted
    bootstrap) and its out-of-bag losses the leave-one-out bootstrap.
    """

    B: int = 100

    def __post_init__(self):
        _int("B", self.B, 2)

    def fits(self, n: int) -> int:
        return self.B + 1

    def check_n(self, n: int) -> None:
        if n < 3:
            raise ConfigError(f"the bootstrap design needs n >= 3; got n={n}.")

    def plan(self, n, rng):
        self.check_n(n)
        draws = rng.integers(0, n, size=(self.B, n))
        counts = np.zeros((self.B, n), dtype=np.int64)
        np.add.at(counts, (np.repeat(np.arange(self.B), n), draws.ravel()), 1)
        train = np.vstack([np.ones((1, n), dtype=np.int64), counts])
        test = train == 0
        return SplitPlan(self, n, train, test, np.ones_like(test))

    def validate(self, plan):
        super().validate(plan)
        if np.any(plan.train[0] != 1) or np.any(plan.train[1:].sum(axis=1) != plan.n):
            _fail(self, "split 0 must train on every point once and each resample hold n points")
        if np.any(plan.test != (plan.train == 0)) or not np.all(plan.evaluate):
            _fail(self, "each resample tests exactly its out-of-bag points and every loss is evaluated")


@dataclass(frozen=True)
class NestedCVDesign(Design):
    """Nested CV of Bates, Hastie & Tibshirani (2023), ``repetitions`` times.

    Per repetition (a fresh K-fold assignment): K outer splits (split k trains without fold k
    and tests it), then one split per pair of folds a < b (lexicographic), training without
    folds a and b and testing both: the inner CV of outer fold a uses it on fold b and vice
    versa (:func:`simstudy.cv.loop.nested_cv_losses`). R (K + K (K-1)/2) fits; n >= 2K, K >= 3.
    """

    K: int = 5
    repetitions: int = 10

    def __post_init__(self):
        _int("K", self.K, 3)
        _int("repetitions", self.repetitions, 1)

    @property
    def per_repetition(self) -> int:
        return self.K + self.K * (self.K - 1) // 2

    def fits(self, n: int) -> int:
        return self.repetitions * self.per_repetition

    def check_n(self, n: int) -> None:
        if n < 2 * self.K:
            raise ConfigError(f"nested CV needs n >= 2K = {2 * self.K} (two points per fold); got n={n}.")

    def pairs(self) -> list[tuple[int, int]]:
        return [(a, b) for a in range(self.K) for b in range(a + 1, self.K)]

    def plan(self, n, rng):
        self.check_n(n)
        blocks = []
        for _ in range(self.repetitions):
            folds = _Folds(self.K).labels(n, rng)[None, :] == np.arange(self.K)[:, None]
            pairs = [folds[a] | folds[b] for a, b in self.pairs()]
            blocks.append(np.vstack([folds, np.array(pairs)]))
        return _complement_plan(self, n, np.vstack(blocks))

    def validate(self, plan):
        super().validate(plan)
        self.check_n(plan.n)
        K, step = self.K, self.per_repetition
        for r in range(self.repetitions):
            _check_partition(self, plan, slice(r * step, r * step + K), K)
            folds = plan.test[r * step: r * step + K]
            pairs = np.array([folds[a] | folds[b] for a, b in self.pairs()])
            if np.any(plan.test[r * step + K: (r + 1) * step] != pairs):
                _fail(self, "the pair splits must test folds a and b for a < b in lexicographic order")
        _check_complement(self, plan)


def _halves(n: int, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two disjoint random subsets of ``size`` points each (masks)."""
    perm = rng.permutation(n)
    first, second = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    first[perm[:size]], second[perm[size:2 * size]] = True, True
    return first, second


def _check_halves(design, plan: SplitPlan, start: int, block: int, size: int, check_block) -> None:
    """From row ``start`` on: pairs of ``block`` splits on two disjoint halves of ``size`` points."""
    for row in range(start, plan.splits, 2 * block):
        one, two = (np.any((plan.train[r:r + block] > 0) | plan.test[r:r + block], axis=0)
                    for r in (row, row + block))
        if one.sum() != size or two.sum() != size or np.any(one & two):
            _fail(design, f"the splits of a split into halves must use two disjoint halves of {size} points")
        check_block(slice(row, row + block), one)
        check_block(slice(row + block, row + 2 * block), two)


@dataclass(frozen=True)
class PairedSubsamplingDesign(Design):
    """Nadeau & Bengio's design of the conservative Z (J + 2 M J fits).

    Splits 0..J-1: J random train/validation splits of the whole sample (n_test = floor(f n +
    1/2) test points, n1 = n - n_test training points). Then, for m = 1..M, the sample is split
    at random into two disjoint halves of h = floor(n/2) points, and each half gets J random
    splits with the same n_test test points and h - n_test training points: rows
    J + 2 J (m-1) + (0..J-1) on the first half, the next J rows on the second (the layout of
    mlr3inferr's ``ResamplingPairedSubsampling``).
    """

    J: int = 15
    M: int = 10
    test_fraction: float = 0.1

    def __post_init__(self):
        _int("J", self.J, 1)
        _int("M", self.M, 1)
        _fraction(self.test_fraction)

    def fits(self, n: int) -> int:
        return self.J * (1 + 2 * self.M)

    def check_n(self, n: int) -> None:
        m = test_size(n, self.test_fraction)
        if n // 2 - m < 1:
            raise ConfigError(f"the conservative Z's halves of n // 2 = {n // 2} points leave no training point for "
                             f"n_test = {m} (test_fraction={self.test_fraction}); use a larger n or a smaller "
                             f"test_fraction (below 1/2).")

    def plan(self, n, rng):
        self.check_n(n)
        m = test_size(n, self.test_fraction)
        rows = [_random_tests(n, m, self.J, rng)]
        trains = [~rows[0]]
        for _ in range(self.M):
            for half in _halves(n, n // 2, rng):
                members = np.flatnonzero(half)
                test = np.zeros((self.J, n), dtype=bool)
                test[:, members] = _random_tests(members.size, m, self.J, rng)
                rows.append(test)
                trains.append(half[None, :] & ~test)
        return SplitPlan(self, n, np.vstack(trains).astype(np.int64), np.vstack(rows))

    def validate(self, plan):
        super().validate(plan)
        m, J = test_size(plan.n, self.test_fraction), self.J
        if np.any(plan.test_sizes() != m):
            _fail(self, f"every split must test {m} points")
        _check_complement(self, plan, slice(0, J))

        def block(rows, half):
            _check_complement(self, plan, rows, half)

        _check_halves(self, plan, J, J, plan.n // 2, block)


@dataclass(frozen=True)
class KFoldHalvesDesign(Design):
    """K-fold CV of the sample plus K-fold CVs of both halves of ``splits`` random splits into
    disjoint halves (the data-driven rho_hat of :mod:`simstudy.inference.rho_hat`).

    Rows 0..K-1: K-fold CV of the whole sample. Then for b = 1..B (B = ``splits``): K-fold CV of
    the first half (K rows) and of the second (K rows), halves of h = floor(n/2) rounded down to
    a multiple of K points (:func:`simstudy.inference.rho_hat.subsample_size`). K (1 + 2B) fits.
    """

    K: int = 10
    splits: int = 5

    def __post_init__(self):
        _int("K", self.K, 2)
        _int("splits", self.splits, 1)

    def half_size(self, n: int) -> int:
        return n // 2 // self.K * self.K

    def fits(self, n: int) -> int:
        return self.K * (1 + 2 * self.splits)

    def check_n(self, n: int) -> None:
        if self.half_size(n) < 2 * self.K:
            raise ConfigError(f"the half-sample CVs need halves of at least 2K = {2 * self.K} points; n={n} gives "
                             f"{self.half_size(n)}. Use n >= {4 * self.K}.")

    def plan(self, n, rng):
        self.check_n(n)
        folds, h = _Folds(self.K), self.half_size(n)
        rows = [folds.labels(n, rng)[None, :] == np.arange(self.K)[:, None]]
        trains = [~rows[0]]
        for _ in range(self.splits):
            for half in _halves(n, h, rng):
                members = np.flatnonzero(half)
                test = np.zeros((self.K, n), dtype=bool)
                test[:, members] = folds.labels(h, rng)[None, :] == np.arange(self.K)[:, None]
                rows.append(test)
                trains.append(half[None, :] & ~test)
        return SplitPlan(self, n, np.vstack(trains).astype(np.int64), np.vstack(rows))

    def validate(self, plan):
        super().validate(plan)
        self.check_n(plan.n)
        _check_partition(self, plan, slice(0, self.K), self.K)

        def block(rows, half):
            _check_partition(self, plan, rows, self.K, half)

        _check_halves(self, plan, self.K, self.K, self.half_size(plan.n), block)
