"""Split designs drawn at random, split by split: a hold-out split, J repeated train/validation
splits, Dietterich's 5x2 halvings and the bootstrap's resamples."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simstudy.cv.splits import FiveByTwo as Halvings
from simstudy.errors import ConfigError
from simstudy.inference.procedures.designs.base import (
    Design, SplitPlan, check_complement, check_fraction, check_int, complement_plan, fail, random_tests, test_size,
)

__all__ = ["BootstrapDesign", "FiveByTwoDesign", "HoldOutDesign", "RepeatedSplitsDesign"]


@dataclass(frozen=True)
class HoldOutDesign(Design):
    """One split: train on n - n_test points, test on n_test = floor(f n + 1/2) (1 fit)."""

    test_fraction: float = 0.1

    def __post_init__(self):
        check_fraction(self.test_fraction)

    def fits(self, n: int) -> int:
        return 1

    def check_n(self, n: int) -> None:
        m = test_size(n, self.test_fraction)
        if m < 2 or n - m < 1:
            raise ConfigError(f"hold-out with test_fraction={self.test_fraction} on n={n} tests {m} point(s) and "
                             f"trains on {n - m}; the interval needs >= 2 test points and >= 1 training point.")

    def plan(self, n, rng):
        self.check_n(n)
        return complement_plan(self, n, random_tests(n, test_size(n, self.test_fraction), 1, rng))

    def validate(self, plan):
        super().validate(plan)
        if plan.test_sizes()[0] != test_size(plan.n, self.test_fraction):
            fail(self, f"{plan.test_sizes()[0]} test points, expected {test_size(plan.n, self.test_fraction)}")
        check_complement(self, plan)


@dataclass(frozen=True)
class RepeatedSplitsDesign(Design):
    """J random train/validation splits, each testing n_test = floor(f n + 1/2) points (J fits)."""

    J: int = 15
    test_fraction: float = 0.1

    def __post_init__(self):
        check_int("J", self.J, 2)
        check_fraction(self.test_fraction)

    def fits(self, n: int) -> int:
        return self.J

    def check_n(self, n: int) -> None:
        m = test_size(n, self.test_fraction)
        if n - m < 1:
            raise ConfigError(f"test_fraction={self.test_fraction} leaves no training point at n={n}.")

    def plan(self, n, rng):
        self.check_n(n)
        return complement_plan(self, n, random_tests(n, test_size(n, self.test_fraction), self.J, rng))

    def validate(self, plan):
        super().validate(plan)
        if np.any(plan.test_sizes() != test_size(plan.n, self.test_fraction)):
            fail(self, f"every split must test {test_size(plan.n, self.test_fraction)} points")
        check_complement(self, plan)


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
        halves = Halvings().halves(n, rng)
        test = np.stack([t for h in halves for t in (~h, h)])
        return complement_plan(self, n, test)

    def validate(self, plan):
        super().validate(plan)
        first, second = plan.test[0::2], plan.test[1::2]
        if np.any(first == second) or np.any(second.sum(axis=1) != plan.n // 2):
            fail(self, "splits 2i and 2i+1 must test complementary halves, the second one of floor(n/2) points")
        check_complement(self, plan)


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
        check_int("B", self.B, 2)

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
            fail(self, "split 0 must train on every point once and each resample hold n points")
        if np.any(plan.test != (plan.train == 0)) or not np.all(plan.evaluate):
            fail(self, "each resample tests exactly its out-of-bag points and every loss is evaluated")
