"""Settings of the nedelko_fisher study (Nedelko's Figure 3)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

from simstudy.studies.base import StudyConfig, as_list, extent, fail, report

__all__ = ["NedelkoFisherConfig", "RHAT_METHODS"]

RHAT_METHODS = ("mean_curve", "conditional_max")


@dataclass
class NedelkoFisherConfig(StudyConfig):
    """Nedelko: LOO vs K-fold vs empirical risk (and R_hat, .632, .632+) for Fisher's discriminant."""

    name: str = "nedelko_fisher"
    #: N: an integer or a list of integers (each a multiple of K).
    sample_size: Any = extent(default_factory=lambda: [20, 30, 50])
    #: R0 grid: a float or a list of floats in (0, 0.5).
    bayes_error: Any = extent(default_factory=lambda: [0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3,
                                                       0.35, 0.4, 0.45, 0.48])
    replicates: int = extent(10000)
    K: int = 5
    #: Bootstrap resamples for the .632 and .632+ estimates (0: skip them).
    bootstrap: int = 50
    seed: int = 2013
    #: R_hat: the family grid and samples per grid point used to calibrate the bias correction.
    rhat_grid: List[float] = extent(default_factory=lambda: [round(0.01 + 0.02 * i, 2) for i in range(25)])
    #: Calibration samples per family member for R_hat (0: skip R_hat).
    rhat_calibration_replicates: int = extent(4000)
    #: "mean_curve" or "conditional_max" (see simstudy.studies.nedelko_fisher.aggregate.optimism_table).
    rhat_method: str = report("mean_curve")
    rhat_min_count: int = report(30)

    def validate(self) -> None:
        K = self.K
        if isinstance(K, bool) or not isinstance(K, int) or K < 2:
            fail("study.K", K, "K-fold CV needs K >= 2 (Nedelko uses K=5).")
        sizes = as_list(self.sample_size)
        if not sizes:
            fail("study.sample_size", sizes, "give at least one sample size, e.g. study.sample_size=20.")
        for N in sizes:
            if isinstance(N, bool) or not isinstance(N, int) or N < 2 * K or N % K:
                fail("study.sample_size", sizes, f"each N must be an integer multiple of K={K} with N >= 2K (got {N!r}).")
        grid = as_list(self.bayes_error)
        if not grid:
            fail("study.bayes_error", grid, "give at least one Bayes error, e.g. study.bayes_error=[0.1,0.3].")
        for name, values in (("study.bayes_error", grid), ("study.rhat_grid", list(self.rhat_grid))):
            for r0 in values:
                if isinstance(r0, bool) or not isinstance(r0, (int, float)) or not 0 < r0 < 0.5:
                    fail(name, values, f"Bayes errors must lie strictly between 0 and 0.5 (got {r0!r}).")
        if isinstance(self.replicates, bool) or not isinstance(self.replicates, int) or self.replicates < 2:
            fail("study.replicates", self.replicates, "need at least 2 samples per point.")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            fail("study.seed", self.seed, "use a non-negative integer seed, e.g. study.seed=2013.")
        if not isinstance(self.bootstrap, int) or self.bootstrap < 0:
            fail("study.bootstrap", self.bootstrap, "use 0 (no bootstrap estimates) or a positive number of resamples.")
        if self.rhat_method not in RHAT_METHODS:
            fail("study.rhat_method", self.rhat_method, f"use one of {', '.join(RHAT_METHODS)}.")
        if 0 < self.rhat_calibration_replicates < self.rhat_min_count:
            fail("study.rhat_calibration_replicates", self.rhat_calibration_replicates,
                 f"must be 0 (no R_hat) or at least study.rhat_min_count={self.rhat_min_count}.")
