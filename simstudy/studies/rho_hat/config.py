"""Settings of the rho_hat study: data-driven rho_hat against fixed rho_hat, CV CLT and nested CV."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

from simstudy.studies.settings import StudyConfig, extent, fail, report, validate_level, validate_sizes

__all__ = ["RhoHatConfig"]


def _check_int(name: str, value: Any, low: int, fix: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        fail(name, value, fix)


@dataclass
class RhoHatConfig(StudyConfig):
    """Size and power of K-fold CV tests with a data-driven rho_hat, beside rho_hat = 0 / 0.7,
    Nadeau-Bengio, the CV CLT and nested CV (H0: mu = the expected CV estimate at n)."""

    name: str = "rho_hat"
    #: Training-set sizes n (multiples of K, n >= 2K).
    sizes: List[int] = extent(default_factory=lambda: [20, 40, 80, 160, 400, 800, 2000])
    K: int = 10
    replicates: int = extent(400)
    seed: int = 2016
    #: Level of the two-sided tests.
    alpha: float = report(0.05)
    #: B: random splits of each training set into two disjoint halves for the subsample
    #: estimators (each split costs two K-fold CVs of n/2 points).
    splits: int = 5
    #: Nested CV (Bates, Hastie & Tibshirani) on the first this-many replicates of each n (0: none).
    nested_cv_replicates: int = 100
    #: Repetitions of nested CV (each costs K(K-1)/2 fits beyond the K-fold CV).
    nested_cv_repetitions: int = 1
    #: Power is the rejection rate of H0: mu = mu_true +- power_shift * sd(mu_hat) (both sides pooled).
    power_shift: float = report(2.0)
    #: Loss of the residuals: zero_one, squared, absolute, log_loss or an import path.
    loss: Any = "zero_one"

    def validate(self) -> None:
        _check_int("study.K", self.K, 3, "use at least 3 folds (nested CV needs K >= 3), e.g. study.K=10.")
        validate_sizes(self.sizes, self.K, 2, "nested CV needs m = n/K >= 2",
                       equal_folds="the fold statistics assume equal folds")
        _check_int("study.replicates", self.replicates, 3, "need at least 3 replicates (e.g. 400).")
        _check_int("study.seed", self.seed, 0, "use a non-negative integer seed, e.g. study.seed=2016.")
        validate_level(self.alpha)
        _check_int("study.splits", self.splits, 1, "use at least 1 split into halves (e.g. 5).")
        _check_int("study.nested_cv_replicates", self.nested_cv_replicates, 0, "use 0 (no nested CV) or more.")
        _check_int("study.nested_cv_repetitions", self.nested_cv_repetitions, 1, "use at least 1 repetition.")
        s = self.power_shift
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not s > 0:
            fail("study.power_shift", s, "use a positive shift in standard deviations of mu_hat, e.g. 2.0.")
