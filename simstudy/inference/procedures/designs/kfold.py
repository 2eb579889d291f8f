"""The K-fold family of split designs: K-fold CV, leave-one-out, repeated K-fold and the nested
CV of Bates, Hastie & Tibshirani (2023), each a partition of the sample into folds."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simstudy.cv.splits import KFold as Folds
from simstudy.errors import ConfigError
from simstudy.inference.procedures.designs.base import (
    Design, check_complement, check_int, check_partition, complement_plan, fail,
)

__all__ = ["KFoldDesign", "LeaveOneOutDesign", "NestedCVDesign", "RepeatedKFoldDesign"]


@dataclass(frozen=True)
class KFoldDesign(Design):
    """K-fold CV: split k trains without fold k and tests it (K fits; splits in fold order)."""

    K: int = 10

    def __post_init__(self):
        check_int("K", self.K, 2)

    def fits(self, n: int) -> int:
        return self.K

    def check_n(self, n: int) -> None:
        Folds(self.K).sizes(n)

    def plan(self, n, rng):
        labels = Folds(self.K).labels(n, rng)
        return complement_plan(self, n, labels[None, :] == np.arange(self.K)[:, None])

    def validate(self, plan):
        super().validate(plan)
        check_partition(self, plan, slice(None), self.K)


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
        return complement_plan(self, n, np.eye(n, dtype=bool))

    def validate(self, plan):
        super().validate(plan)
        if np.any(plan.test_sizes() != 1) or np.any(plan.test.sum(axis=0) != 1):
            fail(self, "each split must test one point and each point be tested once")
        check_complement(self, plan)


@dataclass(frozen=True)
class RepeatedKFoldDesign(Design):
    """``repeats`` K-fold CVs with independent fold assignments (K r fits; repetition-major order)."""

    K: int = 10
    repeats: int = 10

    def __post_init__(self):
        check_int("K", self.K, 2)
        check_int("repeats", self.repeats, 1)

    def fits(self, n: int) -> int:
        return self.K * self.repeats

    def check_n(self, n: int) -> None:
        Folds(self.K).sizes(n)

    def plan(self, n, rng):
        folds = Folds(self.K)
        test = np.concatenate([folds.labels(n, rng)[None, :] == np.arange(self.K)[:, None]
                               for _ in range(self.repeats)])
        return complement_plan(self, n, test)

    def validate(self, plan):
        super().validate(plan)
        for r in range(self.repeats):
            check_partition(self, plan, slice(r * self.K, (r + 1) * self.K), self.K)


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
        check_int("K", self.K, 3)
        check_int("repetitions", self.repetitions, 1)

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
            folds = Folds(self.K).labels(n, rng)[None, :] == np.arange(self.K)[:, None]
            pairs = [folds[a] | folds[b] for a, b in self.pairs()]
            blocks.append(np.vstack([folds, np.array(pairs)]))
        return complement_plan(self, n, np.vstack(blocks))

    def validate(self, plan):
        super().validate(plan)
        self.check_n(plan.n)
        K, step = self.K, self.per_repetition
        for r in range(self.repetitions):
            check_partition(self, plan, slice(r * step, r * step + K), K)
            folds = plan.test[r * step: r * step + K]
            pairs = np.array([folds[a] | folds[b] for a, b in self.pairs()])
            if np.any(plan.test[r * step + K: (r + 1) * step] != pairs):
                fail(self, "the pair splits must test folds a and b for a < b in lexicographic order")
        check_complement(self, plan)
