"""Settings of the cv_variance study (Grandvalet & Bengio 2006, Table 2)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional

from simstudy.studies.settings import StudyConfig, extent, fail, report, validate_level, validate_sizes

__all__ = ["CVVarianceConfig"]

PAPER_ROWS = ("letter", "forest")
MU_TRUE = ("auto", "exact", "mean_cv")


@dataclass
class CVVarianceTargets:
    """Monte Carlo error targets of cv_variance: the half-width at 95% each measure must reach in
    every condition (null: no target); see :mod:`simstudy.studies.targets`."""

    #: Mean CV estimate mu_hat (1.96 SE).
    mu_hat: Optional[float] = None
    #: Between-block correlation rho (1.96 delta-method SE), e.g. 0.01 for one point.
    rho: Optional[float] = None
    #: theta = Var(mu_hat) (1.96 SE).
    theta: Optional[float] = None
    #: Relative bias of theta1 (1.96 delta-method SE).
    rel_bias_theta1: Optional[float] = None
    #: Relative bias of theta2 (1.96 delta-method SE).
    rel_bias_theta2: Optional[float] = None
    #: Relative bias of theta3 (1.96 delta-method SE).
    rel_bias_theta3: Optional[float] = None
    #: Relative bias of theta4 (1.96 delta-method SE).
    rel_bias_theta4: Optional[float] = None
    #: Relative bias of theta5 (1.96 delta-method SE).
    rel_bias_theta5: Optional[float] = None
    #: Type-I error of the t-tests (half the 95% Wilson interval, the widest over rho_hat).
    type1: Optional[float] = None


@dataclass
class CVVarianceConfig(StudyConfig):
    """Grandvalet & Bengio (2006): rho and the type-I error of CV t-tests (Table 2)."""

    name: str = "cv_variance"
    #: Training-set sizes n (any n >= 2K: folds of floor(n/K) or ceil(n/K) examples).
    sizes: List[int] = extent(default_factory=lambda: [20, 40, 80, 160])
    K: int = 10
    #: Replicates per condition; with targets, the cap per condition.
    replicates: int = extent(1000)
    #: Monte Carlo error targets, measure -> half-width at 95% (e.g. study.targets.rho=0.01): run in
    #: rounds until each is met in every condition (or the cap is reached).
    targets: CVVarianceTargets = extent(default_factory=CVVarianceTargets)
    #: With targets: the first round's replicates per condition and the step of every count.
    min_replicates: int = extent(200)
    seed: int = 2006
    #: Level of the two-sided t-tests.
    alpha: float = report(0.05)
    #: Assumed between-block correlations of the t-tests (eq. 9).
    rho_hats: List[float] = report(default_factory=lambda: [round(0.1 * i, 1) for i in range(10)])
    #: Compute each fold model's exact risk on the population (needs a population with an evaluation set).
    truth: bool = False
    #: H0 value of the t-tests: "auto" (exact mean risk when truth=true, else mean of mu_hat),
    #: "exact" or "mean_cv".
    mu_true: str = report("auto")
    #: Paper row to compare with in table2.md: "letter", "forest" or null.
    paper: Optional[str] = report(None)
    #: Loss of the residuals: zero_one, squared, absolute, log_loss or the import path of a function.
    loss: Any = "zero_one"

    def validate(self) -> None:
        K = self.K
        if isinstance(K, bool) or not isinstance(K, int) or K < 2:
            fail("study.K", K, "K-fold cross-validation needs K >= 2 (for example study.K=10).")
        validate_sizes(self.sizes, K, 2, "theta2/theta4 need a within-fold variance, i.e. folds of >= 2 examples")
        if isinstance(self.replicates, bool) or not isinstance(self.replicates, int) or self.replicates < 3:
            fail("study.replicates", self.replicates, "need at least 3 replicates to estimate Var(mu_hat).")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            fail("study.seed", self.seed, "use a non-negative integer seed, e.g. study.seed=2006.")
        validate_level(self.alpha)
        for r in self.rho_hats:
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 <= r < 1:
                fail("study.rho_hats", list(self.rho_hats), f"each rho_hat must lie in [0, 1); got {r!r}.")
        if self.mu_true not in MU_TRUE:
            fail("study.mu_true", self.mu_true, "use 'auto', 'exact' or 'mean_cv'.")
        if self.mu_true == "exact" and not self.truth:
            fail("study.mu_true", self.mu_true, "'exact' needs the fold models' exact errors: set study.truth=true.")
        if self.paper not in (None, *PAPER_ROWS):
            fail("study.paper", self.paper, "use 'letter', 'forest' or null.")
