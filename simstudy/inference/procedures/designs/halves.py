"""Split designs that repeat their splits inside random halves of the sample: Nadeau & Bengio's
paired subsampling (the conservative Z) and the K-fold CVs of halves (the data-driven rho_hat)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simstudy.cv.splits import KFold as Folds
from simstudy.errors import ConfigError
from simstudy.inference.procedures.designs.base import (
    Design, SplitPlan, check_complement, check_fraction, check_int, check_partition, fail, random_tests,
    test_size,
)

__all__ = ["KFoldHalvesDesign", "PairedSubsamplingDesign"]


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
            fail(design, f"the splits of a split into halves must use two disjoint halves of {size} points")
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
        check_int("J", self.J, 1)
        check_int("M", self.M, 1)
        check_fraction(self.test_fraction)

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
        rows = [random_tests(n, m, self.J, rng)]
        trains = [~rows[0]]
        for _ in range(self.M):
            for half in _halves(n, n // 2, rng):
                members = np.flatnonzero(half)
                test = np.zeros((self.J, n), dtype=bool)
                test[:, members] = random_tests(members.size, m, self.J, rng)
                rows.append(test)
                trains.append(half[None, :] & ~test)
        return SplitPlan(self, n, np.vstack(trains).astype(np.int64), np.vstack(rows))

    def validate(self, plan):
        super().validate(plan)
        m, J = test_size(plan.n, self.test_fraction), self.J
        if np.any(plan.test_sizes() != m):
            fail(self, f"every split must test {m} points")
        check_complement(self, plan, slice(0, J))

        def block(rows, half):
            check_complement(self, plan, rows, half)

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
        check_int("K", self.K, 2)
        check_int("splits", self.splits, 1)

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
        folds, h = Folds(self.K), self.half_size(n)
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
        check_partition(self, plan, slice(0, self.K), self.K)

        def block(rows, half):
            check_partition(self, plan, rows, self.K, half)

        _check_halves(self, plan, self.K, self.K, self.half_size(plan.n), block)
