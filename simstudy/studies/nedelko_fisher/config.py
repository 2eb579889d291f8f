"""Settings of the nedelko_fisher study (Nedelko's Figure 3)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

from simstudy.studies.settings import StudyConfig, as_list, extent, fail, report

__all__ = ["NedelkoFisherConfig"]


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
    #: Which of several thresholds with the smallest training error Fisher's ERM threshold takes:
    #: "random" (a uniformly random minimiser), "midpoint" (closest to Fisher's midpoint),
    #: "first" (smallest), "last" (largest); see simstudy.learners.linear.fisher.
    tie_rule: str = "random"
    #: Also refit every sample under the other tie rules and report the paired differences
    #: (summary.md, tie_rule_sensitivity.csv).
    tie_rule_sensitivity: bool = True
    #: R_hat's bias correction (simstudy.inference.risk_bounds): "nedelko_worst_case",
    #: "vc_halfplane", or the oracle calibrations "oracle_mean_curve", "oracle_conditional_max".
    rhat_method: str = report("nedelko_worst_case")
    #: nedelko_worst_case: histogram cells standing in for the half-planes: "growth"
    #: (2^n = number of half-plane labellings of N points), "vc_dimension" (n = 3) or a number.
    rhat_cells: Any = report("growth")
    #: vc_halfplane: the bound holds with probability at least 1 - rhat_delta.
    rhat_delta: float = report(0.05)
    #: Oracle methods only: the family grid and calibration samples per grid point.
    rhat_grid: List[float] = extent(default_factory=lambda: [round(0.01 + 0.02 * i, 2) for i in range(25)])
    rhat_calibration_replicates: int = extent(4000)
    #: oracle_conditional_max: cells (k, R0) with fewer samples are not used.
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
        from simstudy.learners.linear.threshold import TIE_RULES

        if self.tie_rule not in TIE_RULES:
            fail("study.tie_rule", self.tie_rule, f"use one of {', '.join(TIE_RULES)}.")
        if not isinstance(self.tie_rule_sensitivity, bool):
            fail("study.tie_rule_sensitivity", self.tie_rule_sensitivity, "use true or false.")
        self._validate_rhat()

    def _validate_rhat(self) -> None:
        from simstudy.inference.risk_bounds import ORACLE_METHODS, RHAT_METHODS

        if self.rhat_method not in RHAT_METHODS:
            fail("study.rhat_method", self.rhat_method, f"use one of {', '.join(RHAT_METHODS)}.")
        cells = self.rhat_cells
        if cells not in ("growth", "vc_dimension") and (isinstance(cells, bool) or not isinstance(cells, (int, float))
                                                        or not 1 <= cells <= 30):
            fail("study.rhat_cells", cells, "use growth, vc_dimension or a number of cells between 1 and 30.")
        delta = self.rhat_delta
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
            fail("study.rhat_delta", delta, "the confidence parameter must lie in (0, 1), e.g. 0.05.")
        if isinstance(self.rhat_min_count, bool) or not isinstance(self.rhat_min_count, int) or self.rhat_min_count < 1:
            fail("study.rhat_min_count", self.rhat_min_count, "use a positive whole number, e.g. 30.")
        calibration = self.rhat_calibration_replicates
        if 0 < calibration < self.rhat_min_count:
            fail("study.rhat_calibration_replicates", calibration,
                 f"must be 0 (no calibration) or at least study.rhat_min_count={self.rhat_min_count}.")
        if self.rhat_method in ORACLE_METHODS and calibration == 0:
            fail("study.rhat_calibration_replicates", calibration,
                 f"study.rhat_method={self.rhat_method} is calibrated by simulation: give at least "
                 f"study.rhat_min_count={self.rhat_min_count} samples per study.rhat_grid point (default 4000).")
